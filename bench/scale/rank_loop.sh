#!/bin/bash
# A launcher without torchrun, for jobs too large for one torchrun (a Python process that
# imports torch) per simulated host: starts GPUS ranks of a torch.distributed job on this
# simulated host with the env:// variables set, as a shell loop would, and exits with the first
# non-zero status. Run once per host by phantora run (PHANTORA_HOST is the host's index):
#
#   phantora run --hosts 16 --gpus-per-host 8 ... -- \
#     bench/scale/rank_loop.sh 8 29500 python examples/dlrm.py --sharding dmt
#
# Usage: rank_loop.sh GPUS MASTER_PORT command...
set -u
gpus=$1 port=$2
shift 2
host=${PHANTORA_HOST:?run this under phantora run}
hosts=${PHANTORA_HOSTS:?run this under phantora run}
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=$((hosts * gpus))
export LOCAL_WORLD_SIZE=$gpus GROUP_RANK=$host OMP_NUM_THREADS=1
pids=()
for ((i = 0; i < gpus; i++)); do
  RANK=$((host * gpus + i)) LOCAL_RANK=$i "$@" &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do
  wait "$p" || { s=$?; [ "$status" -eq 0 ] && status=$s; }
done
exit "$status"
