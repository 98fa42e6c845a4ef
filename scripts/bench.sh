#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), installs the benchmark peers
# (bench/requirements.txt; a peer that does not install is skipped) and runs
# the CPU benchmarks (memory-bound, then matmul/conv-bound), braze beside its
# peers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/python -m pip install -q -r bench/requirements.txt || echo "bench: some peers did not install; they are skipped"
PYTHONPATH="$PWD/build/python" .venv/bin/python bench/cpu_fused.py "$@"
PYTHONPATH="$PWD/build/python" .venv/bin/python bench/library_calls.py
PYTHONPATH="$PWD/build/python" .venv/bin/python bench/program_loop.py
PYTHONPATH="$PWD/build/python" .venv/bin/python bench/memory_plan.py
