#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs every test: GoogleTest
# through CTest, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The toolkit's SASS disassembler comes as a wheel (requirements-dev.txt):
# `braze kernels --emit sass` finds it on PATH.
PATH="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/nvidia/cu13/bin:$PATH"
export PATH
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The Python suite runs through the generated kernels for each vector ISA
# the CPU has, and through the reference interpreter. PYTHONPATH names this
# checkout's build/python, as .venv's braze-build.pth does (scripts/setup.sh),
# so the tests run this build even in a .venv that several checkouts share.
run_pytest() { PYTHONPATH="$PWD/build/python" "$@" .venv/bin/python -m pytest tests/python -q -p no:cacheprovider; }
run_pytest env
if grep -q avx512f /proc/cpuinfo; then run_pytest env BRAZE_CPU_ISA=avx2; fi
run_pytest env BRAZE_BACKEND=reference
