#!/usr/bin/env bash
# Sets up Phantora and runs every test: first the unit, integration, NCCL and reliability tests
# with the daemon and tools built under AddressSanitizer + UndefinedBehaviorSanitizer (the shim
# preloaded into the test programs stays uninstrumented), then the full suite (adding PyTorch
# and the fuzzer smoke tests) on the normal build. Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
# The PyTorch environment first, then the training frameworks' (layered on it): the PyTorch
# and framework tests register themselves when their environments exist.
scripts/setup-torch.sh
scripts/setup-frameworks.sh
scripts/setup.sh
export PATH=/usr/local/cuda/bin:$PATH
# As root (CI), the real-Slurm test must run, not skip (tests/cluster/slurm_check.py).
if [ "$(id -u)" = 0 ]; then export PHANTORA_REQUIRE_SLURM=1; fi

echo "== sanitizer build (ASan + UBSan): unit, integration, NCCL and reliability tests"
cmake -S . -B build-asan -DPHANTORA_SANITIZE=ON -DPHANTORA_BUILD_BENCH=OFF \
  -DPHANTORA_BUILD_FUZZERS=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)"
(cd build-asan && ctest -LE "pytorch|fuzz-smoke|slow" --output-on-failure -j"$(nproc)")

echo "== full test suite"
cd build
# "slow": the 10-run determinism check, run by hand (docs/reliability.md).
ctest -LE slow --output-on-failure -j"$(nproc)"
