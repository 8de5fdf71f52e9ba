#!/usr/bin/env bash
# Llama-3-70B on 1,024 simulated GPUs through --represent-dp: a live slice of H hosts x 8 GPUs
# (FSDP2 x tensor parallel x pipeline parallel, examples/gpt.py, activation checkpointing, model
# CPU time) standing for N copies of itself. Prints one table row for docs/performance.md
# ("Scale"). H200 rather than H100: the live slice shards the model over its own 16 GPUs, not
# over 1,024, and that state (~70 GB per GPU) needs more than an H100's 80 GB (docs/scale.md,
# "Sharded state"). 16 live ranks take ~11 GB of host memory. Expandable segments, as one would
# set on the real cluster: without them the 3-D run's pipeline buffers fragment PyTorch's cache
# (41.8 GiB reserved but unallocated) and step 2 raises a real out-of-memory error.
#
#   bench/scale/llama70b.sh [BUILD_DIR] [OUT_DIR] 2d   # TP 8 x DP 2 live -> TP 8 x DP 128
#   bench/scale/llama70b.sh [BUILD_DIR] [OUT_DIR] 3d   # TP 4 x PP 2 x DP 2 -> x DP 128
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out=${2:-$root/runs/scale}
mode=${3:-3d}
venv=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
hosts=2 replicas=64
case $mode in
  2d) parallel=(--tp 8 --batch-size 1) port=29870 ;;
  3d) parallel=(--tp 4 --pp 2 --batch-size 8 --microbatches 8) port=29871 ;;
  *) echo "mode must be 2d or 3d" >&2; exit 2 ;;
esac
mkdir -p "$out"
dir=$out/llama70b_${mode}_x$replicas
# The live data-parallel size is 2 in both layouts: its communicators are the 2-rank ones.
python3 "$here/rank_memory.py" --interval 2 --json "$dir.mem.json" -- \
  "$build/tools/phantora" run --quiet --hosts "$hosts" --gpus-per-host 8 --gpu h200 \
  --represent-dp "$replicas" --dp-comms size:2 --cpu-time model --timeout 3600 --out "$dir" -- \
  env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  "$venv/bin/torchrun" --nnodes "$hosts" --nproc-per-node 8 --rdzv-backend c10d \
  --rdzv-endpoint "localhost:$port" "$root/examples/gpt.py" --model llama3-70b --parallel fsdp \
  "${parallel[@]}" --activation-checkpointing --steps 3 >"$dir.log" 2>&1 ||
  { echo "failed; see $dir.log" >&2; exit 1; }
python3 - "$dir/report.json" "$dir.mem.json" "$mode" "${parallel[*]}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
s, rep = r["simulator"], r["cluster"]["represented"]
peak = max(g["peak_memory_bytes"] for g in r["gpus"]) / 2**30
print(f"| {sys.argv[3]}: {sys.argv[4]} | {rep['gpus']:,} | {r['steps']['median_s'] * 1e3:,.1f} | "
      f"{r['wall_time_s']:.1f} | {s['cpu_s']:.1f} | {s['max_rss_bytes'] / 2**20:.0f} | "
      f"{s['events']:,} | {m['rank_pss_median_mib']:.0f} | {peak:.1f} GiB |")
PY
