#!/usr/bin/env bash
# Sets up the programs behind TorchTitan's published figures for
# examples/torchtitan/published/run.sh (docs/frameworks/torchtitan.md, "The published
# programs"): TorchTitan's source at the commit of the publication (TorchTitan had no release on
# PyPI then) and a virtual environment with the torch release branched nearest to the torch of
# those runs, with every package pinned in examples/torchtitan/published/requirements-PROGRAM.txt.
#
# Usage: scripts/setup-torchtitan-published.sh PROGRAM...   (2024-12, 2025-03; default both)
#
#   TORCHTITAN_PUBLISHED_DIR  where sources and environments go (default ~/.cache/phantora):
#                             torchtitan-COMMIT/ and torchtitan-PROGRAM-venv/
#   TORCHTITAN_REPO           a clone of pytorch/torchtitan holding the commits (default: cloned
#                             from https://github.com/pytorch/torchtitan)
#
# Neither the sources nor the environments are part of this repository; both are reused while
# present (an environment while its requirements are unchanged).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/pinned-venv.sh
. scripts/pinned-venv.sh
parent=${TORCHTITAN_PUBLISHED_DIR:-$HOME/.cache/phantora}
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(2024-12 2025-03)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=${TORCHTITAN_REPO:-}

for program in "${programs[@]}"; do
  case $program in
    2024-12) commit=9dec370ad26b5f8e9a7333a0e36165018262644b
             paths=(torchtitan train.py train_configs LICENSE) ;;
    2025-03) commit=986f6800fc99aa7b162ded787912d5d623b4f02a
             paths=(torchtitan LICENSE) ;;
    *) echo "setup-torchtitan-published: unknown program '$program' (2024-12 or 2025-03)" >&2
       exit 2 ;;
  esac
  src=$parent/torchtitan-${commit:0:7}
  if [ ! -d "$src/torchtitan" ]; then
    if [ -z "$repo" ]; then
      git clone -q https://github.com/pytorch/torchtitan "$tmp/torchtitan"
      repo=$tmp/torchtitan
    fi
    rm -rf "$src.partial" && mkdir -p "$src.partial"
    # the tree of that commit without its history or test assets (run.sh brings its own data)
    git -C "$repo" archive "$commit" "${paths[@]}" | tar -x -C "$src.partial"
    mv "$src.partial" "$src"
    echo "setup-torchtitan-published: TorchTitan $commit in $src"
  fi

  pinned_venv setup-torchtitan-published \
    "examples/torchtitan/published/requirements-$program.txt" "$parent/torchtitan-$program-venv"
done
