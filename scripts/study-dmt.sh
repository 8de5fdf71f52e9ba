#!/usr/bin/env bash
# The DMT study (docs/studies/dmt.md): DLRM-DCNv2 (examples/dlrm.py) with table-wise and DMT
# sharding on 1, 2, 4, 8 and 16 hosts of 8 H100, with 400 Gb/s NICs (48.5 GB/s effective, the
# dgx-h100 preset) and 100 Gb/s NICs (12.1 GB/s), deterministic host time. Writes
# runs/study-dmt/ (summary.csv, summary.md, index.html, PNG charts, each point's run) and
# runs/study-dmt/links.md (bytes on the network and on NVLink per step, from links.csv).
# Each simulated host's 8 ranks are started by bench/scale/rank_loop.sh (a shell loop, as
# torchrun would start them, without a Python agent per host) from the warmed process
# (docs/scale.md). About 2 hours on a 2-core machine, most of it the 16-host points (12-22 min
# each) and the uncompressed 8-host ones (14 min); HOSTS=1,2,4 and C1_HOSTS=1,2,4 make it about
# 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
scripts/setup.sh
VENV=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
OUT=${1:-runs/study-dmt}
STEPS=4
HOSTS=${HOSTS:-1,2,4,8,16}
# The uncompressed variant only separates effects (docs/studies/dmt.md); its 16-host points would
# add an hour.
C1_HOSTS=${C1_HOSTS:-1,2,4,8}
LAUNCH=(bench/scale/rank_loop.sh {gpus_per_host} {port} "$VENV/bin/python" examples/dlrm.py)
rc=0
# One sweep of the job in JOB over a host list (more sweep options after it), then its network
# and NVLink bytes per step (links.md).
study() {
  local out=$1 hosts=$2
  shift 2
  build/tools/phantora sweep --hosts "$hosts" "$@" --gpus-per-host 8 --gpu h100 \
    --nic-gbytes-per-s 48.5,12.1 --cpu-time model --timeout 3000 \
    --items-per-step '{gpus}*2048' --items-name samples --out "$out" -- "${JOB[@]}" || rc=$?
  python3 scripts/study_dmt_links.py "$out" $STEPS > "$out/links.md"
  cat "$out/links.md"
}
JOB=("${LAUNCH[@]}" --sharding {sharding} --steps $STEPS)
study "$OUT" "$HOSTS" --var sharding=table-wise,dmt
# DMT without compression (c = 1): separates the towers' effect on communication from the
# tower module's smaller interaction layer.
JOB=("${LAUNCH[@]}" --sharding dmt --compression 1 --steps $STEPS)
study "$OUT/dmt-c1" "$C1_HOSTS" --port-base 29700
exit $rc
