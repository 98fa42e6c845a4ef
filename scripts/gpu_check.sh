#!/usr/bin/env bash
# braze's device run (issue 26): on a machine with an NVIDIA GPU and no
# package registry, build braze from the folder scripts/gpu_carry.sh fills
# (.gpu-carry/, carried with the working tree) and run everything that
# needs the GPU, in one run of at most BUDGET_S seconds (default 480):
#   1. configure against the carried dependencies and the cuDNN wheel's
#      headers (site-packages/nvidia/cudnn), BRAZE_REQUIRE_CUDA=ON: a build
#      without the CUDA backend is refused; build with Ninja
#   2. braze doctor (the libraries and device braze finds)
#   3. ctest -L gpu with BRAZE_REQUIRE_GPU=1: a GPU test that cannot run
#      fails instead of skipping; includes the 500-graph fuzzer on the
#      device against the reference interpreter (CudaDriverGpu.RandomGraphs*)
#   4. pytest -m gpu with BRAZE_REQUIRE_GPU=1 (a skip is a failure): the op x
#      dtype x layout sweep on the device, the targeted device cases
#      (tests/python/test_cuda_device.py), the library calls, exit order
#   5. examples/{mlp,cnn,transformer_block}.py --device cuda (each checks
#      its output against NumPy)
#   6. bench/gpu_fused.py (braze beside PyTorch, torch.compile, CuPy, JAX)
# Each step has its own timeout; logs go to LOGDIR (the first argument, else
# $OUT, else /tmp/braze-gpu/out), at most 8 files; a table is printed last.
# Exit status 0 when every step passed.
#
# The device call (scripts/gpu_carry.sh first, on a machine with apt):
#   command "bash scripts/gpu_check.sh", carry [".gpu-carry"], timeout_s 600
# Tried without a GPU: GPU_CHECK_CARRIED_ONLY=1 makes CMake ignore /usr's
# packages, so the build uses the carried ones or fails.
set -uo pipefail
export PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET=${BUDGET_S:-480}
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
CARRY=$REPO/.gpu-carry
SCRATCH=${GPU_CHECK_SCRATCH:-${TMPDIR:-/tmp}/braze-gpu}
LOGS=${1:-${OUT:-$SCRATCH/out}}
mkdir -p "$SCRATCH" "$LOGS"
B=$SCRATCH/build
DEPS=$SCRATCH/deps
PY=${PYTHON:-python3}

# --- the step runner and the table --------------------------------------------------
ROWS=()   # "name|result|seconds|detail"
FAILED=0
el() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( BUDGET - $(el) )); }
say() { echo "[$(el)s] $*"; }
row() { ROWS+=("$1|$2|$3|$4"); [ "$2" = ok ] || FAILED=1; }
# step NAME LOG CAP CMD...: runs CMD with a timeout of min(CAP, time left -
# 10 s), its output appended to LOG; sets RC and SECS.
step() {
  local name=$1 log=$2 cap=$3; shift 3
  local t=$(( $(left) - 10 )); (( t > cap )) && t=$cap
  SECS=0
  if (( t < 15 )); then RC=99; say "$name: no time left"; return 99; fi
  say "$name (timeout ${t}s)"
  echo "=== $name (timeout ${t}s): $*" >> "$log"
  local s=$(date +%s)
  timeout -k 5 "$t" "$@" >> "$log" 2>&1
  RC=$?
  SECS=$(( $(date +%s) - s ))
  case $RC in 124|137) echo "=== TIMED OUT after ${t}s" >> "$log" ;; esac
  return $RC
}
# The result word of a finished step: ok, FAIL (rc N), TIMEOUT, SKIPPED.
result() {
  case $RC in 0) echo ok ;; 99) echo SKIPPED ;; 124|137) echo TIMEOUT ;; 139) echo "SEGFAULT" ;; *) echo "FAIL($RC)" ;; esac
}
table() {
  echo
  echo "==================== braze device run: $(el)s ===================="
  printf '%-44s %-9s %5s  %s\n' step result secs detail
  local r
  for r in "${ROWS[@]}"; do
    IFS='|' read -r n res s d <<< "$r"
    printf '%-44s %-9s %5s  %s\n' "$n" "$res" "$s" "$d"
  done
  echo "logs: $LOGS ($(ls "$LOGS" | tr '\n' ' '))"
  (( FAILED )) && echo "RESULT: FAILED" || echo "RESULT: all passed"
}
finish() { table | tee "$LOGS/summary.txt"; exit $FAILED; }

# --- 0. the machine --------------------------------------------------------------------
E=$LOGS/env.txt
{
  date -u; uname -a; git rev-parse HEAD 2>/dev/null
  nvidia-smi 2>&1 | head -15
  command -v $PY; $PY -V; cmake --version | head -1; ninja --version 2>&1; c++ --version | head -1
  ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc --version 2>&1 | tail -2
  $PY -m pip list 2>/dev/null | grep -i -E "^(torch|jax|jaxlib|cupy|numpy|ml.dtypes|nanobind|pytest|nvidia-cudnn|nvidia-cuda-nvrtc|nvidia-cublas) "
  cat "$CARRY/MANIFEST" 2>&1
} > "$E" 2>&1
GPU=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
say "GPU: $GPU"
[ -d "$CARRY/debs" ] || { row carried-folder FAIL 0 "no .gpu-carry/debs: run scripts/gpu_carry.sh and carry .gpu-carry"; finish; }

# --- 1. configure and build ------------------------------------------------------------
BL=$LOGS/build.log
SP=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
CUDA=${CUDA_HOME:-/usr/local/cuda}
# cuda.h, nvrtc.h and cublasLt.h in one folder (CMakeLists.txt): the
# toolkit's, or the toolkit's merged with the wheels' where it lacks one.
CUDA_INC=$CUDA/include
if ! [ -e "$CUDA_INC/cuda.h" ] || ! [ -e "$CUDA_INC/nvrtc.h" ] || ! [ -e "$CUDA_INC/cublasLt.h" ]; then
  CUDA_INC=$SCRATCH/cuda-include; rm -rf "$CUDA_INC"; mkdir -p "$CUDA_INC"
  for d in "$CUDA/include" "$SP"/nvidia/*/include; do [ -d "$d" ] && cp -rsn "$d"/. "$CUDA_INC"/ 2>/dev/null; done
fi
CUDNN_INC=""
for d in "$SP/nvidia/cudnn/include" "$CUDA/include" /usr/include /usr/include/x86_64-linux-gnu; do
  [ -e "$d/cudnn.h" ] && { CUDNN_INC=$d; break; }
done
rm -rf "$DEPS" "$SCRATCH/site"; mkdir -p "$DEPS" "$SCRATCH/site"
for d in "$CARRY"/debs/*.deb; do dpkg -x "$d" "$DEPS" >> "$BL" 2>&1; done
$PY -m pip install -q --no-index --no-deps --no-compile --target "$SCRATCH/site" "$CARRY"/whl/*.whl >> "$BL" 2>&1
NB_DIR=$(PYTHONPATH=$SCRATCH/site $PY -m nanobind --cmake_dir 2>>"$BL")
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
EXTRA=()
# Here /usr holds the Debian packages; ignoring it proves the carried ones suffice.
[ "${GPU_CHECK_CARRIED_ONLY:-0}" = 1 ] && EXTRA+=(-DCMAKE_IGNORE_PREFIX_PATH=/usr)
export PKG_CONFIG_LIBDIR=$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS/usr/share/pkgconfig
# libdnnl needs libOpenCL, libxxhash and Zydis are shared: all carried.
export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# -w: a newer compiler's new warnings must not fail the device build (CI keeps -Werror).
step configure "$BL" 120 cmake -S . -B "$B" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DCMAKE_CXX_FLAGS=-w -DCMAKE_PREFIX_PATH="$DEPS/usr" \
  -DBRAZE_REQUIRE_CUDA=ON -DBRAZE_CUDA_INCLUDE_DIR="$CUDA_INC" ${CUDNN_INC:+-DBRAZE_CUDNN_INCLUDE_DIR="$CUDNN_INC"} \
  -DBRAZE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v $PY)" -Dnanobind_DIR="$NB_DIR" "${EXTRA[@]}"
if (( RC != 0 )); then
  row configure "$(result)" $SECS "$(grep -m1 -E 'CMake Error|braze:.*(refus|no CUDA)' "$BL" | cut -c1-150)"
  tail -25 "$BL"; finish
fi
# Where each dependency came from: the carried folder, never /usr, when asked.
FROM=$(grep -E '^(nlohmann_json_DIR|xbyak_DIR|GTest_DIR|CLI11_DIR|zydis_DIR|dnnl_DIR|XXHASH_INCLUDE_DIR|XXHASH_LIBRARY|nanobind_DIR)' "$B/CMakeCache.txt")
echo "$FROM" >> "$BL"
if [ "${GPU_CHECK_CARRIED_ONLY:-0}" = 1 ] && echo "$FROM" | grep -v -E "=($DEPS|$SCRATCH/site|.*-NOTFOUND)" | grep -q .; then
  row configure FAIL $SECS "a dependency came from outside .gpu-carry: $(echo "$FROM" | grep -v "$DEPS" | head -1)"; finish
fi
row configure ok $SECS "$(grep -m1 -o 'braze: CUDA headers.*' "$BL" | cut -c1-110)"
step build "$BL" 360 cmake --build "$B" -j"$(nproc)"
if (( RC != 0 )); then
  row build "$(result)" $SECS "$(grep -m1 -E 'error|FAILED' "$BL" | cut -c1-150)"; grep -E 'error' "$BL" | head -20; finish
fi
row build ok $SECS "$(grep -c -E '^\[[0-9]+/[0-9]+\]' "$BL") build steps, -j$(nproc)"

export PYTHONPATH=$B/python BRAZE_CACHE_DIR=$SCRATCH/braze-cache BRAZE_REQUIRE_GPU=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false
unset BRAZE_CUDA

# --- 2. doctor -------------------------------------------------------------------------
CL=$LOGS/cpp_gpu.log
step "braze doctor" "$CL" 60 "$B/tools/braze" doctor
row "braze doctor" "$(result)" $SECS "$(grep -m1 -E 'cuda:0|no CUDA device|devices' "$CL" | tr -s ' ' | cut -c1-100)"

# --- 3. the gpu-labelled CTest tests ---------------------------------------------------
# braze_tests is no Python process: it finds a wheel's cuDNN through the
# override (Python processes find it themselves: Note [Loading CUDA libraries]).
CUDNN_SO=$(ls "$SP"/nvidia/cudnn/lib/libcudnn.so.9 2>/dev/null | head -1)
step "ctest -L gpu (fuzzer: 500 graphs)" "$CL" 240 env ${CUDNN_SO:+BRAZE_LIBCUDNN=$CUDNN_SO} \
  ctest --test-dir "$B" -L gpu --output-on-failure --timeout 230
D=$(grep -E 'tests passed|tests failed' "$CL" | tail -1)
if grep -q -E '\[  SKIPPED \]|\*\*\*Skipped' "$CL"; then D="$D; SKIPPED tests"; (( RC == 0 )) && RC=1; fi
row "ctest -L gpu (fuzzer: 500 graphs)" "$(result)" $SECS "$D"
grep -E '^ *[0-9]+/[0-9]+ Test +#' "$CL" | sed 's/^ */    /' | cut -c1-90

# --- 4. pytest -m gpu -----------------------------------------------------------------
PL=$LOGS/pytest_gpu.log
TO=(); $PY -c "import pytest_timeout" 2>/dev/null && TO=(--timeout=200)
step "pytest -m gpu (op sweep, device cases)" "$PL" 300 $PY -m pytest tests/python -m gpu -q -rfEs \
  -p no:cacheprovider "${TO[@]}"
D=$(tail -1 "$PL")
grep -q -E '[0-9]+ skipped' <<< "$D" && (( RC == 0 )) && RC=1
row "pytest -m gpu (op sweep, device cases)" "$(result)" $SECS "$(cut -c1-90 <<< "$D")"

# --- 5. the examples on the GPU ---------------------------------------------------------
XL=$LOGS/examples.log
for ex in mlp cnn transformer_block; do
  step "examples/$ex.py --device cuda" "$XL" 90 $PY examples/$ex.py --device cuda --iterations 10
  row "examples/$ex.py --device cuda" "$(result)" $SECS "$(grep -E '^median' "$XL" | tail -1 | cut -c1-90)"
done

# --- 6. the benchmark, last: whatever time is left -----------------------------------------
BE=$LOGS/bench.log
ARGS=(); (( $(left) < 240 )) && ARGS=(--no-compile)
step "bench/gpu_fused.py ${ARGS[*]}" "$BE" 420 $PY bench/gpu_fused.py "${ARGS[@]}"
row "bench/gpu_fused.py ${ARGS[*]}" "$(result)" $SECS "$(grep -c ' braze ' "$BE") workloads timed"
grep -v -E '^===|^\s*$' "$BE" | tail -40
finish
