#!/usr/bin/env bash
# Sets up Phantora (build, and the cached PyTorch environment) and runs the built-in default
# job: examples/gpt.py, a 162M-parameter GPT trained with DDP for 5 steps, unmodified, under
# torchrun on a simulated cluster of 2 hosts x 2 H100. The script prints simulated step times,
# tokens/s and MFU; phantora prints its summary and writes runs/demo/{report,trace}.json.
set -euo pipefail
cd "$(dirname "$0")/.."
# The demo needs the one PyTorch environment it runs; the second (CUDA 12 torch, several GB) is
# for the tests (scripts/test.sh installs it).
PHANTORA_SKIP_TORCH_CU12=1 scripts/setup-torch.sh
scripts/setup.sh
VENV=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
build/tools/phantora run --hosts 2 --gpus-per-host 2 --gpu h100 --out runs/demo -- \
  "$VENV/bin/torchrun" --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d \
  --rdzv-endpoint localhost:29400 examples/gpt.py --model gpt-small --parallel ddp --steps 5
