#!/usr/bin/env bash
# Llama-3-70B, FSDP2 x tensor parallel 8 (2-D), activation checkpointing, 1 sequence of 8,192
# tokens per data-parallel rank, on 4 live hosts x 8 H100 (DP 4 x TP 8) standing for 128 hosts
# (1,024 GPUs: DP 128 x TP 8) with --represent-dp 32 --dp-comms size:4, model CPU time.
# Prints the table row for docs/performance.md ("Scale").
#
# Usage: bench/scale/llama70b_2d.sh [BUILD_DIR] [OUT_DIR] [REPLICAS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out=${2:-$root/runs/scale}
n=${3:-32}
venv=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
mkdir -p "$out"
dir=$out/llama70b_tp8_x$n
python3 "$here/rank_memory.py" --interval 2 --json "$dir.mem.json" -- \
  "$build/tools/phantora" run --quiet --hosts 4 --gpus-per-host 8 --gpu h100 \
  --represent-dp "$n" --dp-comms size:4 --cpu-time model --timeout 3600 --out "$dir" -- \
  "$venv/bin/torchrun" --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d \
  --rdzv-endpoint localhost:29870 "$root/examples/gpt.py" --model llama3-70b --parallel fsdp \
  --tp 8 --batch-size 1 --activation-checkpointing --steps 3 >"$dir.log" 2>&1 ||
  { echo "failed; see $dir.log" >&2; exit 1; }
python3 - "$dir/report.json" "$dir.mem.json" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2])); n = int(sys.argv[3])
s = r["simulator"]
print(f"| {32 * n:,} | {4 * n} | {r['steps']['median_s'] * 1e3:,.1f} | {r['wall_time_s']:.1f} | "
      f"{s['cpu_s']:.1f} | {s['max_rss_bytes'] / 2**20:.0f} | {s['events']:,} | "
      f"{s['events_per_cpu_s']:,.0f} | {m['rank_pss_median_mib']:.0f} | "
      f"{max(g['peak_memory_bytes'] for g in r['gpus']) / 2**30:.1f} GiB |")
PY
