#!/usr/bin/env bash
# TorchTitan as it was when it published a benchmark, on the torch release of the day, under
# `phantora run`: the program a published figure measured, not TorchTitan 0.3's rewrite of it
# (docs/frameworks/torchtitan.md, "The published programs"). Each program runs its own Llama 3
# 8B configuration file, unmodified, with command-line overrides for what the publication states,
# a local tokenizer and dataset, a few steps, and no profiler, TensorBoard or checkpoints.
#
# Usage: examples/torchtitan/published/run.sh PROGRAM [more TorchTitan options...]
#
#   2024-12   pytorch/torchtitan commit 9dec370 (2024-12-26) on torch 2.6.0: the program of
#             benchmarks/llama3_h100_202412_torchtitan.md (Tables 1 and 3: local batch 2,
#             selective op AC) on its part, h100-96gb-500w. --training.compile: "+ torch.compile"
#             (each transformer block compiled); PHANTORA_ARGS="--represent-dp 16": 128 GPUs.
#   2025-03   commit 986f680 (2025-03-20, pull request #887, "Enable FlexAttention for llama
#             model") on torch 2.7.0: its llama3_8b.toml (local batch 1, selective op AC, SDPA)
#             on a100-80gb-330w, Meta's A100 board, which the logs' 79.15 GiB capacity and
#             A100-fallback MFU point at (docs/accuracy.md; GPU=a100-80gb for the 400 W part).
#
# Environment: PHANTORA (default build/tools/phantora), GPU (instead of the program's part),
# HOSTS x GPUS (default 1 x 8), OUT (default runs/torchtitan-PROGRAM), PORT (default 29950),
# STEPS (default 3), PHANTORA_ARGS (more `phantora run` options), ASSETS (tokenizer and dataset,
# default ~/.cache/phantora/torchtitan-assets), TORCHTITAN_PUBLISHED_DIR (where
# scripts/setup-torchtitan-published.sh put the sources and environments, default
# ~/.cache/phantora).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
program=${1:?usage: $0 PROGRAM (2024-12 or 2025-03) [TorchTitan options...]}
shift
case $program in
  # commit, entry point, configuration file, default part, overrides the publication states
  2024-12) commit=9dec370 entry=train.py config=train_configs/llama3_8b.toml gpu=h100-96gb-500w
           stated=(--training.batch_size 2) ;;
  2025-03) commit=986f680 entry=torchtitan/train.py
           config=torchtitan/models/llama/train_configs/llama3_8b.toml gpu=a100-80gb-330w stated=() ;;
  *) echo "run.sh: unknown program '$program' (2024-12 or 2025-03; see the header of $0)" >&2
     exit 2 ;;
esac
parent=${TORCHTITAN_PUBLISHED_DIR:-$HOME/.cache/phantora}
venv=$parent/torchtitan-$program-venv
src=$parent/torchtitan-$commit
assets=${ASSETS:-$HOME/.cache/phantora/torchtitan-assets}
phantora=$(realpath "${PHANTORA:-$repo/build/tools/phantora}")
out=$(realpath -m "${OUT:-$repo/runs/torchtitan-$program}")
hosts=${HOSTS:-1} gpus=${GPUS:-8}
for need in "$venv/bin/python" "$src/$entry"; do
  if [ ! -e "$need" ]; then
    echo "run.sh: $need is missing: run scripts/setup-torchtitan-published.sh $program first" >&2
    exit 1
  fi
done
"$venv/bin/python" "$repo/examples/torchtitan/make_assets.py" "$assets"
"$venv/bin/python" "$here/make_tiktoken_model.py" "$assets/tiktoken/tokenizer.model"

export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1
# TorchTitan's launch script of both dates (run_llama_train.sh, run_train.sh) sets this
export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF-expandable_segments:True}
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-1}
# inductor's cache for each torch release kept apart from the others'
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$parent/torchinductor-$program}
# the entry point imports torchtitan from the source tree
export PYTHONPATH=$src${PYTHONPATH:+:$PYTHONPATH}
cd "$src"
# A boolean the configuration file sets is flipped by naming it (TorchTitan's config_manager of
# that time): --profiling.enable_profiling and --metrics.enable_tensorboard turn them off.
# shellcheck disable=SC2086
exec "$phantora" run --hosts "$hosts" --gpus-per-host "$gpus" --gpu "${GPU:-$gpu}" \
  --cpu-time model --out "$out" ${PHANTORA_ARGS:-} -- \
  "$venv/bin/python" -m torch.distributed.run --nnodes "$hosts" --nproc-per-node "$gpus" \
  --rdzv-backend c10d --rdzv-endpoint "localhost:${PORT:-29950}" \
  "$entry" --job.config_file "$config" --job.dump_folder "$out/dump" "${stated[@]}" \
  --training.steps "${STEPS:-3}" --training.dataset c4_test --training.dataset_path "$assets/c4_test" \
  --model.tokenizer_path "$assets/tiktoken/tokenizer.model" --metrics.log_freq 1 \
  --profiling.enable_profiling --metrics.enable_tensorboard "$@"
