#!/usr/bin/env bash
# Llama-3-8B, FSDP2 + activation checkpointing, batch 2 x 8192 tokens per GPU, on 8 live H100
# standing for 1, 16 and 128 hosts (--represent-dp), model CPU time. For each: simulated step
# time, wall time, phantora's own CPU and memory, events, and the ranks' memory
# (bench/scale/rank_memory.py). Figures go to docs/performance.md ("Scale").
#
# Usage: bench/scale/llama8b_represent.sh [BUILD_DIR] [OUT_DIR] [REPLICAS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out=${2:-$root/runs/scale}
shift $(( $# > 2 ? 2 : $# )) || true
replicas=("$@")
[ ${#replicas[@]} -gt 0 ] || replicas=(1 16 128)
venv=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
mkdir -p "$out"
port=29830
printf '| GPUs | hosts | step (ms) | wall (s) | phantora CPU (s) | phantora RSS (MiB) | events | events/s (phantora CPU) | rank PSS (MiB, median) |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for n in "${replicas[@]}"; do
  port=$((port + 1))
  dir=$out/llama8b_x$n
  python3 "$here/rank_memory.py" --interval 1 --json "$dir.mem.json" -- \
    "$build/tools/phantora" run --quiet --hosts 1 --gpus-per-host 8 --gpu h100 \
    --represent-dp "$n" --cpu-time model --timeout 1800 --out "$dir" -- \
    "$venv/bin/torchrun" --nnodes 1 --nproc-per-node 8 --rdzv-backend c10d \
    --rdzv-endpoint "localhost:$port" "$root/examples/gpt.py" --model llama3-8b \
    --parallel fsdp --batch-size 2 --activation-checkpointing --steps 4 >"$dir.log" 2>&1 ||
    { echo "x$n failed; see $dir.log" >&2; continue; }
  python3 - "$dir/report.json" "$dir.mem.json" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2])); n = int(sys.argv[3])
s = r["simulator"]
print(f"| {8 * n:,} | {n} | {r['steps']['median_s'] * 1e3:,.1f} | {r['wall_time_s']:.1f} | "
      f"{s['cpu_s']:.1f} | {s['max_rss_bytes'] / 2**20:.0f} | {s['events']:,} | "
      f"{s['events_per_cpu_s']:,.0f} | {m['rank_pss_median_mib']:.0f} |")
PY
done
