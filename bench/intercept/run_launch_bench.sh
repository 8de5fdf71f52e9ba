#!/usr/bin/env bash
# Measures the per-launch cost a rank pays with the shim preloaded, for each --cpu-time mode.
# Usage: bench/intercept/run_launch_bench.sh [BUILD_DIR] [LAUNCHES_PER_ROUND] [ROUNDS] [BURST]
#   BUILD_DIR defaults to ./build; it must hold tools/phantora (and intercept/libphantora.so).
# Builds launch_bench.cu with nvcc into BUILD_DIR/bench/intercept if it is missing or stale.
# Prints one line per mode, in ns per call: a plain non-inlined function call; launches via
# cudaLaunchKernel and via <<<>>> in bursts of BURST (default 500; the shim's own cost, and the
# shim's 64 KiB batch send when a burst holds more than 64 KiB of records, 356 launches of 184
# bytes with their header; the daemon drains between bursts, untimed) and sustained
# (LAUNCHES_PER_ROUND in a row: once the socket buffer is full the rank runs at the daemon's
# pace). Target: under 1000 ns per launch.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:-build}" && pwd)"
launches="${2:-200000}"
rounds="${3:-5}"
burst="${4:-500}"
phantora="$build/tools/phantora"
[[ -x "$phantora" ]] || { echo "run_launch_bench.sh: $phantora not found; build the 'phantora' target" >&2; exit 2; }
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
bin="$build/bench/intercept/launch_bench"
mkdir -p "$(dirname "$bin")"
if [[ ! -x "$bin" || "$here/launch_bench.cu" -nt "$bin" ]]; then
  "$nvcc" -cudart shared -arch="${CUDA_ARCH:-sm_90}" -O2 -std=c++17 -o "$bin" "$here/launch_bench.cu"
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
printf '%-9s %10s %22s %22s\n' mode plain_call 'burst: launch / <<<>>>' 'sustained: launch / <<<>>>'
for mode in zero model measured; do
  result="$("$phantora" run --quiet --cpu-time "$mode" --gpus-per-host 1 --out "$out/$mode" -- \
    "$bin" "$launches" "$rounds" "$burst")"
  get() { awk -v k="$1" '$1 == k { print $2 }' <<<"$result"; }
  printf '%-9s %10s %22s %22s\n' "$mode" "$(get plain_call_ns)" \
    "$(get burst_cudaLaunchKernel_ns) / $(get burst_triple_chevron_ns)" \
    "$(get sustained_cudaLaunchKernel_ns) / $(get sustained_triple_chevron_ns)"
done
