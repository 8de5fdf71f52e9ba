#!/usr/bin/env bash
# Starts this simulated host's share of a DeepSpeed job with DeepSpeed's own launcher, without ssh:
# `phantora run` runs this once per simulated host, and each copy launches its host's ranks
# (`deepspeed --no_ssh --node_rank $PHANTORA_HOST`), as one would run `deepspeed --no_ssh` on each
# node of a real cluster. The hostfile DeepSpeed needs for the node count and slots per node is
# written from PHANTORA_HOSTS and PHANTORA_GPUS_PER_HOST (the host names in it are only labels:
# with --no_ssh nothing connects to them).
#
# Usage (under phantora run): ds-launch.sh TRAIN_SCRIPT [script args...]
# DS_MASTER_PORT chooses the rendezvous port (default 29910); DEEPSPEED the launcher (default:
# `deepspeed` on PATH).
set -euo pipefail
: "${PHANTORA_HOST:?run me under phantora run}" "${PHANTORA_HOSTS:?}" "${PHANTORA_GPUS_PER_HOST:?}"
deepspeed=${DEEPSPEED:-deepspeed}
hostfile=$(mktemp "${TMPDIR:-/tmp}/phantora-ds-hostfile.XXXXXX")
trap 'rm -f "$hostfile"' EXIT
for ((h = 0; h < PHANTORA_HOSTS; h++)); do echo "node$h slots=$PHANTORA_GPUS_PER_HOST"; done >"$hostfile"
"$deepspeed" --hostfile "$hostfile" --no_ssh --node_rank "$PHANTORA_HOST" \
  --master_addr 127.0.0.1 --master_port "${DS_MASTER_PORT:-29910}" "$@"
