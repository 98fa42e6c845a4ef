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


def best_in_turn(fs, reps=None):
    """The best of `reps` (default REPS) rounds for each function of the
    dict `fs`, a round calling each once in turn: on a shared machine every
    system then meets the same load, where timed one after the other each
    catches its own quiet or busy minute. Returns {name: seconds}."""
    for f in fs.values():
        f()
    out = dict.fromkeys(fs, float("inf"))
    for _ in range(REPS if reps is None else reps):
        for name, f in fs.items():
            t = time.perf_counter()
            f()
            out[name] = min(out[name], time.perf_counter() - t)
    return out
