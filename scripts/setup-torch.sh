#!/usr/bin/env bash
# Creates the cached PyTorch environment the PyTorch examples and tests use: a virtual
# environment outside the repository ($PHANTORA_TORCH_VENV, default
# ~/.cache/phantora/torch-venv) with the stock CUDA build of PyTorch from PyPI. Several GB on
# first use; reused afterwards. Nothing of it is ever committed.
set -euo pipefail
VENV=${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}
TORCH_SPEC=${PHANTORA_TORCH_SPEC:-torch}
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import torch" >/dev/null 2>&1; then
  echo "setup-torch: using $VENV (torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)'))"
  exit 0
fi
echo "setup-torch: installing $TORCH_SPEC into $VENV (several GB, first time only)"
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c "import ensurepip" >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
fi
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q "$TORCH_SPEC" numpy
"$VENV/bin/python" -c "import torch; print('setup-torch: torch', torch.__version__, 'CUDA', torch.version.cuda)"
