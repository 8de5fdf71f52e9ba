#!/usr/bin/env bash
# Sets up Phantora and runs the built-in default job: the CUDA example examples/cuda/overlap.cu
# (built with nvcc, unmodified) on a simulated cluster of 2 hosts x 4 H100, writing its report
# and trace into runs/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p build/examples
nvcc -cudart shared -O2 -o build/examples/overlap examples/cuda/overlap.cu
build/tools/phantora run --hosts 2 --gpus-per-host 4 --gpu h100 --out runs/demo -- build/examples/overlap
