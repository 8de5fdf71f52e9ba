#!/usr/bin/env bash
# Installs what Phantora needs to build (Debian 12 packages) and builds it into build/.
# Idempotent: packages already present are not reinstalled, the build is incremental.
# Needs the CUDA toolkit (headers and nvcc) in /usr/local/cuda or CUDAToolkit_ROOT.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make python3 python3-venv binutils libboost-dev libboost-system-dev
          libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
          libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev clang-format clang
          libclang-rt-14-dev
          gnuplot-nox  # draws `phantora sweep`'s PNG plots
          chromium     # opens the sweep's page in a browser (tests/tools/sweep_browser_check.py)
          python3-yaml # reads the CI templates (tests/integration/check.py, case ci_templates)
          zstd         # unpacks fat binaries' cubins (tests/pytorch/launches_recorded.py)
          munge slurmctld slurmd slurm-client)  # a one-machine Slurm for tests/cluster/slurm_check.py

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if ! command -v nvcc >/dev/null 2>&1; then
  echo "setup: nvcc not found. Install the CUDA toolkit (12.x or 13.x) into /usr/local/cuda." >&2
  exit 1
fi

# The Kubernetes API schema validator for tests/cluster's k8s_manifests (from PyPI, in a venv of
# its own outside the repository). Without it that test checks the manifests' structure only.
K8S_VENV=${PHANTORA_K8S_VALIDATE_VENV:-$HOME/.cache/phantora/k8s-validate-venv}
if [ ! -x "$K8S_VENV/bin/kubernetes-validate" ]; then
  echo "setup: installing kubernetes-validate into $K8S_VENV"
  if ! { python3 -m venv "$K8S_VENV" && "$K8S_VENV/bin/pip" install -q kubernetes-validate==1.37.0; }; then
    echo "setup: warning: kubernetes-validate could not be installed; the Kubernetes manifests" \
         "will be checked structurally only" >&2
  fi
fi

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${PHANTORA_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "setup: built $BUILD_DIR/tools/phantora"
