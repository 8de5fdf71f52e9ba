#!/usr/bin/env bash
# One of llm.c's published GPT-2/GPT-3 training scripts under `phantora run`, on the part the
# script states (8X A100 80GB SXM: the `a100-80gb` preset, one DGX A100 host) and at the commit
# that published its step time (docs/accuracy.md, "llm.c's GPT-2 and GPT-3 on 8 A100"). The
# script's own train_gpt2cu arguments are read from the script at that commit and run as it runs
# them (`mpirun -np 8`), with three stated changes: STEPS steps (-x), token shards of
# pseudo-random GPT-2 ids instead of FineWeb's (-i, -j: examples/modded-nanogpt/
# make_fineweb_shards.py writes the format both programs read, llm.c's, under FineWeb's file
# names, which llm.c's patterns glob), and no log directory, so no checkpoints and no resuming
# (-o, -n, -y). The rest stays, validation and sampling included: in a run of a few steps they
# happen before the first step and after the last, outside the timed steps, and HellaSwag, whose
# file is missing, is skipped with a message.
#
# Usage: examples/llmc/run.sh NAME   (a name of scripts.txt beside this script; built by
#        scripts/setup-llmc.sh NAME)
#
# train_gpt2cu prints each step's time as the script's published figure measures it
# (`step N/STEPS | ... | T ms | ...`, rank 0); compare a step after the first with the figure
# scripts.txt quotes.
#
# Environment: PHANTORA (default build/tools/phantora), GPU (default a100-80gb), OUT (default
# runs/llmc-NAME), STEPS (default 6), PHANTORA_ARGS (more `phantora run` options), LLMC_DIR
# (default ~/.cache/phantora).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=examples/name-table.sh
. "$here/../name-table.sh"
llmc_table=$here/scripts.txt
name=${1:?usage: $0 NAME (a name of $llmc_table)}
read -r commit script published < <(table_row "$llmc_table" "$name") || {
  unknown_name run.sh "$llmc_table" "$name"
  exit 2
}
parent=${LLMC_DIR:-$HOME/.cache/phantora}
src=$parent/llmc-$commit
if [ ! -x "$src/train_gpt2cu" ]; then
  echo "run.sh: $src/train_gpt2cu is missing: run scripts/setup-llmc.sh $name first" >&2
  exit 1
fi
# The arguments of the script's train_gpt2cu: the lines after `./train_gpt2cu \` up to the
# first that does not continue.
mapfile -t published_args < <(awk '
  /\.\/train_gpt2cu \\$/ { on = 1; next }
  on { line = $0; more = sub(/\\$/, "", line); printf "%s\n", line; if (!more) exit }' \
  "$src/$script" | xargs -n 1 printf '%s\n')
if [ ${#published_args[@]} -eq 0 ]; then
  echo "run.sh: no train_gpt2cu arguments found in $src/$script" >&2
  exit 1
fi
args=()
for ((i = 0; i < ${#published_args[@]}; i += 2)); do
  case ${published_args[i]} in
    -i | -j | -o | -n | -y | -x) ;;  # the stated changes, below
    *) args+=("${published_args[i]}" "${published_args[i + 1]}") ;;
  esac
done
steps=${STEPS:-6}
phantora=$(realpath "${PHANTORA:-$repo/build/tools/phantora}")
out=$(realpath -m "${OUT:-$repo/runs/llmc-$name}")
work=$out/work
mkdir -p "$work"
shards=$parent/llmc-shards
python3 "$here/../modded-nanogpt/make_fineweb_shards.py" "$shards"
args+=(-i "$shards/fineweb_train_*.bin" -j "$shards/fineweb_val_*.bin" -x "$steps")
echo "run.sh: $name, published ${published} on 8X A100 80GB SXM; train_gpt2cu ${args[*]}"
cd "$work"
# OpenMPI refuses to start as root unless told it may (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2086
exec "$phantora" run --hosts 1 --gpus-per-host 8 --gpu "${GPU:-a100-80gb}" --cpu-time model \
  --out "$out" ${PHANTORA_ARGS:-} -- \
  mpirun --oversubscribe -np 8 "$src/train_gpt2cu" "${args[@]}"
