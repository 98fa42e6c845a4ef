#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs braze's main job: today the
# demo that records a lazy expression, realizes it and prints it beside NumPy.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
PYTHONPATH="$PWD/build/python" .venv/bin/python examples/demo.py "$@"
