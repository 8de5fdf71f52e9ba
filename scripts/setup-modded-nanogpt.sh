#!/usr/bin/env bash
# Sets up the programs behind modded-nanogpt's published speedrun records for
# examples/modded-nanogpt/run.sh (docs/accuracy.md, "modded-nanogpt"). A record's log begins
# with the exact training script it ran (the script writes its own source into the log), so the
# program is taken from the published log itself, at the commit that added it; the environment
# is the torch release the log names, every package pinned in
# examples/modded-nanogpt/requirements-VERSION.txt.
#
# Usage: scripts/setup-modded-nanogpt.sh [RECORD...]   (the names of
#        examples/modded-nanogpt/records.txt; default: all of them)
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
# shellcheck source=examples/name-table.sh
. examples/name-table.sh
records_table=examples/modded-nanogpt/records.txt
records=("$@")
[ ${#records[@]} -gt 0 ] || mapfile -t records < <(table_names "$records_table")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=${MODDED_NANOGPT_REPO:-}

for record in "${records[@]}"; do
  # the commit that published the record's log, the log's path there, the torch it names
  read -r commit log version < <(table_row "$records_table" "$record") || {
    unknown_name setup-modded-nanogpt "$records_table" "$record"
    exit 2
  }
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
    if ! grep -qi "^Running pytorch $version+" "$dest.partial/published.log"; then
      echo "setup-modded-nanogpt: $log does not name torch $version, which $records_table" \
        "gives for it" >&2
      exit 1
    fi
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
