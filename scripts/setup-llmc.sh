#!/usr/bin/env bash
# Builds the llm.c programs behind the step times llm.c's own scripts publish for 8X A100 80GB
# SXM, for examples/llmc/run.sh (docs/accuracy.md, "llm.c's GPT-2 and GPT-3 on 8 A100"):
# train_gpt2cu at the commit that added each statement, with cuDNN's flash attention (the
# scripts build `make train_gpt2cu USE_CUDNN=1`), NCCL and MPI, as its Makefile builds it on an
# A100 (its NVCC_FLAGS, compute capability 8.0), with two stated changes: the CUDA runtime
# linked shared (`-cudart shared`, which phantora needs; nvcc links it statically by default)
# and the cuDNN frontend headers of that spring (release v1.4.0, 2024-05-07) rather than
# whatever a clone of the day holds.
#
# Usage: scripts/setup-llmc.sh [NAME...]   (names of examples/llmc/scripts.txt; default: all)
#
#   LLMC_DIR             where the builds go (default ~/.cache/phantora): llmc-COMMIT/
#   LLMC_REPO            a clone of karpathy/llm.c holding the commits (default: cloned from
#                        https://github.com/karpathy/llm.c)
#   CUDNN_FRONTEND_REPO  a clone of NVIDIA/cudnn-frontend holding v1.4.0 (default: cloned from
#                        https://github.com/NVIDIA/cudnn-frontend)
#   NVCC                 (default /usr/local/cuda/bin/nvcc, else nvcc on PATH)
#
# Needs the CUDA toolkit with cuDNN and NCCL (as the tests do) and OpenMPI's headers and
# mpirun (Debian: apt-get install libopenmpi-dev openmpi-bin). Nothing built here is part of
# this repository; a build is reused while present.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=examples/name-table.sh
. examples/name-table.sh
llmc_table=examples/llmc/scripts.txt
parent=${LLMC_DIR:-$HOME/.cache/phantora}
names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(table_names "$llmc_table")
for name in "${names[@]}"; do
  [ -n "$(table_row "$llmc_table" "$name")" ] || {
    unknown_name setup-llmc "$llmc_table" "$name"
    exit 2
  }
done
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || {
  echo "setup-llmc: nvcc not found (set NVCC)" >&2; exit 1; }
cuda=$(cd "$(dirname "$(realpath "$nvcc")")/.." && pwd)
mpi_include=$(mpicc --showme:incdirs 2>/dev/null | awk '{print $1}') || true
mpi_libs=$(mpicc --showme:libdirs 2>/dev/null | awk '{print $1}') || true
if [ -z "$mpi_include" ] || ! command -v mpirun > /dev/null; then
  echo "setup-llmc: OpenMPI is missing (Debian: apt-get install libopenmpi-dev openmpi-bin)" >&2
  exit 1
fi
for need in include/cudnn.h include/nccl.h; do
  [ -e "$cuda/$need" ] || { echo "setup-llmc: $cuda/$need is missing" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=${LLMC_REPO:-}

frontend=$parent/cudnn-frontend-v1.4.0
if [ ! -f "$frontend/include/cudnn_frontend.h" ]; then
  fe_repo=${CUDNN_FRONTEND_REPO:-}
  if [ -z "$fe_repo" ]; then
    git clone -q --depth 1 --branch v1.4.0 https://github.com/NVIDIA/cudnn-frontend \
      "$tmp/cudnn-frontend"
    fe_repo=$tmp/cudnn-frontend
  fi
  rm -rf "$frontend.partial" && mkdir -p "$frontend.partial"
  git -C "$fe_repo" archive v1.4.0 include | tar -x -C "$frontend.partial"
  mv "$frontend.partial" "$frontend"
fi

for name in "${names[@]}"; do
  read -r commit _ _ < <(table_row "$llmc_table" "$name")
  dest=$parent/llmc-$commit
  [ -x "$dest/train_gpt2cu" ] && continue
  if [ -z "$repo" ]; then
    git clone -q https://github.com/karpathy/llm.c "$tmp/llm.c"
    repo=$tmp/llm.c
  fi
  rm -rf "$dest.partial" && mkdir -p "$dest.partial"
  git -C "$repo" archive "$commit" | tar -x -C "$dest.partial"
  (
    cd "$dest.partial"
    # The Makefile's own flags of that commit (optimisation, fast math, the C++ standard).
    read -r -a flags < <(sed -n 's/^NVCC_FLAGS = //p' Makefile)
    flags+=(-cudart shared --generate-code 'arch=compute_80,code=[compute_80,sm_80]'
            -DENABLE_CUDNN -DMULTI_GPU -I"$frontend/include" -I"$mpi_include")
    attention=cudnn_att.cpp
    [ -f "$attention" ] || attention=llmc/cudnn_att.cpp
    echo "setup-llmc: building $name's train_gpt2cu ($commit; cuDNN attention takes minutes)"
    "$nvcc" -c "${flags[@]}" "$attention" -o cudnn_att.o
    "$nvcc" "${flags[@]}" train_gpt2.cu cudnn_att.o -lcublas -lcublasLt -lcudnn \
      -L"$mpi_libs" -lmpi -lnccl -o train_gpt2cu
  )
  mv "$dest.partial" "$dest"
  echo "setup-llmc: $name ($commit) in $dest"
done
