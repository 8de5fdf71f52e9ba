#!/usr/bin/env bash
# Starts one process per GPU of this host, as torchrun does (RANK, LOCAL_RANK, WORLD_SIZE,
# CUDA_VISIBLE_DEVICES), waits for all of them and fails if any fails. `phantora run` starts
# this once per simulated host with PHANTORA_HOST, PHANTORA_HOSTS, PHANTORA_GPUS_PER_HOST set.
set -u
gpus=${PHANTORA_GPUS_PER_HOST:?not under phantora run}
host=${PHANTORA_HOST:-0}
world=$(( ${PHANTORA_HOSTS:-1} * gpus ))
pids=()
for ((i = 0; i < gpus; i++)); do
  RANK=$((host * gpus + i)) LOCAL_RANK=$i LOCAL_WORLD_SIZE=$gpus WORLD_SIZE=$world \
    CUDA_VISIBLE_DEVICES=$i "$@" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
  wait "$p" || rc=$?
done
exit $rc
