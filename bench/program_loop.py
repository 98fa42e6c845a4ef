"""Host overhead and steady-state allocation of replayed programs
(shared/bench/WORKLOADS.md: `loop` and `small_chain`; docs/programs.md).

loop: 100 iterations that each record bias_relu_scale then softmax_rows on
X: [4096,4096] and realize the result (plain: a new output each iteration;
jit out=: written into one existing tensor). Prints the first iteration
(compile) apart, then the median per-iteration time after it beside NumPy's,
allocations and bytes allocated per iteration after the first, and
programs_compiled / programs_replayed. The same loop at [64,64] shows the
per-iteration host overhead, where the kernels take next to nothing.

small_chain: a 10-op element-wise chain on 1024 float32 elements, recorded
and realized 10,000 times: µs per realize beside NumPy's time for the same
10 ops, and how the µs split between recording the ops and realizing.

state_read: issue 22's loop, u = tanh(S @ u); float(u.sum()) for 300 steps at
n=256, beside NumPy's: one program replayed, the state kept each step.

Run: PYTHONPATH=build/python .venv/bin/python bench/program_loop.py
"""
import statistics
import time

import numpy as np

import braze as bz

RNG = np.random.default_rng(0)


def bias_relu_scale_softmax(x, b, s):
    return bz.softmax(bz.maximum(x + b, 0.0) * s, axis=-1)


def np_bias_relu_scale_softmax(x, b, s):
    h = np.maximum(x + b, 0.0) * s
    e = np.exp(h - h.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def timed_loop(body, iterations):
    """body(i) per iteration: the first time apart, the median of the rest,
    and the stats deltas after the first."""
    bz.reset_stats()
    t = time.perf_counter()
    body(0)
    first = time.perf_counter() - t
    after_first = bz.stats()
    times = []
    for i in range(1, iterations):
        t = time.perf_counter()
        body(i)
        times.append(time.perf_counter() - t)
    end = bz.stats()
    per = {k: (end[k] - after_first[k]) / (iterations - 1) for k in ("allocations", "bytes_allocated", "arena_bytes")}
    return first, statistics.median(times), per, end


def loop(n, iterations=100):
    x = RNG.standard_normal((n, n), dtype=np.float32)
    b = RNG.standard_normal(n, dtype=np.float32)
    s = RNG.uniform(0.5, 1.5, (n, 1)).astype(np.float32)
    tx, tb, ts = bz.tensor(x), bz.tensor(b), bz.tensor(s)
    out = bz.zeros((n, n)).realize()
    step = bz.jit(bias_relu_scale_softmax)
    rows = []
    for name, body in (
        ("plain", lambda i: bias_relu_scale_softmax(tx, tb, ts).realize()),
        ("jit out=", lambda i: step(tx, tb, ts, out=out)),
    ):
        first, median, per, end = timed_loop(body, iterations)
        rows.append((name, first, median, per, end))
    want = np_bias_relu_scale_softmax(x, b, s)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-6)
    np_times = []
    for _ in range(min(iterations, 20)):
        t = time.perf_counter()
        np_bias_relu_scale_softmax(x, b, s)
        np_times.append(time.perf_counter() - t)
    print(f"\nloop [{n},{n}] x {iterations} iterations (numpy: {statistics.median(np_times) * 1e3:.3f} ms/iteration)")
    print(f"  {'':9} {'first ms':>9} {'ms/iter':>9} {'allocs/iter':>11} {'bytes/iter':>11} {'compiled':>8} {'replayed':>8}")
    for name, first, median, per, end in rows:
        print(f"  {name:9} {first * 1e3:9.3f} {median * 1e3:9.3f} {per['allocations']:11.2f} "
              f"{per['bytes_allocated']:11.0f} {end['programs_compiled']:8d} {end['programs_replayed']:8d}")


def chain(x):
    # 10 element-wise ops, each scalar a parameter (none is 0, 1, -1 or 2).
    y = x * 1.5 + 0.25
    y = bz.tanh(y) * 0.75 - 0.125
    y = bz.abs(y) + 0.5
    y = bz.sqrt(y) * 3.0
    y = bz.maximum(y, 0.3) - 0.0625
    return y


def np_chain(x):
    y = x * np.float32(1.5) + np.float32(0.25)
    y = np.tanh(y) * np.float32(0.75) - np.float32(0.125)
    y = np.abs(y) + np.float32(0.5)
    y = np.sqrt(y) * np.float32(3.0)
    y = np.maximum(y, np.float32(0.3)) - np.float32(0.0625)
    return y


def small_chain(realizes=10_000):
    x = RNG.standard_normal(1024, dtype=np.float32)
    tx = bz.tensor(x)
    np.testing.assert_allclose(chain(tx).numpy(), np_chain(x), rtol=1e-5, atol=1e-6)
    bz.reset_stats()

    def per_call(f):
        for _ in range(100):
            f()
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(realizes // 5):
                f()
            best = min(best, (time.perf_counter() - t) / (realizes // 5))
        return best * 1e6

    before = bz.stats()
    braze_us = per_call(lambda: chain(tx).realize())
    after = bz.stats()
    record_us = per_call(lambda: chain(tx))
    numpy_us = per_call(lambda: np_chain(x))
    n = after["realizations"] - before["realizations"]
    print(f"\nsmall_chain: 10 element-wise ops on 1024 float32, {realizes} realizes per measurement (best of 5)")
    print(f"  braze  {braze_us:7.2f} us per record + realize (recording the 10 ops alone: {record_us:.2f} us)")
    print(f"  numpy  {numpy_us:7.2f} us for the same 10 ops")
    print(f"  braze / numpy: {braze_us / numpy_us:.2f}x; kernels per realize "
          f"{(after['kernels_launched'] - before['kernels_launched']) / n:.0f}, "
          f"allocations per realize {(after['allocations'] - before['allocations']) / n:.2f}, "
          f"programs compiled {after['programs_compiled'] - before['programs_compiled']}, "
          f"replayed {after['programs_replayed'] - before['programs_replayed']}")


def state_read(n=256, steps=300):
    """Issue 22's loop: a state updated by a mat-vec and read as a scalar
    every step (u = tanh(S @ u); float(u.sum())). Before the held state was
    kept (Note [Held values are kept]) every read recomputed its history:
    0.89 s and 17,802 launches for 300 steps."""
    S = (RNG.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    u0 = RNG.standard_normal((n, 1)).astype(np.float32)

    def run(m, s, u):
        total = 0.0
        for _ in range(steps):
            u = m.tanh(s @ u)
            total += float(u.sum())
        return total

    s_bz, u_bz = bz.tensor(S), bz.tensor(u0)
    before = bz.stats()
    run(bz, s_bz, u_bz)  # compiles once
    after = bz.stats()
    t_bz = min(timed(lambda: run(bz, s_bz, u_bz)) for _ in range(3))
    t_np = min(timed(lambda: run(np, S, u0)) for _ in range(3))
    print(f"state_read n={n}, {steps} steps: braze {t_bz * 1e3:.1f} ms, NumPy {t_np * 1e3:.1f} ms "
          f"(braze/NumPy time {t_bz / t_np:.2f}x); per step: kernels "
          f"{(after['kernels_launched'] - before['kernels_launched']) / steps:.0f}, values kept "
          f"{(after['values_kept'] - before['values_kept']) / steps:.0f}; programs compiled "
          f"{after['programs_compiled'] - before['programs_compiled']}, "
          f"replayed {after['programs_replayed'] - before['programs_replayed']}")


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    loop(4096)
    loop(64, iterations=1000)
    small_chain()
    state_read()
