"""braze from several Python threads (docs/threads.md): threads realizing
different and identical graphs get NumPy's answers, identical graphs make
one program, lazy tensors can be shared, a realize beside the
copy-bandwidth probe finishes (it hung), and the binding lets go of the
GIL while braze computes, so Python threads compute in parallel.
scripts/sanitize.sh thread runs this module under ThreadSanitizer."""

import faulthandler
import math
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import braze as bz

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture(autouse=True)
def no_hang():
    """A deadlock here must fail CI, not hang it: past 300 s the process
    prints every thread's stack and exits."""
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def on_threads(n, body):
    """body(t) on n threads started together; re-raises the first error."""
    start = threading.Barrier(n)
    errors = []

    def run(t):
        start.wait()
        try:
            body(t)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def np_softmax(h):
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b


# Graphs of every kind, past the size at which kernels split across the
# pool; each is (inputs, braze's graph of them and a scalar, NumPy's).
CASES = {
    "elementwise": ([rand(256, 160), rand(256, 160)],
                    lambda a, b, s: bz.exp(a * s) + bz.tanh(b) - a / (bz.abs(b) + 1.0),
                    lambda a, b, s: np.exp(a * s) + np.tanh(b) - a / (np.abs(b) + 1.0)),
    "row_sum": ([rand(512, 129)], lambda a, s: bz.sum(bz.exp(a * s), axis=1),
                lambda a, s: np.exp(a * s).sum(axis=1)),
    "softmax": ([rand(300, 257)], lambda a, s: bz.softmax(a * s, axis=-1), lambda a, s: np_softmax(a * s)),
    "layer_norm": ([rand(128, 384), rand(384), rand(384)],
                   lambda x, w, b, s: bz.layer_norm(x * s, w, b),
                   lambda x, w, b, s: np_layer_norm(x * s, w, b)),
    "matmul_bias_relu": ([rand(64, 96), rand(96, 80), rand(80)],
                         lambda a, w, b, s: bz.maximum(a @ w + b, 0.0) * s,
                         lambda a, w, b, s: np.maximum(a @ w + b, 0.0) * s),
    "two_matmuls": ([rand(32, 48), rand(48, 40), rand(32, 24), rand(24, 40)],
                    lambda a, b, c, d, s: (a @ b) * s + c @ d,
                    lambda a, b, c, d, s: (a @ b) * s + c @ d),
    # BLAS calls (jit_cpu/blas_matmul.h): float64 matmul, float32 matrix-vector.
    "float64_matmul": ([RNG.standard_normal((48, 40)), RNG.standard_normal((40, 56))],
                       lambda a, b, s: (a @ b) * s, lambda a, b, s: (a @ b) * s),
    "matvec": ([rand(200, 96), rand(96, 1)], lambda a, v, s: bz.tanh(a @ v) * s, lambda a, v, s: np.tanh(a @ v) * s),
}
TENSORS = {name: [bz.tensor(x) for x in xs] for name, (xs, _, _) in CASES.items()}


def check(name, s):
    xs, build, want = CASES[name]
    got = build(*TENSORS[name], s).numpy()
    np.testing.assert_allclose(got, want(*[x.astype(np.float64) for x in xs], s), rtol=2e-4, atol=2e-4,
                               err_msg=f"{name} with scale {s}")


def test_threads_realizing_mixed_graphs_match_numpy():
    names = sorted(CASES)
    bz.clear_programs()  # the first round makes them, on several threads at once

    def body(t):
        for _ in range(3):
            for k in range(len(names)):
                check(names[(k + 2 * t) % len(names)], 0.37 + 0.11 * t)

    on_threads(4, body)


@pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference", reason="the reference backend makes no programs")
def test_threads_realizing_one_graph_make_one_program():
    x, w, b = bz.tensor(rand(48, 200)), bz.tensor(rand(200, 40)), bz.tensor(rand(40))
    bz.clear_programs()
    before = bz.stats()
    results = [None] * 6
    scales = [0.37 + 0.11 * t for t in range(6)]  # none special (1, 2, 0.5, ...): one structure

    def body(t):
        results[t] = bz.softmax(bz.gelu(x @ w + b) * scales[t], axis=-1).numpy()

    on_threads(6, body)
    after = bz.stats()
    assert after["programs_compiled"] - before["programs_compiled"] == 1
    assert after["programs_replayed"] - before["programs_replayed"] == 5
    h = x.numpy().astype(np.float64) @ w.numpy() + b.numpy()
    gelu = 0.5 * h * (1 + np.vectorize(math.erf)(h / np.sqrt(2)))
    for t, got in enumerate(results):
        np.testing.assert_allclose(got, np_softmax(gelu * scales[t]), rtol=2e-4, atol=1e-6)


def test_threads_share_lazy_tensors():
    x = rand(257, 129)
    xt = bz.tensor(x)
    y_want = np.exp(x.astype(np.float64) * 0.5) + 1.0
    for _ in range(10):
        y = bz.exp(xt * 0.5) + 1.0  # lazy, realized by whichever thread comes first
        z = bz.sum(y, axis=1)

        def body(t):
            if t % 3 == 0:
                np.testing.assert_allclose(y.numpy(), y_want, rtol=1e-5)
            elif t % 3 == 1:
                np.testing.assert_allclose(z.numpy(), y_want.sum(axis=1), rtol=1e-4)
            else:
                np.testing.assert_allclose((y * 2.0).numpy(), 2 * y_want, rtol=1e-5)

        on_threads(6, body)


def test_a_bad_call_on_one_thread_leaves_the_others_working():
    def body(t):
        if t == 0:
            for _ in range(20):
                with pytest.raises(ValueError):
                    bz.tensor(rand(3, 4)) + bz.tensor(rand(5, 6))
        else:
            for _ in range(5):
                check("softmax", 1.0)

    on_threads(3, body)


def run_script(script, timeout, **env):
    """Runs `script` in a fresh interpreter; a hang past `timeout` seconds fails the test."""
    environment = {**os.environ, **env}
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                              timeout=timeout, env=environment)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"did not finish in {timeout} s (a hang):\n{e.stdout}\n{e.stderr}")
    assert done.returncode == 0, f"exit code {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_a_realize_beside_the_copy_bandwidth_probe_finishes():
    # It hung holding the GIL or crashed in 8 of 8 runs: ThreadPool::run
    # entered from two threads at once (Note [Pool jobs]).
    out = run_script("""
        import threading
        import numpy as np
        import braze as bz
        x = bz.tensor(np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32))
        want = np.exp(x.numpy().astype(np.float64) * 0.5).sum(axis=1)
        for attempt in range(3):
            bandwidth = []
            probe = threading.Thread(target=lambda: bandwidth.append(bz._core._copy_bandwidth()))
            probe.start()
            while probe.is_alive():
                np.testing.assert_allclose(bz.sum(bz.exp(x * 0.5), axis=1).numpy(), want, rtol=1e-4)
            probe.join()
            assert bandwidth[0] > 1e8, bandwidth
        print("ok")
    """, timeout=240)
    assert out.strip() == "ok"


def test_python_threads_compute_while_one_realizes():
    # While the main thread is inside one long realize, a second thread runs
    # Python code and realizes small graphs of its own: impossible if the
    # binding held the GIL through the realize. Measured in a fresh process
    # with one braze thread, so the two threads have a core each; a window
    # of 0.4 s or more, a margin of 50 ms at each end (the GIL's switch
    # interval is 5 ms), and three tries, so a loaded machine does not fail it.
    out = run_script("""
        import threading, time
        import numpy as np
        import braze as bz
        x = bz.tensor(np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32))
        small = bz.tensor(np.ones((64, 64), np.float32))

        def heavy(k):
            # k roots of one program: distinct scalars are distinct parameters, so none is shared.
            return [bz.sum(bz.tanh(bz.exp(x * (0.5 + 1e-3 * i)) + x) * x) for i in range(k)]

        bz.realize(*heavy(1))  # compiles
        start = time.perf_counter(); bz.realize(*heavy(1)); one = time.perf_counter() - start
        for attempt in range(3):
            k = max(1, int((0.4 * 2 ** attempt) / max(one, 1e-4)) + 1)
            roots = heavy(k)
            stop = threading.Event()
            spans = []
            def beside():
                while not stop.is_set():
                    begin = time.perf_counter()
                    assert float((small * 2.0).sum().item()) == 8192.0
                    spans.append((begin, time.perf_counter()))
            other = threading.Thread(target=beside)
            other.start()
            time.sleep(0.05)
            start = time.perf_counter()
            bz.realize(*roots)
            end = time.perf_counter()
            stop.set()
            other.join()
            inside = [s for s in spans if start + 0.05 < s[0] and s[1] < end - 0.05]
            print(f"window {end - start:.3f} s, {len(inside)} realizes of the other thread inside it")
            if len(inside) >= 2:
                print("overlap")
                break
    """, timeout=240, BRAZE_NUM_THREADS="1")
    assert "overlap" in out, out
