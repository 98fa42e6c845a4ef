"""What every benchmark here times with (shared/bench/WORKLOADS.md): the
best of REPS runs after one warm-up run, which also absorbs compilation.
BENCH_REPS overrides REPS (at least 7 for figures that get published)."""
import os
import time

REPS = int(os.environ.get("BENCH_REPS", 7))


def best(f):
    f()
    times = []
    for _ in range(REPS):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)
