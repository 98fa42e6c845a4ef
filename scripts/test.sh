#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs every test: GoogleTest
# through CTest, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The Python suite runs through the generated kernels for each vector ISA
# the CPU has, and through the reference interpreter.
run_pytest() { PYTHONPATH="$PWD/build/python" "$@" .venv/bin/python -m pytest tests/python -q -p no:cacheprovider; }
run_pytest env
if grep -q avx512f /proc/cpuinfo; then run_pytest env BRAZE_CPU_ISA=avx2; fi
run_pytest env BRAZE_BACKEND=reference
