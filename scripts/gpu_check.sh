#!/usr/bin/env bash
# braze's device run (issue 26): on a machine with an NVIDIA GPU and no
# package registry, build braze from the folder scripts/gpu_carry.sh fills
# (.gpu-carry/, carried with the working tree) and run everything that
# needs the GPU, in one run of at most BUDGET_S seconds (default 450),
# all of it under BRAZE_REQUIRE_GPU=1 (a test that needs a GPU fails where
# it would skip):
#   1. configure against the carried dependencies and the cuDNN wheel's
#      headers (site-packages/nvidia/cudnn), BRAZE_REQUIRE_CUDA=ON: a build
#      without the CUDA backend is refused; build with Ninja (-k 0: every
#      error listed, not the first)
#   2. braze doctor (the libraries and device braze finds), and braze run
#      --device cuda on four expressions (the CLI checks each against the
#      reference)
#   3. ctest -L gpu: the driver and library checks, and the 500-graph fuzzer
#      on the device against the reference interpreter
#      (CudaDriverGpu.RandomGraphsOnTheDeviceMatchTheReference)
#   4. pytest -m gpu (a skip is a failure): the op x dtype x layout sweep on
#      the device, the targeted device cases (tests/python/test_cuda_device.py:
#      2^31 elements, epilogues, misaligned views, threads, DLPack, the exit
#      order), the library calls; on a failure, the failed tests once more
#      under CUDA_LAUNCH_BLOCKING=1, so an asynchronous fault names its kernel
#   5. examples/{mlp,cnn,transformer_block}.py --device cuda (each checks
#      its output against NumPy)
#   6. bench/gpu_fused.py (braze beside PyTorch, torch.compile, CuPy, JAX),
#      last, with what is left of the budget
# The test processes run with scripts/gpu_segv.c preloaded: a crash prints
# its native stack, which this script resolves with addr2line (the machine
# has no gdb). Each step has its own timeout; logs go to LOGDIR (the first
# argument, else $OUT, else /tmp/braze-gpu/out), at most 8 files; a table is
# printed last. Exit status 0 when every step passed.
#
# The device call (scripts/gpu_carry.sh first, on a machine with apt;
# DEVELOPERS.md, "The device run"):
#   command "bash scripts/gpu_check.sh", carry [".gpu-carry"], timeout_s 600
# Tried without a GPU: GPU_CHECK_CARRIED_ONLY=1 makes CMake ignore /usr's
# packages, so the build uses the carried ones or fails.
set -uo pipefail
export PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET=${BUDGET_S:-450}
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
CARRY=$REPO/.gpu-carry
SCRATCH=${GPU_CHECK_SCRATCH:-${TMPDIR:-/tmp}/braze-gpu}
LOGS=${1:-${OUT:-$SCRATCH/out}}
mkdir -p "$SCRATCH" "$LOGS"
B=$SCRATCH/build
DEPS=$SCRATCH/deps
PY=${PYTHON:-python3}
export BRAZE_REQUIRE_GPU=1

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
GPU=$(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1 || echo "none: no nvidia-smi here")
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
# More CMake arguments, e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache for a try here.
read -r -a MORE <<< "${GPU_CHECK_CMAKE_ARGS:-}"; EXTRA+=("${MORE[@]}")
export PKG_CONFIG_LIBDIR=$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS/usr/share/pkgconfig
# libdnnl needs libOpenCL, libxxhash and Zydis are shared: all carried.
export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The linker too: Zydis's CMake package names Zycore as a bare -lZycore.
export LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
# -w: a newer compiler's new warnings must not fail the device build (CI
# keeps -Werror). -isystem: xbyak's CMake package names /usr/include as its
# include folder, which CMake drops as implicit, and there /usr/include has
# no xbyak: the carried headers are named to the compiler directly.
step configure "$BL" 120 cmake -S . -B "$B" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 "-DCMAKE_CXX_FLAGS=-w -isystem $DEPS/usr/include" \
  -DCMAKE_PREFIX_PATH="$DEPS/usr" -DXXHASH_INCLUDE_DIR="$DEPS/usr/include" \
  -DXXHASH_LIBRARY="$DEPS/usr/lib/x86_64-linux-gnu/libxxhash.so" \
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
KEEP_GOING=(-k); (( ${#GEN[@]} )) && KEEP_GOING=(-k 0)  # make's and ninja's: every error, not the first
step build "$BL" 360 cmake --build "$B" -j"$(nproc)" -- "${KEEP_GOING[@]}"
if (( RC != 0 )); then
  row build "$(result)" $SECS "$(grep -m1 -E 'error|FAILED' "$BL" | cut -c1-150)"; grep -E 'error' "$BL" | head -20; finish
fi
row build ok $SECS "$(grep -c -E '^\[[0-9]+/[0-9]+\]' "$BL") build steps, -j$(nproc)"

export PYTHONPATH=$B/python BRAZE_CACHE_DIR=$SCRATCH/braze-cache
export XLA_PYTHON_CLIENT_PREALLOCATE=false
unset BRAZE_CUDA
# Processes that are not Python do not find NVIDIA's wheels (Note [Loading
# CUDA libraries]): where the loader and the toolkit have no NVRTC, cuBLASLt
# or cuDNN, the overrides name the wheels'.
for pair in "BRAZE_LIBNVRTC libnvrtc.so.13" "BRAZE_LIBCUBLASLT libcublasLt.so.13" "BRAZE_LIBCUDNN libcudnn.so.9"; do
  set -- $pair
  if [ -z "${!1:-}" ] && ! ldconfig -p 2>/dev/null | grep -q "$2 " && ! [ -e "$CUDA/lib64/$2" ]; then
    f=$(ls "$SP"/nvidia/*/lib/"$2" 2>/dev/null | head -1); [ -n "$f" ] && export "$1=$f"
  fi
done
env | grep -E '^BRAZE_LIB' >> "$E"
# The native stack of a crash (scripts/gpu_segv.c), for the test processes.
SEGV=$SCRATCH/gpu_segv.so
cc -shared -fPIC -o "$SEGV" scripts/gpu_segv.c >> "$BL" 2>&1 || SEGV=""
# (A command prefix, not a function: `timeout` runs it.)
WITH_STACK=(env); [ -n "$SEGV" ] && WITH_STACK=(env "LD_PRELOAD=$SEGV${LD_PRELOAD:+:$LD_PRELOAD}")
# After a step: each native frame in LOG as a function and a line.
resolve_stacks() {
  grep -q "=== native backtrace" "$1" || return 0
  echo "=== the native frames above, resolved (addr2line)" >> "$1"
  grep -oE "[^ ]+\(\+0x[0-9a-f]+\)" "$1" | sort -u | head -40 | while read -r f; do
    mod=${f%%(*}; off=${f##*(+}; off=${off%)}
    echo "$f -> $(addr2line -f -C -i -e "$mod" "$off" 2>&1 | tr '\n' ' ')"
  done >> "$1"
}

# --- 2. doctor -------------------------------------------------------------------------
CL=$LOGS/cpp_gpu.log
step "braze doctor" "$CL" 60 "$B/tools/braze" doctor
row "braze doctor" "$(result)" $SECS "$(grep -m1 -E 'cuda:0|no CUDA device|devices' "$CL" | tr -s ' ' | cut -c1-100)"
# The CLI on the device: each result checked against the reference.
runs=0; bad=0; secs=0
set -f  # the shapes below are not globs
for e in "softmax(x, axis=-1)|x:f32[4096,4096]" "layer_norm(x)|x:f32[8192,1024]" "sum(x, axis=0)|x:f32[100000,7]" \
         "gelu(x @ w + b, approximate='tanh')|x:f16[512,768] w:f16[768,3072] b:f16[3072]"; do
  ex=${e%%|*}; args=(); for i in ${e#*|}; do args+=(--input "$i"); done
  step "braze run --device cuda: $ex" "$CL" 60 "${WITH_STACK[@]}" "$B/tools/braze" run --device cuda --repeat 5 --expr "$ex" "${args[@]}"
  runs=$((runs + 1)); secs=$((secs + SECS)); (( RC != 0 )) && bad=$((bad + 1))
done
set +f
resolve_stacks "$CL"
RC=$bad; row "braze run --device cuda (4 expressions)" "$( ((bad)) && echo "FAIL($bad)" || echo ok)" $secs \
  "$((runs - bad))/$runs matched the reference"

# --- 3. the gpu-labelled CTest tests ---------------------------------------------------
# braze_tests is no Python process: it finds a wheel's cuDNN through the
# override (Python processes find it themselves: Note [Loading CUDA libraries]).
CUDNN_SO=$(ls "$SP"/nvidia/cudnn/lib/libcudnn.so.9 2>/dev/null | head -1)
step "ctest -L gpu (fuzzer: 500 graphs)" "$CL" 240 "${WITH_STACK[@]}" env ${CUDNN_SO:+BRAZE_LIBCUDNN=$CUDNN_SO} \
  ctest --test-dir "$B" -L gpu --output-on-failure --timeout 230
resolve_stacks "$CL"
D=$(grep -E 'tests passed|tests failed' "$CL" | tail -1)
if grep -q -E '\[  SKIPPED \]|\*\*\*Skipped' "$CL"; then D="$D; SKIPPED tests"; (( RC == 0 )) && RC=1; fi
row "ctest -L gpu (fuzzer: 500 graphs)" "$(result)" $SECS "$D"
grep -E '^ *[0-9]+/[0-9]+ Test +#' "$CL" | sed 's/^ */    /' | cut -c1-90

# --- 4. pytest -m gpu -----------------------------------------------------------------
PL=$LOGS/pytest_gpu.log
TO=(); $PY -c "import pytest_timeout" 2>/dev/null && TO=(--timeout=200)
# Dask is not carried to the device machine, and a module that skips at
# import counts as a skip even where -m gpu deselects its tests: Dask's
# tests (none of them marked gpu yet) are left out.
step "pytest -m gpu (op sweep, device cases)" "$PL" 300 "${WITH_STACK[@]}" $PY -m pytest tests/python -m gpu -q -rfEs \
  --ignore=tests/python/test_dask.py -p no:cacheprovider "${TO[@]}"
resolve_stacks "$PL"
D=$(tail -1 "$PL")
grep -q -E '[0-9]+ skipped' <<< "$D" && (( RC == 0 )) && RC=1
row "pytest -m gpu (op sweep, device cases)" "$(result)" $SECS "$(cut -c1-90 <<< "$D")"
# A fault surfaces at the next synchronizing call, not in its kernel: the
# failed tests once more with every launch waited for.
if (( RC != 0 && RC != 99 )); then
  mapfile -t AGAIN < <(grep -oE '^(FAILED|ERROR) tests/python/[^ ]+' "$PL" | cut -d' ' -f2 | sort -u | head -20)
  if (( ${#AGAIN[@]} )); then
    step "pytest: the failed, CUDA_LAUNCH_BLOCKING=1" "$PL" 120 "${WITH_STACK[@]}" env CUDA_LAUNCH_BLOCKING=1 \
      $PY -m pytest "${AGAIN[@]}" -q -rfE -p no:cacheprovider "${TO[@]}"
    resolve_stacks "$PL"
    row "pytest: the failed, CUDA_LAUNCH_BLOCKING=1" "$(result)" $SECS "$(tail -1 "$PL" | cut -c1-90)"
  fi
fi

# --- 5. the examples on the GPU ---------------------------------------------------------
XL=$LOGS/examples.log
for ex in mlp cnn transformer_block; do
  step "examples/$ex.py --device cuda" "$XL" 90 "${WITH_STACK[@]}" $PY examples/$ex.py --device cuda --iterations 10
  row "examples/$ex.py --device cuda" "$(result)" $SECS "$(grep -E '^median' "$XL" | tail -1 | cut -c1-90)"
done
resolve_stacks "$XL"

# --- 6. the benchmark, last: whatever time is left -----------------------------------------
BE=$LOGS/bench.log
ARGS=(); (( $(left) < 240 )) && ARGS=(--no-compile)
step "bench/gpu_fused.py ${ARGS[*]}" "$BE" 420 $PY bench/gpu_fused.py "${ARGS[@]}"
row "bench/gpu_fused.py ${ARGS[*]}" "$(result)" $SECS "$(grep -c ' braze ' "$BE") workloads timed"
grep -v -E '^===|^\s*$' "$BE" | tail -40
finish
