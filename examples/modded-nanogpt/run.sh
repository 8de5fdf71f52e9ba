#!/usr/bin/env bash
# A modded-nanogpt speedrun record's own training script under `phantora run`, on the record's
# part (8 x H100 80GB HBM3 at 700 W: the `h100` preset) and torch release: the program a
# published step time measured (docs/accuracy.md, "modded-nanogpt"). The script is run as the
# log printed it, with three stated changes made to a copy: STEPS training steps instead of the
# record's thousands (the learning-rate schedule follows, which costs no time), one validation
# batch instead of 20 (validation is outside the timed training time), and the data read from
# token shards made by make_fineweb_shards.py instead of FineWeb.
#
# Usage: examples/modded-nanogpt/run.sh RECORD   (a name of records.txt beside this script:
#        the records of the project's README table that ran a PyTorch release, and the AdamW
#        run of the optimizer comparison of 2024-10-29; set up by
#        scripts/setup-modded-nanogpt.sh RECORD)
#
# The script prints its own timing as the record's log does: `step:N/STEPS ... train_time:...
# step_avg:...`, timed from step 10 (the script leaves the first ten out). Compare the last
# line's step_avg with the record's.
#
# Environment: PHANTORA (default build/tools/phantora), GPU (default h100), OUT (default
# runs/modded-nanogpt-RECORD), STEPS (default 20), PHANTORA_ARGS (more
# `phantora run` options), MODDED_NANOGPT_DIR (default ~/.cache/phantora).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=examples/name-table.sh
. "$here/../name-table.sh"
records_table=$here/records.txt
record=${1:?usage: $0 RECORD (a name of $records_table)}
read -r _ _ version < <(table_row "$records_table" "$record") || {
  unknown_name run.sh "$records_table" "$record"
  exit 2
}
parent=${MODDED_NANOGPT_DIR:-$HOME/.cache/phantora}
src=$parent/modded-nanogpt-$record
venv=$parent/modded-nanogpt-$version-venv
for need in "$venv/bin/python" "$src/train_gpt2.py"; do
  if [ ! -e "$need" ]; then
    echo "run.sh: $need is missing: run scripts/setup-modded-nanogpt.sh $record first" >&2
    exit 1
  fi
done
steps=${STEPS:-20}
if [ "$steps" -le 11 ]; then
  echo "run.sh: STEPS must be above 11 (the script times steps from 10 on)" >&2
  exit 2
fi
phantora=$(realpath "${PHANTORA:-$repo/build/tools/phantora}")
out=$(realpath -m "${OUT:-$repo/runs/modded-nanogpt-$record}")
work=$out/work
mkdir -p "$work/data"
python3 "$here/make_fineweb_shards.py" "$parent/modded-nanogpt-shards"
ln -sfn "$parent/modded-nanogpt-shards" "$work/data/fineweb10B"
# The stated changes, each to one line of the Hyperparameters the script defines.
sed -e "s/^\(    num_iterations : int = \)[0-9]*/\1$steps/" \
    -e "s/^\(    val_tokens : int = \)[0-9]*/\1524288/" \
    "$src/train_gpt2.py" > "$work/train_gpt2.py"
for changed in "num_iterations : int = $steps" "val_tokens : int = 524288"; do
  grep -q "$changed" "$work/train_gpt2.py" || {
    echo "run.sh: could not set '$changed' in $src/train_gpt2.py" >&2; exit 1; }
done
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-1}
# inductor's cache for this torch release kept apart from the others'
cache=$parent/torchinductor-modded-nanogpt-$version
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$cache}
cd "$work"
# shellcheck disable=SC2086
exec "$phantora" run --hosts 1 --gpus-per-host 8 --gpu "${GPU:-h100}" --cpu-time model \
  --out "$out" ${PHANTORA_ARGS:-} -- \
  "$venv/bin/python" -m torch.distributed.run --standalone --nproc-per-node 8 train_gpt2.py
