#!/usr/bin/env bash
# Sets up the programs behind modded-nanogpt's published speedrun records for
# examples/modded-nanogpt/run.sh (docs/accuracy.md, "modded-nanogpt"). A record's log begins
# with the exact training script it ran (the script writes its own source into the log), so the
# program is taken from the published log itself, at the commit that added it; the environment
# is the torch release the log names, every package pinned in
# examples/modded-nanogpt/requirements-VERSION.txt.
#
# Usage: scripts/setup-modded-nanogpt.sh [RECORD...]   (2024-10-18, 2024-10-29-adam; default all)
#
#   MODDED_NANOGPT_DIR   where programs and environments go (default ~/.cache/phantora):
#                        modded-nanogpt-RECORD/ (train_gpt2.py and the published log) and
#                        modded-nanogpt-VERSION-venv/
#   MODDED_NANOGPT_REPO  a clone of KellerJordan/modded-nanogpt holding the commits (default:
#                        cloned from https://github.com/KellerJordan/modded-nanogpt)
#
# Neither the programs nor the environments are part of this repository; both are reused while
# present (an environment while its requirements are unchanged).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/pinned-venv.sh
. scripts/pinned-venv.sh
parent=${MODDED_NANOGPT_DIR:-$HOME/.cache/phantora}
records=("$@")
[ ${#records[@]} -gt 0 ] || records=(2024-10-18 2024-10-29-adam)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=${MODDED_NANOGPT_REPO:-}

for record in "${records[@]}"; do
  case $record in
    # the commit that published the log, the log's path there, the torch it names
    2024-10-18) commit=2b78ab3b714d54eaa570da446ac93b59b0608f4f
                log=records/101824_PyTorch25/d4bfb25f-688d-4da5-8743-33926fad4842.txt
                version=2.5.0 ;;
    # the optimizer comparison of 2024-10-29: the record above with AdamW for every layer
    2024-10-29-adam) commit=a83c6f8b6f2075e003336e28ced2e2f8bc204218
                     log=records/102924_Optimizers/95a9fd44-7c13-49c7-b324-3e7d9e23a499.txt
                     version=2.5.0 ;;
    *) echo "setup-modded-nanogpt: unknown record '$record' (2024-10-18, 2024-10-29-adam)" >&2
       exit 2 ;;
  esac
  dest=$parent/modded-nanogpt-$record
  if [ ! -f "$dest/train_gpt2.py" ]; then
    if [ -z "$repo" ]; then
      git clone -q https://github.com/KellerJordan/modded-nanogpt "$tmp/modded-nanogpt"
      repo=$tmp/modded-nanogpt
    fi
    rm -rf "$dest.partial" && mkdir -p "$dest.partial"
    git -C "$repo" show "$commit:$log" > "$dest.partial/published.log"
    # the script is the log's text between its first two rules of 100 '='
    awk 'BEGIN { rule = sprintf("%100s", ""); gsub(/ /, "=", rule) }
         $0 == rule { n++; next }
         n == 1 { print }
         n >= 2 { exit }' "$dest.partial/published.log" > "$dest.partial/train_gpt2.py"
    if ! grep -q "^num_iterations\|num_iterations : int" "$dest.partial/train_gpt2.py"; then
      echo "setup-modded-nanogpt: no training script found at the head of $log" >&2
      exit 1
    fi
    mv "$dest.partial" "$dest"
    echo "setup-modded-nanogpt: record $record ($commit) in $dest"
  fi

  pinned_venv setup-modded-nanogpt "examples/modded-nanogpt/requirements-$version.txt" \
    "$parent/modded-nanogpt-$version-venv"
done
