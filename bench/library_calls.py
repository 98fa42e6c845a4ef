"""Compute-bound CPU workloads: the mlp workload of shared/bench/WORKLOADS.md
(relu(X@W1+b1)@W2+b2, X [256,1024], W1 [1024,4096], W2 [4096,1024]) and the
transformer block of examples/, float64 matmul (BLAS), what no library
runs (float64 convolution, integer matmul), float16 matmul and float32
convolutions with bias and relu, braze (oneDNN with fused
epilogues; OpenBLAS for float64; generated code) beside
NumPy (OpenBLAS), JAX (jax.jit, XLA on the CPU) and PyTorch eager (where
installed) in one process.

mlp is reported twice: the two matmuls alone, and the whole workload with the
bias adds and the relu; GFLOP/s counts the matmul FLOPs (2*M*N*K each) plus
one FLOP per bias add and per relu element in the second. Times are best of
REPS runs after one warm-up run (braze's warm-up creates the oneDNN
primitives; JAX's compiles).

Run: PYTHONPATH=build/python .venv/bin/python bench/library_calls.py
"""
import os
import sys
import time

import numpy as np

import braze as bz
from timing import REPS, best, best_in_turn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import transformer_block as tb  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None
try:
    import torch
except ImportError:
    torch = None  # a peer where installed (bench/requirements.txt)


def kernels(f):
    before = bz.stats()["kernels_launched"]
    f()
    return bz.stats()["kernels_launched"] - before


def row(workload, system, seconds, flops=None, k=None):
    gf = f"{flops / seconds / 1e9:8.1f}" if flops else f"{'':>8}"
    ks = f"{k:8d}" if k is not None else f"{'':>8}"
    print(f"{workload:<22} {system:<8} {seconds * 1e3:10.2f} {gf} {ks}")
    return seconds


def bench_mlp():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((256, 1024), dtype=np.float32)
    W1 = (rng.standard_normal((1024, 4096), dtype=np.float32) / 32).astype(np.float32)
    W2 = (rng.standard_normal((4096, 1024), dtype=np.float32) / 64).astype(np.float32)
    b1 = rng.standard_normal(4096, dtype=np.float32)
    b2 = rng.standard_normal(1024, dtype=np.float32)
    mm_flops = 2 * 256 * 1024 * 4096 * 2
    full_flops = mm_flops + 256 * 4096 * 2 + 256 * 1024
    x, w1, w2, c1, c2 = map(bz.tensor, (X, W1, W2, b1, b2))

    systems = {
        "braze": (lambda: ((x @ w1) @ w2).numpy(), lambda: (bz.relu(x @ w1 + c1) @ w2 + c2).numpy()),
        "numpy": (lambda: (X @ W1) @ W2, lambda: np.maximum(X @ W1 + b1, 0) @ W2 + b2),
    }
    if jax is not None:
        jx = [jnp.asarray(a) for a in (X, W1, W2, b1, b2)]
        mm = jax.jit(lambda a, p, q: (a @ p) @ q)
        full = jax.jit(lambda a, p, q, r, s: jnp.maximum(a @ p + r, 0) @ q + s)
        systems["jax"] = (lambda: mm(jx[0], jx[1], jx[2]).block_until_ready(),
                          lambda: full(*jx).block_until_ready())
    if torch is not None:
        tx = [torch.from_numpy(a) for a in (X, W1, W2, b1, b2)]
        systems["torch"] = (lambda: (tx[0] @ tx[1]) @ tx[2],
                            lambda: torch.relu(tx[0] @ tx[1] + tx[3]) @ tx[2] + tx[4])
    want = np.maximum(X.astype(np.float64) @ W1 + b1, 0) @ W2 + b2
    got = systems["braze"][1]()
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    results = {}
    for name, (mm_fn, full_fn) in systems.items():
        k = kernels(mm_fn) if name == "braze" else None
        results[("mm", name)] = row("mlp (matmuls only)", name, best(mm_fn), mm_flops, k)
    for name, (mm_fn, full_fn) in systems.items():
        k = kernels(full_fn) if name == "braze" else None
        results[("full", name)] = row("mlp (+bias, relu)", name, best(full_fn), full_flops, k)
    print(f"  braze/numpy GFLOP/s: matmuls only {results['mm', 'numpy'] / results['mm', 'braze']:.2f}x, "
          f"with bias and relu {results['full', 'numpy'] / results['full', 'braze']:.2f}x; "
          f"braze's max error relative to the largest output: {err:.1e}")
    turn = best_in_turn({(w, name): fns[i] for name, fns in systems.items() for i, w in enumerate(("mm", "full"))})
    ratios = ", ".join(f"{name} {turn['mm', name] / turn['mm', 'braze']:.2f}x and "
                       f"{turn['full', name] / turn['full', 'braze']:.2f}x" for name in systems if name != "braze")
    print(f"  timed in turn (one call of each per round): braze {mm_flops / turn['mm', 'braze'] / 1e9:.1f} and "
          f"{full_flops / turn['full', 'braze'] / 1e9:.1f} GFLOP/s; braze's GFLOP/s over {ratios} "
          f"(matmuls only and with bias and relu)")


def bench_transformer():
    rng = np.random.default_rng(0)
    weights = tb.make_weights(rng)
    causal = np.tril(np.ones((tb.T, tb.T), dtype=bool))
    X = rng.standard_normal((tb.B, tb.T, tb.D), dtype=np.float32)
    p = {k: bz.tensor(v) for k, v in weights.items()}
    mask = bz.tensor(causal)
    x = bz.tensor(X)
    systems = {"braze": lambda: tb.braze_block(x, p, mask).numpy(),
               "numpy": lambda: tb.numpy_block(X, weights, causal)}
    if jax is not None:
        jp = {k: jnp.asarray(v) for k, v in weights.items()}
        jmask, jx = jnp.asarray(causal), jnp.asarray(X)
        block = jax.jit(lambda x, p, m: jax_block(x, p, m))
        systems["jax"] = lambda: block(jx, jp, jmask).block_until_ready()
    if torch is not None:
        tp = {k: torch.from_numpy(v) for k, v in weights.items()}
        tmask, tx = torch.from_numpy(causal), torch.from_numpy(X)
        systems["torch"] = lambda: tb.torch_block(tx, tp, tmask)
    err = float(np.max(np.abs(systems["braze"]() - systems["numpy"]())))
    for name, f in systems.items():
        row("transformer block", name, best(f), None, kernels(f) if name == "braze" else None)
    print(f"  braze vs numpy: max abs difference {err:.1e}")


def jax_block(x, p, causal):
    B, T, D, H, DH = tb.B, tb.T, tb.D, tb.H, tb.DH

    def ln(v, w, b):
        mu = v.mean(-1, keepdims=True)
        return (v - mu) * jax.lax.rsqrt(((v - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b

    heads = lambda t: t.reshape(B, T, H, DH).transpose(0, 2, 1, 3)
    a = ln(x, p["ln1_w"], p["ln1_b"])
    q, k, v = (heads(a @ p["w" + n] + p["b" + n]) for n in "qkv")
    s = jnp.where(causal, (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(DH), -1e30)
    ctx = (jax.nn.softmax(s, -1) @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    h = x + ctx @ p["wo"] + p["bo"]
    return h + jax.nn.gelu(ln(h, p["ln2_w"], p["ln2_b"]) @ p["w1"] + p["b1"], approximate=False) @ p["w2"] + p["b2"]


def bench_float64():
    """float64 matmul (issue 22: it ran on the reference interpreter, 144 ms
    for 256x256 against NumPy's 0.67): braze's BLAS call beside NumPy's, and
    with a bias and relu after it (a generated kernel: BLAS takes no
    post-ops)."""
    rng = np.random.default_rng(1)
    for n in (256, 1024):
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        b = rng.standard_normal(n)
        a, bb, c = map(bz.tensor, (A, B, b))
        fns = {("mm", "braze"): lambda: (a @ bb).numpy(), ("mm", "numpy"): lambda: A @ B,
               ("full", "braze"): lambda: bz.relu(a @ bb + c).numpy(),
               ("full", "numpy"): lambda: np.maximum(A @ B + b, 0)}
        if torch is not None:
            ta, tb_, tc = (torch.from_numpy(v) for v in (A, B, b))
            fns["mm", "torch"] = lambda: ta @ tb_
            fns["full", "torch"] = lambda: torch.relu(ta @ tb_ + tc)
        np.testing.assert_allclose(fns["full", "braze"](), fns["full", "numpy"](), rtol=1e-9, atol=1e-9)
        before = bz.stats()["library_calls_reference"]
        k = kernels(fns["full", "braze"])
        assert bz.stats()["library_calls_reference"] == before, "a float64 matmul ran on the reference interpreter"
        turn = best_in_turn(fns)
        flops = 2 * n ** 3
        for (w, name), t in turn.items():
            label = f"f64 {n}^2 " + ("matmul" if w == "mm" else "+bias,relu")
            row(label, name, t, flops, k if (w, name) == ("full", "braze") else None)
        print(f"  float64 {n}: braze's GFLOP/s over NumPy's {turn['mm', 'numpy'] / turn['mm', 'braze']:.2f}x "
              f"(matmul), {turn['full', 'numpy'] / turn['full', 'braze']:.2f}x (with bias and relu), timed in turn")


def bench_no_library():
    """What no library here runs (issue 22: the reference interpreter ran
    it, 10-100x slower): a float64 convolution (Note [Convolutions as
    matmuls]: BLAS calls, one per kernel tap) beside PyTorch's float64
    convolution, and integer matmuls (Note [Integer matmul as a sum]:
    generated sums of products) beside NumPy's own integer loops and
    PyTorch's, and float16 matmuls (Note [Half library calls in float32]:
    oneDNN's float32 call between casts) beside NumPy's float16 loop and
    PyTorch's float16 matmul."""
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((4, 64, 56, 56)), rng.standard_normal((64, 64, 3, 3))
    tx, tw = bz.tensor(x), bz.tensor(w)
    fns = {"braze": lambda: bz.conv2d(tx, tw, padding=1).numpy()}
    if torch is not None:
        px, pw = torch.from_numpy(x), torch.from_numpy(w)
        fns["torch"] = lambda: torch.nn.functional.conv2d(px, pw, padding=1)
        np.testing.assert_allclose(fns["braze"](), fns["torch"]().numpy(), rtol=1e-9, atol=1e-9)
    before = bz.stats()["library_calls_reference"]
    k = kernels(fns["braze"])
    assert bz.stats()["library_calls_reference"] == before, "a float64 convolution ran on the reference interpreter"
    turn = best_in_turn(fns)
    flops = 2 * 4 * 64 * 56 * 56 * 64 * 9
    for name, t in turn.items():
        row("f64 conv 3x3", name, t, flops, k if name == "braze" else None)
    if torch is not None:
        print(f"  float64 conv: braze over PyTorch {turn['torch'] / turn['braze']:.2f}x, timed in turn")
    for dtype in (np.int32, np.int16, np.int64):
        A, B = (rng.integers(-100, 100, (512, 512)).astype(dtype) for _ in range(2))
        a, b = bz.tensor(A), bz.tensor(B)
        fns = {"braze": lambda: (a @ b).numpy(), "numpy": lambda: A @ B}
        if torch is not None and dtype != np.int16:  # PyTorch's CPU matmul has no int16
            ta, tb_ = torch.from_numpy(A), torch.from_numpy(B)
            fns["torch"] = lambda: ta @ tb_
        np.testing.assert_array_equal(fns["braze"](), fns["numpy"]())
        k = kernels(fns["braze"])
        turn = best_in_turn(fns)
        for name, t in turn.items():
            row(f"{np.dtype(dtype).name} 512^2 matmul", name, t, 2 * 512 ** 3, k if name == "braze" else None)
        print(f"  {np.dtype(dtype).name} matmul: braze over NumPy {turn['numpy'] / turn['braze']:.2f}x"
              + (f", over PyTorch {turn['torch'] / turn['braze']:.2f}x" if "torch" in turn else "") + ", timed in turn")
    A, B = (rng.standard_normal((256, 256)).astype(np.float16) for _ in range(2))
    a, b = bz.tensor(A), bz.tensor(B)
    fns = {"braze": lambda: (a @ b).numpy(), "numpy": lambda: A @ B}
    if torch is not None:
        ta, tb_ = torch.from_numpy(A), torch.from_numpy(B)
        fns["torch"] = lambda: ta @ tb_
    np.testing.assert_allclose(fns["braze"](), A.astype(np.float64) @ B, rtol=2e-2, atol=2e-2)
    before = bz.stats()["library_calls_reference"]
    k = kernels(fns["braze"])
    assert bz.stats()["library_calls_reference"] == before, "a float16 matmul ran on the reference interpreter"
    turn = best_in_turn(fns)
    for name, t in turn.items():
        row("float16 256^2 matmul", name, t, 2 * 256 ** 3, k if name == "braze" else None)
    print(f"  float16 matmul: braze over NumPy {turn['numpy'] / turn['braze']:.2f}x"
          + (f", over PyTorch {turn['torch'] / turn['braze']:.2f}x" if "torch" in turn else "") + ", timed in turn")


# (input, weight, stride, padding): the CNN of examples/train_cnn.py's two
# convolutions, a ResNet stage, its first layer, a 1x1 projection.
CONVOLUTIONS = [((64, 1, 8, 8), (16, 1, 3, 3), 1, 1), ((64, 16, 4, 4), (32, 16, 3, 3), 1, 1),
                ((8, 64, 56, 56), (64, 64, 3, 3), 1, 1), ((4, 256, 14, 14), (256, 256, 3, 3), 1, 1),
                ((8, 3, 224, 224), (64, 3, 7, 7), 2, 3), ((8, 256, 28, 28), (64, 256, 1, 1), 1, 0),
                ((32, 32, 32, 32), (64, 32, 3, 3), 1, 1)]


def bench_convolutions():
    """float32 conv2d + bias + relu (Note [Convolutions in oneDNN's
    layouts]: oneDNN's brgconv in its own layouts, the bias and relu applied
    by the call) beside PyTorch's, timed in turn."""
    rng = np.random.default_rng(3)
    for xs, ws, stride, padding in CONVOLUTIONS:
        x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
        b = rng.standard_normal(ws[0]).astype(np.float32)
        tx, tw, tb_ = bz.tensor(x), bz.tensor(w), bz.tensor(b).reshape(1, -1, 1, 1)
        fns = {"braze": lambda: bz.relu(bz.conv2d(tx, tw, stride=stride, padding=padding) + tb_).numpy()}
        if torch is not None:
            px, pw, pb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
            fns["torch"] = lambda: torch.relu(torch.nn.functional.conv2d(px, pw, pb, stride=stride, padding=padding))
            np.testing.assert_allclose(fns["braze"](), fns["torch"]().numpy(), rtol=1e-3, atol=1e-3)
        k = kernels(fns["braze"])
        turn = best_in_turn(fns)
        out = [(xs[i] + 2 * padding - ws[i]) // stride + 1 for i in (2, 3)]
        flops = 2 * np.prod(ws) * xs[0] * out[0] * out[1]
        name = f"conv {xs[1]}->{ws[0]} {ws[2]}x{ws[3]} {xs[2]}^2"
        for system, t in turn.items():
            row(name, system, t, flops, k if system == "braze" else None)
        if torch is not None:
            print(f"  {list(xs)} x {list(ws)}: braze over PyTorch {turn['torch'] / turn['braze']:.2f}x, timed in turn")


def openblas_core():
    """The kernel set NumPy's OpenBLAS picked at run time (OPENBLAS_CORETYPE
    overrides it: Haswell is AVX2 only, SkylakeX and later use AVX-512)."""
    import ctypes
    import glob
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*"))
    for lib in libs:
        for symbol in ("scipy_openblas_get_corename64_", "openblas_get_corename64_", "openblas_get_corename"):
            f = getattr(ctypes.CDLL(lib), symbol, None)
            if f is not None:
                f.restype = ctypes.c_char_p
                return f().decode()
    return "unknown"


def main():
    lib = bz._core._library_calls()
    print(f"{os.cpu_count()} CPU(s); load average {os.getloadavg()[0]:.1f}; best of {REPS}; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
          f"{lib['library']} for {lib['isa']}; NumPy's OpenBLAS core {openblas_core()}; "
          f"JAX {jax.__version__ if jax else 'not installed'}")
    print(f"{'workload':<22} {'system':<8} {'ms':>10} {'GFLOP/s':>8} {'kernels':>8}")
    bench_mlp()
    bench_float64()
    bench_no_library()
    bench_convolutions()
    bench_transformer()


if __name__ == "__main__":
    main()
