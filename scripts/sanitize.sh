#!/usr/bin/env bash
# Builds braze with sanitizers in a build dir of its own and runs the tests
# that matter under them (tests/README.md, "Sanitizer jobs"):
#   scripts/sanitize.sh address   AddressSanitizer + UndefinedBehaviorSanitizer
#                                 in build-asan/: the C++ suite (CTest) and a
#                                 Python subset
#   scripts/sanitize.sh thread    ThreadSanitizer in build-tsan/: the C++
#                                 Concurrency.* stress tests and
#                                 tests/python/test_threads.py
# Incremental and safe to run again; scripts/setup.sh must have run first
# (packages and .venv). Any sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
  address) dir=build-asan; sanitizers=address,undefined; runtime=libasan.so ;;
  thread) dir=build-tsan; sanitizers=thread; runtime=libtsan.so ;;
  *) echo "usage: scripts/sanitize.sh address|thread" >&2; exit 2 ;;
esac
if [ ! -x .venv/bin/python ]; then
  echo "sanitize: no .venv here: run scripts/setup.sh first" >&2
  exit 1
fi

# ccache when the machine has it; an empty launcher clears one a previous
# configure cached, so a machine without ccache still builds.
launcher=""
if command -v ccache >/dev/null; then launcher=ccache; fi
cmake -S . -B "$dir" -DBRAZE_SANITIZE="$sanitizers" -DBRAZE_BUILD_PYTHON=ON \
  -DPython_EXECUTABLE="$PWD/.venv/bin/python" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
jobs=$(nproc)
supp="$PWD/tests"

# The Python interpreter is not instrumented, so the sanitizer's runtime is
# not loaded when the instrumented braze._core is imported; it must come
# first, before libc, to intercept malloc and the thread functions:
# LD_PRELOAD it (the compiler that built the module says where it is).
# libstdc++ is preloaded after it: the runtime intercepts __cxa_throw and
# finds the real one when it starts, and python does not link libstdc++,
# so without it the first exception braze throws aborts the process
# ("CHECK failed: ... real___cxa_throw != 0").
preload="$(${CXX:-c++} -print-file-name="$runtime") $(${CXX:-c++} -print-file-name=libstdc++.so.6)"
# run_pytest [VAR=value ...] -- test files
run_pytest() {
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env PYTHONPATH="$PWD/$dir/python" LD_PRELOAD="$preload" "${vars[@]}" \
    .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
}

if [ "$mode" = address ]; then
  cmake --build "$dir" -j"$jobs"
  # print_stacktrace: UBSan's report is one file:line without it; the stack
  # says which caller passed the bad value. (The build's
  # -fno-sanitize-recover=undefined makes any report abort the process.)
  export UBSAN_OPTIONS="print_stacktrace=1"
  # allocator_may_return_null: a request too big to allocate is a null
  # pointer, as from glibc, so braze's MemoryError path runs
  # (test_huge_allocation_is_a_memory_error_and_braze_keeps_working);
  # ASan's default ends the process instead.
  export ASAN_OPTIONS="allocator_may_return_null=1"
  # LeakSanitizer stays on for the C++ suite; tests/lsan.supp names the
  # leaks of libraries braze does not build, each with why.
  # Three tests are left out: their minutes are spent in code no sanitizer
  # sees (the generated kernels' vector math against a sweep of millions of
  # points; NVRTC compiling every test kernel; the host compiler building
  # the emulated CUDA kernels), and they took 630 of the suite's 1,100
  # seconds under ASan here. What they reach of braze's own code, the
  # other tests reach too.
  # LeakSanitizer itself faults after tests that load NVRTC: the leak
  # check's tracer reads a dynamic-TLS block of the dlopened NVRTC at a
  # garbage address ("DTLS 11 at 0x1df9", then "Tracer caught signal 11"),
  # under ctest and not when the test runs alone (GCC 12's libsanitizer;
  # CubinCacheTest, JitCudaTiles and CliCuda cases met it on 2026-11-26 and
  # 27, each after passing). Leaving such tests out one at a time chased
  # the fault from test to test; instead every CUDA test runs in a second
  # pass with ASan and without the leak check, and the rest with both.
  slow='JitCpu\.VectorMathErrorBounds|JitCudaNvrtc\.EveryTestKernelCompilesForSm80AndSm90|JitCudaEmulation\.GeneratedKernelsMatchTheSpecInterpreter'
  cuda='Cuda|Cubin|Nvrtc|cuda'
  LSAN_OPTIONS="suppressions=$supp/lsan.supp" ctest --test-dir "$dir" --output-on-failure -j"$jobs" \
    -E "^($slow)\$|$cuda"
  ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" ctest --test-dir "$dir" --output-on-failure -j"$jobs" \
    -R "$cuda" -E "^($slow)\$"

  # The Python subset: bad and edge input (test_errors.py, test_input_edges.py:
  # issue 21's crash reproducers live there), what reaches memory through the
  # bindings (tensors from and to NumPy, views, copies, library calls and
  # their epilogues, programs and arenas), then the API fuzz at its CI budget (3,000 calls)
  # (its workers inherit LD_PRELOAD and the options, and a report aborts one:
  # a crash the fuzz counts as a failure).
  # detect_leaks=0: every allocation of a Python process has the
  # interpreter on its stack, and CPython does not free its modules and
  # interned objects at exit, so LeakSanitizer reports thousands of blocks;
  # a suppression broad enough to cover them (libpython's frames) would
  # cover every braze allocation made from Python too. braze's own leaks are
  # checked by the C++ suite above, which runs with LeakSanitizer on.
  export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
  run_pytest -- tests/python/test_errors.py tests/python/test_input_edges.py tests/python/test_views.py \
    tests/python/test_copyto.py tests/python/test_library_calls.py tests/python/test_program.py \
    tests/python/test_arena.py tests/python/test_smoke.py
  run_pytest -- tests/python/test_api_fuzz.py
else
  cmake --build "$dir" -j"$jobs" --target braze_tests _core braze_py_sources
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp"
  "$dir/tests/cpp/braze_tests" --gtest_filter='Concurrency.*'
  run_pytest -- tests/python/test_threads.py
fi
echo "sanitize: $mode: clean"
