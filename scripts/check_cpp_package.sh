#!/usr/bin/env bash
# CI, after scripts/test.sh (which builds build/): braze installs as a C++
# package (cmake/package.cmake), and examples/cpp, a project of its own,
# finds it with find_package(braze), builds against braze::braze, and runs.
#   scripts/check_cpp_package.sh [BUILD_DIR]    # default: build
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=${1:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/braze-cpp.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "check_cpp_package: $*" >&2; exit 1; }
[ -f "$build/CMakeCache.txt" ] || fail "no configured build in $build (run scripts/setup.sh)"

cmake --build "$build" -j"$(nproc)" --target braze_library >/dev/null
cmake --install "$build" --prefix "$work/prefix" >/dev/null || fail "cmake --install failed"
[ -f "$work/prefix/lib/cmake/braze/brazeConfig.cmake" ] || fail "no brazeConfig.cmake installed"
[ -f "$work/prefix/include/braze/runtime/braze.h" ] || fail "no runtime/braze.h installed"

# The consumer knows only the install prefix: not this checkout, not build/.
cmake -S "$src/examples/cpp" -B "$work/app" -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.txt" ||
  fail "examples/cpp did not configure: $(cat "$work/configure.txt")"
cmake --build "$work/app" >"$work/build.txt" 2>&1 || fail "examples/cpp did not build: $(cat "$work/build.txt")"
(cd "$work" && "$work/app/fit_line") | tee "$work/run.txt" || fail "examples/cpp's fit_line failed"
grep -q "^ok$" "$work/run.txt" || fail "fit_line did not say ok"
echo "check_cpp_package: ok (installed to a prefix; examples/cpp found braze with find_package, built and ran)"
