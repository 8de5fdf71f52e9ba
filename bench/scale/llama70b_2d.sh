#!/usr/bin/env bash
# Llama-3-70B, FSDP2 x tensor parallel 8 (2-D), activation checkpointing, 1 sequence of 8,192
# tokens per data-parallel rank, on 2 live hosts x 8 H200 (DP 2 x TP 8) standing for 128 hosts
# (1,024 GPUs: DP 128 x TP 8) with --represent-dp 64 --dp-comms size:2, model CPU time.
# H200 rather than H100: the live slice shards the model over 16 GPUs, not 1,024, and its
# ~4.4 B parameters per GPU with fp32 Adam state (70 GB) need more than 80 GB (docs/scale.md,
# "Sharded state"). 16 live ranks take ~11 GB of host memory; 32 did not fit beside a build.
# Prints the table row for docs/performance.md ("Scale").
#
# Usage: bench/scale/llama70b_2d.sh [BUILD_DIR] [OUT_DIR] [REPLICAS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out=${2:-$root/runs/scale}
n=${3:-64}
venv=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
mkdir -p "$out"
dir=$out/llama70b_tp8_h200_x$n
python3 "$here/rank_memory.py" --interval 2 --json "$dir.mem.json" -- \
  "$build/tools/phantora" run --quiet --hosts 2 --gpus-per-host 8 --gpu h200 \
  --represent-dp "$n" --dp-comms size:2 --cpu-time model --timeout 3600 --out "$dir" -- \
  "$venv/bin/torchrun" --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d \
  --rdzv-endpoint localhost:29870 "$root/examples/gpt.py" --model llama3-70b --parallel fsdp \
  --tp 8 --batch-size 1 --activation-checkpointing --steps 3 >"$dir.log" 2>&1 ||
  { echo "failed; see $dir.log" >&2; exit 1; }
python3 - "$dir/report.json" "$dir.mem.json" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2])); n = int(sys.argv[3])
s = r["simulator"]
print(f"| {16 * n:,} | {2 * n} | {r['steps']['median_s'] * 1e3:,.1f} | {r['wall_time_s']:.1f} | "
      f"{s['cpu_s']:.1f} | {s['max_rss_bytes'] / 2**20:.0f} | {s['events']:,} | "
      f"{s['events_per_cpu_s']:,.0f} | {m['rank_pss_median_mib']:.0f} | "
      f"{max(g['peak_memory_bytes'] for g in r['gpus']) / 2**30:.1f} GiB |")
PY
