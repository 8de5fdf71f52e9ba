#!/usr/bin/env bash
# Creates the cached PyTorch environments the PyTorch examples and tests use, outside the
# repository (nothing of them is ever committed):
#   $PHANTORA_TORCH_VENV       (default ~/.cache/phantora/torch-venv): the newest torch on PyPI
#                              (its wheel uses the CUDA 13 runtime);
#   $PHANTORA_TORCH_CU12_VENV  (default ~/.cache/phantora/torch-cu12-venv): torch 2.8.0, whose
#                              wheel uses the CUDA 12 runtime, so both majors are tested.
# Several GB each on first use; reused afterwards. PHANTORA_SKIP_TORCH_CU12=1 skips the second.
set -euo pipefail

install_venv() {
  local venv=$1 spec=$2
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import torch" >/dev/null 2>&1; then
    echo "setup-torch: using $venv (torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)'))"
    return
  fi
  echo "setup-torch: installing $spec into $venv (several GB, first time only)"
  if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "$spec" numpy
  "$venv/bin/python" -c "import torch; print('setup-torch: torch', torch.__version__, 'CUDA', torch.version.cuda)"
}

install_venv "${PHANTORA_TORCH_VENV:-$HOME/.cache/phantora/torch-venv}" "${PHANTORA_TORCH_SPEC:-torch}"
if [ "${PHANTORA_SKIP_TORCH_CU12:-0}" != 1 ]; then
  install_venv "${PHANTORA_TORCH_CU12_VENV:-$HOME/.cache/phantora/torch-cu12-venv}" "torch==2.8.0"
fi
