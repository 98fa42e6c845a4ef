"""bench/sweep.py (issue 25) is generated from the op table: a new row that
the sweep cannot time (no NumPy function and no formula for it) must fail
here, not in the next benchmark run."""
import os
import subprocess
import sys

import braze as bz

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
import sweep  # noqa: E402


def test_every_element_wise_row_of_the_table_is_swept():
    swept = {op.name for op in sweep.table_ops()}
    rows = {r["api"] for r in bz.ops() if r["kind"] == "elementwise" and r["auto"]}
    assert rows <= swept, sorted(rows - swept)


def test_a_small_sweep_runs_and_matches_numpy():
    path = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(bz.__file__)), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BENCH_REPS="1", PYTHONPATH=path)
    r = subprocess.run([sys.executable, os.path.join(BENCH, "sweep.py"), "--sizes", "1K", "--dtypes", "float32,int8",
                        "--layouts", "contiguous,transposed", "--ops", "add,exp,stop_gradient,depend,sum",
                        "--threads", "all"], env=env, capture_output=True, text=True, timeout=600, cwd=BENCH)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "\nfindings: 0\n" in r.stdout, r.stdout[-3000:]  # every case checked against NumPy, none wrong
