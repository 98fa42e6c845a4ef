#!/usr/bin/env bash
# braze's main job: sets everything up (scripts/setup.sh), installs what the
# examples need (examples/requirements.txt) and runs the transformer-block
# example: repeated inference iterations, each timed beside NumPy and checked
# against it. Safe to run again. Arguments go to the example
# (e.g. --iterations 100, --device cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/python -c "import tqdm" 2>/dev/null || .venv/bin/python -m pip install -q -r examples/requirements.txt
PYTHONPATH="$PWD/build/python" .venv/bin/python examples/transformer_block.py "$@"
