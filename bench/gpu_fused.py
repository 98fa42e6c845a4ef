"""GPU workloads of shared/bench/WORKLOADS.md: the CPU workloads'
computations sized up to 256 MB per tensor, braze on device "cuda" beside
PyTorch eager, torch.compile, CuPy and JAX (jax.jit) where they are
installed, in one process. Prints per workload and system the best-of-7
time, the roofline ratio against a device-to-device copy of the workload's
largest tensor timed just before it, and braze's kernel count; then what a
kernel costs to compile (NVRTC) and to load from the disk cache, measured
in two child processes sharing a fresh BRAZE_CACHE_DIR.

Then the library calls beside PyTorch eager at the same shapes (matmul
through cuBLASLt, conv2d through cuDNN; TF32 off on both sides), and the
host time of a replayed program (a small program called in a loop with
out=, the device's own work too short to matter), launched as one CUDA
graph and step by step.

Run on a machine with a GPU:
    PYTHONPATH=build/python .venv/bin/python bench/gpu_fused.py
`--scale S` divides every tensor's rows (or length) by S: a check of the
script itself, which the tests run under BRAZE_CUDA=emulate with tiny
sizes. Figures from an emulated device mean nothing and are labelled so.
`--no-compile` leaves torch.compile out (its compiles take most of the
run's time).
"""
import os

# JAX takes 75% of the GPU's memory when it first sees it; in this process
# braze, PyTorch and CuPy need theirs: JAX allocates as it goes instead.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import argparse
import json
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

import numpy as np

import braze as bz
from timing import REPS

# Launches per timed repetition: GPU kernels on 256 MB take ~0.1-0.3 ms, the
# same order as one host-device round trip, so each repetition launches
# several and synchronizes once (every system alike).
LAUNCHES = 10


def gpu_best(step, sync, launches=LAUNCHES):
    """Best of REPS repetitions of `launches` back-to-back calls of `step`,
    per call, after a warm-up (which absorbs compilation)."""
    step()
    sync()
    times = []
    for _ in range(REPS):
        t = time.perf_counter()
        for _ in range(launches):
            step()
        sync()
        times.append((time.perf_counter() - t) / launches)
    return min(times)


def host_per_call(step, sync, launches=LAUNCHES):
    """Seconds a call of `step` keeps the host, launches queued without a
    wait: near the GPU time per call where a call waits for the device."""
    sync()
    t = time.perf_counter()
    for _ in range(launches):
        step()
    host = (time.perf_counter() - t) / launches
    sync()
    return host


def braze_sync():
    bz.synchronize("cuda")


def braze_step(fn, *inputs):
    """fn jitted over device tensors, writing into one kept output (a replay
    launches the program's kernels and allocates nothing: docs/programs.md),
    and that output."""
    jf = bz.jit(fn)
    out = jf(*inputs)
    return (lambda: jf(*inputs, out=out)), out


def copy_bandwidth(nbytes):
    """Bytes/s of a device-to-device copy of `nbytes` (read + write)."""
    n = nbytes // 4
    src, dst = bz.ones(n, device="cuda").realize(), bz.zeros(n, device="cuda").realize()
    return 2 * nbytes / gpu_best(lambda: bz.copyto(dst, src), braze_sync)


def workloads(scale):
    """(name, min bytes, braze fn, its inputs as NumPy arrays, peer fn over
    an ops namespace (numpy_like / torch_ops)) for each workload."""
    rng = np.random.default_rng(0)
    n16 = (64 << 20) // scale  # 64M float32 = 256 MB
    rows = 8192 // scale  # [8192, 8192] float32 = 256 MB
    x16 = rng.standard_normal(n16, dtype=np.float32)
    X = rng.standard_normal((rows, 8192), dtype=np.float32)
    b = rng.standard_normal(8192, dtype=np.float32)
    s = rng.standard_normal((rows, 1), dtype=np.float32)
    L = rng.standard_normal((65536 // scale, 1024), dtype=np.float32)  # 256 MB
    g = rng.standard_normal(1024, dtype=np.float32)
    be = rng.standard_normal(1024, dtype=np.float32)
    Xt = rng.standard_normal((rows, rows), dtype=np.float32)  # square, for X.T + X

    def gelu(m, x):
        return 0.5 * x * (1 + m.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    def softmax(m, x):
        e = m.exp(x - m.rowmax(x))
        return e / m.rowsum(e)

    def layernorm(m, x, g, b):
        c = x - m.rowmean(x)
        return c / m.sqrt(m.rowmean(c * c) + 1e-5) * g + b

    return [
        ("gelu_256M", 2 * x16.nbytes, lambda x: gelu(bz, x), (x16,), gelu),
        ("bias_relu_scale", 2 * X.nbytes, lambda X, b, s: bz.maximum(X + b, 0.0) * s, (X, b, s),
         lambda m, X, b, s: m.relu(X + b) * s),
        ("softmax_rows", 2 * X.nbytes, lambda X: bz.softmax(X, axis=-1), (X,), softmax),
        ("layernorm", 2 * L.nbytes, lambda L, g, b: bz.layer_norm(L, g, b, eps=1e-5), (L, g, be), layernorm),
        ("colsum", X.nbytes + X.nbytes // X.shape[0], lambda X: X.sum(axis=0), (X,), lambda m, X: m.colsum(X)),
        # One result: split in two reductions (Note [Split reductions]).
        ("sum_all", x16.nbytes, lambda x: x.sum(), (x16,), lambda m, x: m.total(x)),
        ("transpose_add", 2 * Xt.nbytes, lambda X: X.T + X, (Xt,), lambda m, X: X.T + X),
        # A column sum of a transposed view: rows of memory (Note [Loops in memory order]).
        ("colsum_of_T", Xt.nbytes + Xt.nbytes // Xt.shape[0], lambda X: X.T.sum(axis=0), (Xt,),
         lambda m, X: m.colsum(X.T)),
    ]


# --- peers: each gives (step, sync) over its own copies of the inputs, or None ------


def numpy_like(m):
    """The ops the peer functions use, for NumPy-like modules (CuPy, jax.numpy)."""
    return SimpleNamespace(tanh=m.tanh, exp=m.exp, sqrt=m.sqrt, relu=lambda x: m.maximum(x, 0),
                           rowmax=lambda x: x.max(-1, keepdims=True), rowsum=lambda x: x.sum(-1, keepdims=True),
                           rowmean=lambda x: x.mean(-1, keepdims=True), colsum=lambda x: x.sum(axis=0),
                           total=lambda x: x.sum())


def torch_ops(torch):
    return SimpleNamespace(tanh=torch.tanh, exp=torch.exp, sqrt=torch.sqrt, relu=torch.relu,
                           rowmax=lambda x: x.amax(-1, keepdim=True), rowsum=lambda x: x.sum(-1, keepdim=True),
                           rowmean=lambda x: x.mean(-1, keepdim=True), colsum=lambda x: x.sum(0),
                           total=lambda x: x.sum())


def torch_peer(fn, arrays, compiled):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    args = [torch.from_numpy(a).cuda() for a in arrays]
    ops = torch_ops(torch)
    f = lambda *xs: fn(ops, *xs)
    if compiled:
        f = torch.compile(f)
    return (lambda: f(*args)), torch.cuda.synchronize


def cupy_peer(fn, arrays):
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception:  # not installed, or no device
        return None
    args, ops = [cp.asarray(a) for a in arrays], numpy_like(cp)
    return (lambda: fn(ops, *args)), cp.cuda.Device().synchronize


def jax_peer(fn, arrays):
    try:
        import jax
        import jax.numpy as jnp
        gpu = jax.devices("gpu")[0]
    except Exception:  # not installed, or no GPU backend
        return None
    args, ops = [jax.device_put(a, gpu) for a in arrays], numpy_like(jnp)
    jf = jax.jit(lambda *xs: fn(ops, *xs))
    last = []

    def step():
        last[:] = [jf(*args)]
    return step, lambda: last and last[0].block_until_ready()


def peers(fn, arrays, compiled=True):
    return {"torch": torch_peer(fn, arrays, compiled=False),
            "compile": torch_peer(fn, arrays, compiled=True) if compiled else None,
            "cupy": cupy_peer(fn, arrays), "jax": jax_peer(fn, arrays)}


# --- library calls beside PyTorch -------------------------------------------------------


def library_workloads(scale):
    """(name, flops, braze fn, inputs as NumPy arrays, torch fn) of the
    library calls: a float16 and a float32 matmul, a float16 conv2d."""
    rng = np.random.default_rng(1)
    n = max(8192 // scale, 8)
    m = max(4096 // scale, 8)
    a16 = rng.standard_normal((n, n), dtype=np.float32).astype(np.float16)
    b16 = (rng.standard_normal((n, n), dtype=np.float32) / np.sqrt(n)).astype(np.float16)
    a32 = rng.standard_normal((m, m), dtype=np.float32)
    b32 = (rng.standard_normal((m, m), dtype=np.float32) / np.sqrt(m)).astype(np.float32)  # NumPy 2: f32 / np.float64 is f64
    batch, ch, hw = max(32 // scale, 1), max(256 // scale, 4), 56
    x = rng.standard_normal((batch, ch, hw, hw), dtype=np.float32).astype(np.float16)
    w = (rng.standard_normal((ch, ch, 3, 3), dtype=np.float32) / np.sqrt(9 * ch)).astype(np.float16)
    conv_flops = 2 * batch * ch * ch * 9 * hw * hw

    def torch_conv(x, w):
        import torch
        return torch.nn.functional.conv2d(x, w, padding=1)

    return [
        ("matmul_f16", 2 * n ** 3, lambda a, b: a @ b, (a16, b16), lambda a, b: a @ b),
        ("matmul_f32", 2 * m ** 3, lambda a, b: a @ b, (a32, b32), lambda a, b: a @ b),
        ("conv2d_f16", conv_flops, lambda x, w: bz.conv2d(x, w, padding=1), (x, w), torch_conv),
    ]


def torch_library_peer(fn, arrays):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False  # as braze without BRAZE_ALLOW_TF32=1
    torch.backends.cudnn.allow_tf32 = False
    args = [torch.from_numpy(a).cuda() for a in arrays]
    return (lambda: fn(*args)), torch.cuda.synchronize


def run_library_workloads(scale, emulated):
    print(f"\n{'library call':16} {'system':8} {'time ms':>9} {'TFLOP/s':>9} {'kernels':>8}  note")
    for name, flops, fn, arrays, torch_fn in library_workloads(scale):
        inputs = [bz.tensor(a, device="cuda") for a in arrays]
        step, out = braze_step(fn, *inputs)
        bz.reset_stats()
        step()
        kernels = bz.stats()["kernels_launched"]
        if name.startswith("matmul"):  # what is timed computes the product: its first rows against NumPy's
            a, b = arrays
            want = a[:64].astype(np.float64) @ b.astype(np.float64)
            np.testing.assert_allclose(out[:64].numpy().astype(np.float64), want, rtol=2e-2, atol=2e-2)
        t = gpu_best(step, braze_sync, 1 if emulated else LAUNCHES)
        print(f"{name:16} {'braze':8} {t * 1e3:9.3f} {flops / t / 1e12:9.1f} {kernels:8d}")
        found = torch_library_peer(torch_fn, arrays)
        if found is not None:
            tp = gpu_best(*found)
            print(f"{name:16} {'torch':8} {tp * 1e3:9.3f} {flops / tp / 1e12:9.1f} {'':8}  braze is {tp / t:.2f}x")


# --- host time per replayed program ------------------------------------------------------


def replay_overhead(emulated):
    """Host time of a replayed program: a one-kernel program and one of five
    chained softmaxes (a kernel or two each) on a small tensor, called in a loop with out= (nothing to compile,
    plan or allocate), synchronized once at the end: as a CUDA graph (the
    default, Note [Programs as CUDA graphs]) and step by step
    (BRAZE_CUDA_GRAPHS=0, programs made again)."""
    x = bz.tensor(np.linspace(-1, 1, 4096, dtype=np.float32), device="cuda")
    programs = {
        "elementwise": lambda x: x * 2.0 + 1.0,
        "softmax_x5": lambda x: bz.softmax(bz.softmax(bz.softmax(bz.softmax(bz.softmax(x.reshape((64, 64)), axis=0),
                                                                             axis=-1), axis=0), axis=-1), axis=0),
    }
    calls = 20 if emulated else 2000

    def per_call(fn):
        step, _ = braze_step(fn, x)
        bz.reset_stats()
        step()
        kernels = bz.stats()["kernels_launched"]
        braze_sync()
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            for _ in range(calls):
                step()
            braze_sync()
            best = min(best, (time.perf_counter() - t) / calls)
        return best, kernels, bz.stats()["graphs_launched"]

    print(f"\n{'replayed program':16} {'graph us':>9} {'steps us':>9} {'kernels':>8}")
    for name, fn in programs.items():
        graph, kernels, launched = per_call(fn)
        os.environ["BRAZE_CUDA_GRAPHS"] = "0"
        bz.clear_programs()
        try:
            steps, _, _ = per_call(fn)
        finally:
            del os.environ["BRAZE_CUDA_GRAPHS"]
            bz.clear_programs()
        assert launched > 0, f"{name}: no CUDA graph launched"
        print(f"{name:16} {graph * 1e6:9.1f} {steps * 1e6:9.1f} {kernels:8d}")


# --- compile and disk-cache times, in child processes ------------------------------


def first_runs(scale):
    """Child: the first realize of every workload (fusion, kernels from
    NVRTC or the disk cache, load), as JSON."""
    out = []
    for name, _, fn, arrays, _ in workloads(scale):
        inputs = [bz.tensor(a, device="cuda") for a in arrays]
        bz.reset_stats()
        t = time.perf_counter()
        fn(*inputs).realize()
        braze_sync()
        st = bz.stats()
        out.append({"name": name, "ms": (time.perf_counter() - t) * 1e3, "compiled": st["kernels_compiled"],
                    "disk": st["cache_hits_disk"]})
    print(json.dumps(out))


def compile_and_cache_times(scale):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, BRAZE_CACHE_DIR=cache)
        runs = []
        for _ in ("cold", "warm"):
            r = subprocess.run([sys.executable, __file__, "--first-runs", "--scale", str(scale)], env=env,
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                raise RuntimeError(r.stderr)
            runs.append(json.loads(r.stdout.splitlines()[-1]))
    cold, warm = runs
    print(f"\n{'workload':16} {'cold first run':>15} {'compiled':>9} {'warm first run':>15} {'disk hits':>10}")
    for c, w in zip(cold, warm):
        print(f"{c['name']:16} {c['ms']:12.1f} ms {c['compiled']:9d} {w['ms']:12.1f} ms {w['disk']:10d}")
    compiled, disk = sum(c["compiled"] for c in cold), sum(w["disk"] for w in warm)
    if compiled and disk:
        per_compile = (sum(c["ms"] for c in cold) - sum(w["ms"] for w in warm)) / compiled
        per_hit = sum(w["ms"] for w in warm) / disk
        print(f"per kernel: NVRTC compile about {per_compile:.1f} ms more than a disk-cache hit "
              f"(a first run with the hit, fusion and load included: {per_hit:.2f} ms)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1, help="divide every tensor's rows or length by this")
    ap.add_argument("--first-runs", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    args = ap.parse_args()
    if args.first_runs:
        return first_runs(args.scale)
    emulated = os.environ.get("BRAZE_CUDA") == "emulate"
    print(f"device: {'host emulation (BRAZE_CUDA=emulate): times mean nothing' if emulated else 'cuda'}; "
          f"sizes / {args.scale}; best of {REPS} x {LAUNCHES} launches; "
          f"XLA_PYTHON_CLIENT_PREALLOCATE={os.environ['XLA_PYTHON_CLIENT_PREALLOCATE']}")
    print(f"{'workload':16} {'system':8} {'time ms':>9} {'roofline':>9} {'kernels':>8}  note")
    for name, min_bytes, fn, arrays, peer_fn in workloads(args.scale):
        bw = copy_bandwidth(max(a.nbytes for a in arrays))
        inputs = [bz.tensor(a, device="cuda") for a in arrays]
        step, out = braze_step(fn, *inputs)
        bz.reset_stats()
        step()
        kernels = bz.stats()["kernels_launched"]
        # What is timed computes the workload: braze's result against NumPy's.
        np.testing.assert_allclose(out.numpy(), peer_fn(numpy_like(np), *arrays), rtol=2e-4, atol=2e-4)
        t = gpu_best(step, braze_sync, 1 if emulated else LAUNCHES)
        host = host_per_call(step, braze_sync, 1 if emulated else LAUNCHES)
        print(f"{name:16} {'braze':8} {t * 1e3:9.3f} {min_bytes / bw / t:9.3f} {kernels:8d}  "
              f"copy {bw / 1e9:.0f} GB/s; host {host * 1e6:.0f} us a call")
        for peer, found in peers(peer_fn, arrays, compiled=not args.no_compile).items():
            if found is None:
                continue
            tp = gpu_best(*found)
            print(f"{name:16} {peer:8} {tp * 1e3:9.3f} {min_bytes / bw / tp:9.3f} {'':8}  braze is {tp / t:.2f}x")
    run_library_workloads(args.scale, emulated)
    replay_overhead(emulated)
    compile_and_cache_times(args.scale)


if __name__ == "__main__":
    main()
