#!/usr/bin/env bash
# Installs what braze needs on a fresh Debian 12 machine and builds it into
# build/ (C++ libraries, tests, and the Python package in build/python,
# which .venv/bin/python imports).
# Safe to run again: it installs only what is missing and rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(build-essential cmake git libgtest-dev nlohmann-json3-dev libxbyak-dev libxxhash-dev libzydis-dev libcli11-dev libdnnl-dev libopenblas-openmp-dev pkg-config python3-venv)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python packages go into a virtual environment inside the checkout.
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
if ! .venv/bin/python -c "import numpy, ml_dtypes, pytest, nanobind" 2>/dev/null; then
  .venv/bin/python -m pip install -q --upgrade pip
fi
.venv/bin/python -m pip install -q -r requirements-dev.txt

cmake -S . -B build -DBRAZE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
cmake --build build -j"$(nproc)"

# `import braze` in .venv without PYTHONPATH: a .pth file naming the package
# the build assembles in build/python, which every rebuild updates in place
# (an editable or regular install would be a second build to keep in step).
# A braze pip-installed into .venv comes first on sys.path and hides it.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/build/python" >"$site/braze-build.pth"
