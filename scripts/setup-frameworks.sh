#!/usr/bin/env bash
# Creates the cached environments of the training frameworks Phantora runs (docs/frameworks.md):
# one virtual environment per framework, ~/.cache/phantora/<framework>-venv
# ($PHANTORA_FRAMEWORKS_DIR chooses another parent), each layered on the PyTorch environment of
# scripts/setup-torch.sh through a .pth file, so torch is shared, never reinstalled, and a
# framework that wants another torch fails to install instead of replacing it.
# Each framework's packages are pinned in examples/<framework>/requirements.txt.
#
# Usage: scripts/setup-frameworks.sh [framework...]   (default: every examples/*/requirements.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
torch_venv=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
parent=${PHANTORA_FRAMEWORKS_DIR:-$HOME/.cache/phantora}
if ! "$torch_venv/bin/python" -c "import torch" >/dev/null 2>&1; then
  echo "setup-frameworks: no PyTorch environment at $torch_venv: run scripts/setup-torch.sh first" >&2
  exit 1
fi
torch_site=$("$torch_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

frameworks=("$@")
if [ ${#frameworks[@]} -eq 0 ]; then
  shopt -s nullglob
  for req in examples/*/requirements.txt; do frameworks+=("$(basename "$(dirname "$req")")"); done
  shopt -u nullglob
fi

for fw in "${frameworks[@]}"; do
  req=examples/$fw/requirements.txt
  [ -f "$req" ] || { echo "setup-frameworks: no $req (known: $(ls examples/*/requirements.txt))" >&2; exit 1; }
  venv=$parent/$fw-venv
  stamp=$venv/.phantora-requirements
  # Reused while the requirements it was built from are unchanged.
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp"; then
    echo "setup-frameworks: using $venv"
    continue
  fi
  echo "setup-frameworks: installing $req into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$torch_site" >"$site/phantora-torch.pth"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r "$req"
  # torch must still be the shared one: a requirement that pulled another in is a bug here.
  "$venv/bin/python" - "$torch_site" <<'PY'
import sys, torch
if not torch.__file__.startswith(sys.argv[1]):
    sys.exit(f"setup-frameworks: torch was reinstalled into the framework environment ({torch.__file__}); pin the framework to a version that accepts torch {torch.__version__}")
PY
  cp "$req" "$stamp"
done
