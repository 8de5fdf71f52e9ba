#!/usr/bin/env bash
# TorchTitan's own Llama 3 and DeepSeek V3 configurations (torchtitan.models.*.config_registry),
# unmodified, under `phantora run`; each preset below is a configuration name plus TorchTitan
# command-line options (TorchTitan 0.3 configures jobs this way: --module/--config pick a Python
# config function, --section.key options override it). docs/frameworks/torchtitan.md explains
# them.
#
# Usage: examples/torchtitan/run.sh PRESET [more TorchTitan options...]
#
#   debug-fsdp      debug model, FSDP2 over 2 hosts x 2 H100, FlexAttention (Triton)
#   debug-fsdp-tp   debug model, FSDP2 2 x TP 2 (sequence parallel), 2 hosts x 2 H100
#   debug-pp        debug model, PP 2 (1F1B, 8 microbatches) x FSDP2 2, full AC, 2 x 2 H100
#   debug-cp        debug model, context parallelism 2 (inside a host) x FSDP2 2, 2 x 2 H100
#                   (FlexAttention: K/V all-gathered over the CP group)
#   debug-moe       DeepSeek V3 debug model (MoE: 8 experts, top 3, 5 MoE layers), FSDP2 over
#                   2 x 2 H100, no expert parallelism
#   debug-moe-ep    the same with expert parallelism 2 (inside a host) x FSDP2: phantora supplies
#                   the per-expert token counts, balanced; IMBALANCE=s (phantora run
#                   --moe-imbalance) skews them (docs/frameworks/torchtitan.md)
#   llama3-8b       Llama 3 8B, FSDP2, local batch 2 x 8192, selective AC, 1 host x 8 H100
#   llama2-13b      Llama 2 13B (llama2_13b.py), FSDP2, local batch 2 x 4096, selective AC,
#                   1 host x 8 A100 80 GB: TorchTitan's published A100 table of 2024
#   llama3-70b      Llama 3 70B, TP 8 x FSDP2 2, local batch 8 x 8192, full AC, 2 hosts x 8 H100
#
# Environment: PHANTORA (default build/tools/phantora), GPU (phantora's --gpu instead of the
# preset's h100, e.g. h100-500w: the 500 W limit of TorchTitan's published H100 runs, docs/gpus.md),
# OUT (default runs/torchtitan-PRESET),
# PORT (rendezvous, default 29940), STEPS (default 4), IMBALANCE (debug-moe-ep: phantora run's
# --moe-imbalance, 0 = balanced), PHANTORA_ARGS (more `phantora run`
# options, e.g. "--represent-dp 16"), AC (the activation-checkpointing sub-command, which
# TorchTitan's parser wants last: none, selective, full), TORCHTITAN_VENV (default ~/.cache/phantora/torchtitan-venv,
# made by scripts/setup-frameworks.sh torchtitan), ASSETS (tokenizer and dataset, default
# ~/.cache/phantora/torchtitan-assets, made here by make_assets.py on first use).
set -euo pipefail
cd "$(dirname "$0")/../.."
preset=${1:?usage: $0 PRESET [TorchTitan options...]}
shift
venv=${TORCHTITAN_VENV:-$HOME/.cache/phantora/torchtitan-venv}
python=$venv/bin/python
assets=${ASSETS:-$HOME/.cache/phantora/torchtitan-assets}
phantora=${PHANTORA:-build/tools/phantora}
out=${OUT:-runs/torchtitan-$preset}
port=${PORT:-29940}
steps=${STEPS:-4}
"$python" examples/torchtitan/make_assets.py "$assets"

# Every preset: local tokenizer and dataset (no hub), no checkpoints, no profiler, no
# TensorBoard, plain log lines; CUDA graphs off (TorchTitan 0.3 captures forward+backward in a
# CUDA graph by default, and NCCL calls inside a capture are not simulated).
common=(--hf-assets-path "$assets/tokenizer" --dataloader.dataset c4_test
        --dataloader.dataset-path "$assets/c4_test" --training.steps "$steps"
        --checkpoint.no-enable --profiler.no-enable-profiling --metrics.no-enable-tensorboard
        --metrics.log-freq 1 --metrics.disable-color-printing --training.disable-cuda-graphs
        --dump-folder "$out/dump")
module=llama3
case $preset in
  debug-fsdp)    hosts=2 gpus=2 gpu=h100 config=llama3_debugmodel ac=none
                 opts=() ;;
  debug-fsdp-tp) hosts=2 gpus=2 gpu=h100 config=llama3_debugmodel ac=none
                 opts=(--parallelism.tensor-parallel-degree 2) ;;
  debug-pp)      hosts=2 gpus=2 gpu=h100 config=llama3_debugmodel ac=full
                 opts=(--parallelism.pipeline-parallel-degree 2
                       --parallelism.pipeline-parallel-schedule 1F1B
                       --parallelism.pipeline-parallel-microbatch-size 1) ;;
  debug-cp)      hosts=2 gpus=2 gpu=h100 config=llama3_debugmodel ac=none
                 opts=(--parallelism.context-parallel-degree 2) ;;
  debug-moe)     hosts=2 gpus=2 gpu=h100 module=deepseek_v3 config=deepseek_v3_debugmodel ac=none
                 opts=() ;;
  debug-moe-ep)  hosts=2 gpus=2 gpu=h100 module=deepseek_v3 config=deepseek_v3_debugmodel ac=none
                 PHANTORA_ARGS="--moe-imbalance ${IMBALANCE:-0} ${PHANTORA_ARGS:-}"
                 opts=(--parallelism.expert-parallel-degree 2) ;;
  llama3-8b)     hosts=1 gpus=8 gpu=h100 config=llama3_8b ac=selective
                 opts=(--training.local-batch-size 2) ;;
  llama2-13b)    hosts=1 gpus=8 gpu=a100-80gb module=examples.torchtitan.llama2_13b config=llama2_13b
                 ac=selective opts=() ;;
  llama3-70b)    hosts=2 gpus=8 gpu=h100 config=llama3_70b ac=full
                 opts=(--parallelism.tensor-parallel-degree 8) ;;
  *) echo "run.sh: unknown preset '$preset' (see the header of $0)" >&2; exit 2 ;;
esac

export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1
# inductor compiles FlexAttention's kernels in each rank's own process, not in a worker pool
# per rank (a pool per rank overloads a small machine)
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-1}
# compiled kernels are kept with phantora's other caches (inductor's default is under /tmp)
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$HOME/.cache/phantora/torchinductor}
# shellcheck disable=SC2086
exec "$phantora" run --hosts "$hosts" --gpus-per-host "$gpus" --gpu "${GPU:-$gpu}" --cpu-time model \
  --out "$out" ${PHANTORA_ARGS:-} -- \
  "$python" -m torch.distributed.run --nnodes "$hosts" --nproc-per-node "$gpus" \
  --rdzv-backend c10d --rdzv-endpoint "localhost:$port" \
  -m torchtitan.train --module "$module" --config "$config" "${common[@]}" "${opts[@]}" "$@" \
  "activation-checkpoint:${AC:-$ac}"
