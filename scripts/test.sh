#!/usr/bin/env bash
# Sets up Phantora and runs every test: the full suite (unit, integration, end-to-end) on the
# normal build, then the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
# Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
# The PyTorch environment first: the PyTorch tests register themselves when it exists.
scripts/setup-torch.sh
scripts/setup.sh
export PATH=/usr/local/cuda/bin:$PATH

echo "== sanitizer build (ASan + UBSan) of the unit tests"
cmake -S . -B build-asan -DPHANTORA_SANITIZE=ON -DPHANTORA_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)"
(cd build-asan && ctest -LE "integration|pytorch|nccl" --output-on-failure -j"$(nproc)")

echo "== full test suite"
cd build
ctest --output-on-failure -j"$(nproc)"
