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

# What each build registered (<build>/tests/suites.txt, docs/testing.md). Under CI=true the
# configuration has already failed if a suite is missing; this says which ones run.
print_suites() {
  echo "== test suites of $1 ($(cd "$1" && ctest -N | tail -1 | sed 's/^ *//'))"
  awk -F'\t' '{ printf "  %-16s %s%s\n", $1, $2, ($3 == "" ? "" : ": " $3) }' "$1/tests/suites.txt"
}

echo "== sanitizer build (ASan + UBSan): unit, integration, NCCL and reliability tests"
cmake -S . -B build-asan -DPHANTORA_SANITIZE=ON -DPHANTORA_BUILD_BENCH=OFF \
  -DPHANTORA_BUILD_FUZZERS=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)"
print_suites build-asan
(cd build-asan && ctest -LE "pytorch|fuzz-smoke|slow" --output-on-failure -j"$(nproc)")

print_suites build
echo "== full test suite"
cd build
# "slow": the 10-run determinism check, run by hand (docs/reliability.md).
ctest -LE slow --output-on-failure -j"$(nproc)"
