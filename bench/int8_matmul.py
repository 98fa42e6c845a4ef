"""int8 matmul with int32 sums (Note [Integer matmul], issue 28): braze
(a.astype(int32) @ w.astype(int32) on int8 values: one oneDNN s8 x s8 -> s32
call) beside the same product written for NumPy (an int32 matmul, which
NumPy runs without a BLAS), NumPy's float32 matmul (OpenBLAS), braze's
float32 matmul, JAX (lax.dot with preferred_element_type=int32, jax.jit) and
PyTorch (torch._int_mm) where installed, in one process; then a quantized
layer: the int8 product, its per-channel dequantize, relu and uint8
requantize (braze: one call and one kernel) against the float32 layer.
Every int32 result is checked equal to NumPy's; times are best of REPS
(bench/timing.py), GOP/s counts 2*M*N*K.

Run: PYTHONPATH=build/python .venv/bin/python bench/int8_matmul.py
"""
import numpy as np

import braze as bz
from timing import best_in_turn

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None
try:
    import torch
except ImportError:
    torch = None


def peers(a, w):
    """{system: (fn, result getter)} for a @ w summed in int32."""
    ta, tw = bz.tensor(a), bz.tensor(w)
    fa, fw = a.astype(np.float32), w.astype(np.float32)
    tfa, tfw = bz.tensor(fa), bz.tensor(fw)
    out = {
        "braze int8": lambda: (ta.astype("int32") @ tw.astype("int32")).numpy(),
        "braze f32": lambda: (tfa @ tfw).numpy(),
        "numpy f32": lambda: fa @ fw,
    }
    if a.shape[0] * a.shape[1] * w.shape[1] <= 1 << 28:  # NumPy's int32 matmul takes seconds past this
        a32, w32 = a.astype(np.int32), w.astype(np.int32)
        out["numpy int32"] = lambda: a32 @ w32
    if jax is not None:
        ja, jw = jnp.asarray(a), jnp.asarray(w)
        f = jax.jit(lambda x, y: jax.lax.dot(x, y, preferred_element_type=jnp.int32))
        out["jax int8"] = lambda: np.asarray(f(ja, jw).block_until_ready())
    if torch is not None and hasattr(torch, "_int_mm"):
        xa, xw = torch.from_numpy(a), torch.from_numpy(w)
        try:
            torch._int_mm(xa[:32, :32].contiguous(), xw[:32, :32].contiguous())
            out["torch _int_mm"] = lambda: torch._int_mm(xa, xw).numpy()
        except RuntimeError:
            pass  # no CPU kernel in this PyTorch
    return out


def product(m, k, n):
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    want = a.astype(np.int64) @ w.astype(np.int64)
    fns = peers(a, w)
    for name, f in fns.items():
        if "f32" not in name:
            assert np.array_equal(np.asarray(f()).astype(np.int64), want), name
    times = best_in_turn(fns)
    ops = 2 * m * k * n
    print(f"\n[{m}, {k}] @ [{k}, {n}]")
    print(f"{'system':<14} {'ms':>9} {'GOP/s':>8} {'braze int8 is':>14}")
    for name, t in times.items():
        print(f"{name:<14} {t * 1e3:9.3f} {ops / t / 1e9:8.1f} {t / times['braze int8']:13.1f}x")


def layer(m, k, n):
    """relu(dequantize(a @ w)) requantized to uint8, against the float layer."""
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    sa, sw = 0.02, np.linspace(0.001, 0.002, n).astype(np.float32)
    ta, tw = bz.tensor(a), bz.tensor(w)
    fa, fw = bz.tensor(a.astype(np.float32) * sa), bz.tensor(w.astype(np.float32) * sw)

    def quantized():
        acc = ta.astype("int32") @ tw.astype("int32")
        return bz.quantize(bz.relu(bz.dequantize(acc, sa * sw, axis=1)), 0.05, 0, "uint8").numpy()

    def floating():
        return bz.relu(fa @ fw).numpy()

    bz.reset_stats()
    q = quantized()
    steps = bz.stats()["kernels_launched"]
    f = floating()
    err = np.abs(q.astype(np.float32) * 0.05 - np.minimum(f, 255 * 0.05)).max()
    times = best_in_turn({"int8 layer": quantized, "float32 layer": floating})
    print(f"\nquantized layer [{m}, {k}] @ [{k}, {n}], relu, uint8 out: {steps} steps (a call and a kernel); "
          f"largest error against the float layer {err:.4f} (the output step is 0.05)")
    for name, t in times.items():
        print(f"{name:<14} {t * 1e3:9.3f} ms")


if __name__ == "__main__":
    print(f"oneDNN int8 into int32 exactly here: {bz._core._library_calls()['int8']} "
          f"({bz._core._library_calls()['isa']})")
    product(256, 1024, 4096)
    product(1024, 1024, 1024)
    product(64, 64, 64)
    layer(256, 1024, 4096)
