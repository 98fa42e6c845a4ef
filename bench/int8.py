"""int8 inference (issue 28): products summed in int32 and quantized layers,
braze beside its own float32 path and the peers, in one process.

Products (Note [Integer matmul]): braze's a.astype(int32) @ w.astype(int32)
on int8 values (one oneDNN s8 x s8 -> s32 call) beside the same product
written for NumPy (an int32 matmul, which NumPy runs without a BLAS),
NumPy's float32 matmul (OpenBLAS), braze's float32 matmul, JAX (lax.dot
with preferred_element_type=int32, jax.jit) and PyTorch (torch._int_mm)
where installed. Every int32 result is checked equal to NumPy's.

Quantized layers, the mlp workload's first layer ([256, 1024] @ [1024,
4096], relu) and a ResNet-style 3x3 convolution ([4, 64, 56, 56] x [64,
64, 3, 3], padding 1, relu): braze's int8 product or convolution, its
per-channel dequantize, relu and uint8 requantize (one library call and
one kernel: Note [Integer convolutions in oneDNN's layouts] for the
convolution) against braze's float32 layer and, where PyTorch installs,
its quantized CPU ops (torch.ops.quantized.linear_relu / conv2d_relu on
prepacked per-channel int8 weights, quint8 activations: what torch.ao's
static quantization runs) and its float32 layer. The quantized outputs
are checked within one output step of the float layer.

Times are the best of BENCH_REPS rounds in turn (bench/timing.py); GOP/s
counts 2 multiply-adds per weight use.

Run: PYTHONPATH=build/python .venv/bin/python bench/int8.py
(PyTorch: a virtual environment with torch, PYTHONPATH as above.)
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
    import warnings

    import torch
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")  # torch.ao's own deprecation
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


def matmul_layer(m, k, n, out_scale=0.05):
    """relu(dequantize(a @ w)) requantized to uint8, against the float layer."""
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-127, 128, (k, n)).astype(np.int8)
    sa, sw = 0.02, np.linspace(0.001, 0.002, n).astype(np.float32)
    ta, tw = bz.tensor(a), bz.tensor(w)
    fa, fw = bz.tensor(a.astype(np.float32) * sa), bz.tensor(w.astype(np.float32) * sw)

    def quantized():
        acc = ta.astype("int32") @ tw.astype("int32")
        return bz.quantize(bz.relu(bz.dequantize(acc, sa * sw, axis=1)), out_scale, 0, "uint8").numpy()

    def floating():
        return bz.relu(fa @ fw).numpy()

    bz.reset_stats()
    q = quantized()
    steps = bz.stats()["kernels_launched"]
    f = floating()
    err = np.abs(q.astype(np.float32) * out_scale - np.minimum(f, 255 * out_scale)).max()
    fns = {"braze int8 layer": quantized, "braze f32 layer": floating, **torch_linear_layer(a, w, sa, sw, out_scale)}
    if "torch quantized layer" in fns:
        terr = np.abs(fns["torch quantized layer"]().numpy().astype(np.float32) * out_scale -
                      np.minimum(f, 255 * out_scale)).max()
        print(f"\n(torch's quantized layer: largest error against braze's float layer {terr:.4f})")
    times = best_in_turn(fns)
    report(f"quantized layer [{m}, {k}] @ [{k}, {n}], relu, uint8 out: {steps} steps (a call and a kernel); largest "
           f"error against the float layer {err:.4f} (the output step is {out_scale})", 2 * m * k * n, times,
           "braze int8 layer")


def report(title, ops, times, base):
    print(f"\n{title}")
    print(f"{'system':<22} {'ms':>9} {'GOP/s':>8} {base + ' is':>22}")
    for name, t in times.items():
        print(f"{name:<22} {t * 1e3:9.3f} {ops / t / 1e9:8.1f} {t / times[base]:21.2f}x")


def _torch_qweight(w, sw):
    """int8 weights with per-output-channel scales (axis 0: PyTorch's
    [out, in] linear and [out, in, kh, kw] convolution weights)."""
    return torch.quantize_per_channel(torch.from_numpy(w.astype(np.float32)) * torch.from_numpy(sw).reshape(
        (-1,) + (1,) * (w.ndim - 1)), torch.from_numpy(sw.astype(np.float64)), torch.zeros(len(sw), dtype=torch.int64),
        0, torch.qint8)


def conv_layer(n, c, h, w_, k, out_scale=0.05):
    """relu(dequantize(conv(q, w))) requantized to uint8, 3x3, padding 1."""
    rng = np.random.default_rng(2)
    q = rng.integers(0, 256, (n, c, h, w_)).astype(np.uint8)  # activations after a relu: uint8, zero point 0
    w = rng.integers(-127, 128, (k, c, 3, 3)).astype(np.int8)
    sa, sw = 0.01, np.linspace(0.0005, 0.001, k).astype(np.float32)
    tq, tw = bz.tensor(q), bz.tensor(w)
    fx, fw = bz.tensor(q.astype(np.float32) * sa), bz.tensor(w.astype(np.float32) * sw[:, None, None, None])

    def quantized():
        acc = bz.conv2d(tq.astype("int32"), tw.astype("int32"), padding=1)
        return bz.quantize(bz.relu(bz.dequantize(acc, sa * sw, axis=1)), out_scale, 0, "uint8").numpy()

    def floating():
        return bz.relu(bz.conv2d(fx, fw, padding=1)).numpy()

    bz.reset_stats()
    got = quantized()
    steps = bz.stats()["kernels_launched"] + bz.stats()["library_calls_reference"]
    want = floating()
    err = np.abs(got.astype(np.float32) * out_scale - np.minimum(want, 255 * out_scale)).max()
    fns = {"braze int8 layer": quantized, "braze f32 layer": floating}
    if torch is not None and hasattr(torch.ops, "quantized"):
        qx = torch.quantize_per_tensor(torch.from_numpy(q.astype(np.float32) * sa), sa, 0, torch.quint8)
        packed = torch.ops.quantized.conv2d_prepack(_torch_qweight(w, sw), None, [1, 1], [1, 1], [1, 1], 1)
        xf, wf = torch.from_numpy(q.astype(np.float32) * sa), torch.from_numpy(fw.numpy().copy())
        fns["torch quantized layer"] = lambda: torch.ops.quantized.conv2d_relu(qx, packed, out_scale, 0).int_repr()
        fns["torch f32 layer"] = lambda: torch.relu(torch.nn.functional.conv2d(xf, wf, padding=1))
        terr = np.abs(fns["torch quantized layer"]().numpy().astype(np.float32) * out_scale -
                      np.minimum(want, 255 * out_scale)).max()
        print(f"\n(torch's quantized layer: largest error against braze's float layer {terr:.4f})")
    times = best_in_turn(fns)
    report(f"quantized conv layer [{n}, {c}, {h}, {w_}] x [{k}, {c}, 3, 3], padding 1, relu, uint8 out: {steps} steps"
           f" (a call and a kernel); largest error against the float layer {err:.4f} (the output step is "
           f"{out_scale})", 2 * n * k * c * h * w_ * 9, times, "braze int8 layer")


def torch_linear_layer(a, w, sa, sw, out_scale):
    """torch's static quantized linear + relu on the same values (quint8 in
    and out), or nothing where PyTorch is not installed."""
    if torch is None or not hasattr(torch.ops, "quantized"):
        return {}
    shifted = (a.astype(np.int16) + 128).astype(np.uint8)  # quint8 with zero point 128: the same real values
    qx = torch._make_per_tensor_quantized_tensor(torch.from_numpy(shifted), sa, 128)
    packed = torch.ops.quantized.linear_prepack(_torch_qweight(np.ascontiguousarray(w.T), sw), None)
    xf = torch.from_numpy(a.astype(np.float32) * sa)
    wf = torch.from_numpy((w.astype(np.float32) * sw).T.copy())
    return {"torch quantized layer": lambda: torch.ops.quantized.linear_relu(qx, packed, out_scale, 0).int_repr(),
            "torch f32 layer": lambda: torch.relu(torch.nn.functional.linear(xf, wf))}


if __name__ == "__main__":
    print(f"oneDNN int8 into int32 exactly here: {bz._core._library_calls()['int8']} "
          f"({bz._core._library_calls()['isa']}); PyTorch: {torch.__version__ if torch else 'not installed'}")
    product(256, 1024, 4096)
    product(1024, 1024, 1024)
    product(64, 64, 64)
    matmul_layer(256, 1024, 4096)
    conv_layer(4, 64, 56, 56, 64)
