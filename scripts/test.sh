#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs every test: GoogleTest
# through CTest, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
PYTHONPATH="$PWD/build/python" .venv/bin/python -m pytest tests/python -q "$@"
