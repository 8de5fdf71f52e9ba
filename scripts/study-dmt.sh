#!/usr/bin/env bash
# The DMT study (docs/studies/dmt.md): DLRM-DCNv2 (examples/dlrm.py) with table-wise and DMT
# sharding on 1, 2 and 4 hosts of 8 H100, with 400 Gb/s NICs (48.5 GB/s effective, the dgx-h100
# preset) and 100 Gb/s NICs (12.1 GB/s), deterministic host time. Writes runs/study-dmt/
# (summary.csv, summary.md, index.html, PNG charts, each point's run) and
# runs/study-dmt/links.md (bytes on the network and on NVLink per step, from links.csv).
# About 15 minutes on a 2-core machine (with the uncompressed DMT variant below); 8 and 16 hosts need more memory than 24 GiB for their
# 64-128 Python ranks (docs/studies/dmt.md, "Limits").
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
scripts/setup.sh
VENV=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
OUT=${1:-runs/study-dmt}
STEPS=4
rc=0
build/tools/phantora sweep --hosts 1,2,4 --gpus-per-host 8 --gpu h100 \
  --nic-gbytes-per-s 48.5,12.1 --var sharding=table-wise,dmt --cpu-time model \
  --items-per-step '{gpus}*2048' --items-name samples --out "$OUT" -- \
  "$VENV/bin/torchrun" --nnodes {hosts} --nproc-per-node {gpus_per_host} --rdzv-backend c10d \
  --rdzv-endpoint localhost:{port} examples/dlrm.py --sharding {sharding} --steps $STEPS || rc=$?
python3 scripts/study_dmt_links.py "$OUT" $STEPS > "$OUT/links.md"
cat "$OUT/links.md"
# DMT without compression (c = 1): separates the towers' effect on communication from the
# tower module's smaller interaction layer.
build/tools/phantora sweep --hosts 1,2,4 --gpus-per-host 8 --gpu h100 \
  --nic-gbytes-per-s 48.5,12.1 --cpu-time model \
  --items-per-step '{gpus}*2048' --items-name samples --out "$OUT/dmt-c1" -- \
  "$VENV/bin/torchrun" --nnodes {hosts} --nproc-per-node {gpus_per_host} --rdzv-backend c10d \
  --rdzv-endpoint localhost:{port} examples/dlrm.py --sharding dmt --compression 1 \
  --steps $STEPS || rc=$?
python3 scripts/study_dmt_links.py "$OUT/dmt-c1" $STEPS > "$OUT/dmt-c1/links.md"
cat "$OUT/dmt-c1/links.md"
exit $rc
