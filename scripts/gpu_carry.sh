#!/usr/bin/env bash
# Gathers, on a machine with package registries (Debian 12, as CI), what
# scripts/gpu_check.sh needs on the GPU machine, which has none: the Debian
# packages braze builds against (header-only libraries, GoogleTest's static
# libraries, xxhash, Zydis and oneDNN with their shared libraries; unpacked
# there into a scratch folder, never into /) and the nanobind wheel braze's
# Python module is developed with. Fills the git-ignored .gpu-carry/ (about
# 8 MB; the device tool carries at most 64 MiB) and prints the device call.
#   scripts/gpu_carry.sh             # all of it
#   scripts/gpu_carry.sh --no-onednn # without oneDNN (CPU matmul/conv2d then
#                                    # run on the reference interpreter there)
set -euo pipefail
cd "$(dirname "$0")/.."
onednn=1
for a in "$@"; do
  case $a in
    --no-onednn) onednn=0 ;;
    *) echo "gpu_carry.sh: unknown argument '$a' (expected --no-onednn)" >&2; exit 2 ;;
  esac
done

# What the top-level CMakeLists.txt finds (find_package/find_path), and the
# shared libraries those link against at run time. ocl-icd-libopencl1:
# Debian's oneDNN links libOpenCL.so.1 (its OpenCL GPU runtime; braze uses
# only the CPU engine), and its CMake package finds OpenCL's headers and
# libOpenCL.so (opencl-c-headers, ocl-icd-opencl-dev) or fails to configure.
debs=(nlohmann-json3-dev libxbyak-dev libxxhash-dev libxxhash0 libgtest-dev libcli11-dev
      libzydis-dev libzydis4.0 libzycore-dev libzycore1.4)
(( onednn )) && debs+=(libdnnl-dev libdnnl2 ocl-icd-libopencl1 opencl-c-headers ocl-icd-opencl-dev)

rm -rf .gpu-carry
mkdir -p .gpu-carry/debs .gpu-carry/whl
(cd .gpu-carry/debs && apt-get download -q "${debs[@]}" >/dev/null) || {
  echo "gpu_carry.sh: apt-get download failed; run 'apt-get update' (as root) and try again" >&2; exit 1; }

# The nanobind this checkout builds with (.venv, scripts/setup.sh), so the
# device builds the same bindings; scikit-build-core is already there.
py=.venv/bin/python
[ -x $py ] || py=python3
nb=$($py -c 'import nanobind; print(nanobind.__version__)')
$py -m pip download -q --no-deps --only-binary=:all: -d .gpu-carry/whl "nanobind==$nb"

{ echo "gathered $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)"; ls .gpu-carry/debs .gpu-carry/whl; } > .gpu-carry/MANIFEST
echo "gpu_carry.sh: .gpu-carry holds $(du -sh .gpu-carry | cut -f1): $(ls .gpu-carry/debs | wc -l) packages, nanobind $nb"
echo 'device run: command "bash scripts/gpu_check.sh", carry [".gpu-carry"], timeout_s 600'
