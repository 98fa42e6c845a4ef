"""Memory-bound CPU workloads of shared/bench/WORKLOADS.md, braze beside NumPy,
numexpr and JAX (jax.jit, XLA on the CPU) where they are installed, in one
process. Prints per workload and system the best-of-7 time, the roofline
ratio against a streaming-copy probe run just before it, and braze's kernel
count. First (compile) runs and braze's code generation time reported apart.

Run: scripts/bench.sh (installs the peers from bench/requirements.txt), or
     PYTHONPATH=build/python .venv/bin/python bench/cpu_fused.py
small_chain and loop are in program_loop.py, mlp in library_calls.py.
"""
import os
import statistics
import time

import numpy as np

import braze as bz
from timing import best

try:
    import numexpr as ne
except ImportError:
    ne = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None
try:
    import torch
except ImportError:
    torch = None



def copy_bandwidth():
    """Bytes/s of a read-N, write-N float32 copy, N = 16M, split across one
    thread per core: braze's probe (runtime/copy_bandwidth.h), the same as
    `braze run` uses. It streams its stores (non-temporal), so it moves the
    bytes it counts. NumPy's copyto is glibc's memcpy, which streams only
    past a threshold derived from the L3 size glibc believes: 288 MB on our
    2-core Zen 5 VMs, so a probe through it read each destination line
    before writing it, moved 3N bytes while counting 2N, and read about
    19 % low (every roofline ratio high, above 1.0 for a kernel that
    streams its output)."""
    return bz._core._copy_bandwidth()


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    c = x - m
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g + b


def jax_peer(f, *arrays):
    """f jitted over arrays already on JAX's CPU device; the first call
    (compilation) happens in best()'s warm-up."""
    if jax is None:
        return None
    args = [jnp.asarray(a) for a in arrays]
    jf = jax.jit(f)
    return lambda: jf(*args).block_until_ready()


def torch_peers(f, *arrays):
    """PyTorch eager and torch.compile (inductor, C++ on the CPU) running f
    over tensors that share the arrays' memory, one thread per core; none
    where PyTorch is not installed (bench/requirements.txt). torch.compile
    compiles in best()'s warm-up."""
    if torch is None:
        return {}
    torch.set_num_threads(int(os.environ.get("BRAZE_NUM_THREADS", os.cpu_count())))
    args = [torch.from_numpy(a) for a in arrays]
    compiled = torch.compile(f)
    return {"torch": lambda: f(*args), "compile": lambda: compiled(*args)}


def jax_layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    c = x - m
    return c * jax.lax.rsqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g + b


def main():
    rng = np.random.default_rng(0)
    x16 = rng.standard_normal(16 << 20, dtype=np.float32)
    X = rng.standard_normal((4096, 4096), dtype=np.float32)
    b = rng.standard_normal(4096, dtype=np.float32)
    s = rng.standard_normal((4096, 1), dtype=np.float32)
    L = rng.standard_normal((16384, 1024), dtype=np.float32)
    g = rng.standard_normal(1024, dtype=np.float32)
    be = rng.standard_normal(1024, dtype=np.float32)
    tx16, tX, tb, ts, tL, tg, tbe = map(bz.tensor, (x16, X, b, s, L, g, be))

    def gelu(x, m):
        return 0.5 * x * (1 + m.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    workloads = [
        ("gelu_16M", 2 * x16.nbytes,
         lambda: gelu(tx16, bz),  # x ** 3 is two multiplications (Note [Integer powers])
         {"numpy": lambda: gelu(x16, np),
          "numexpr": ne and (lambda: ne.evaluate("0.5*x*(1+tanh(0.7978845608*(x+0.044715*x**3)))", {"x": x16})),
          "jax": jax_peer(lambda x: gelu(x, jnp), x16),
          **torch_peers(lambda x: gelu(x, torch), x16)}),
        ("bias_relu_scale", 2 * X.nbytes, lambda: bz.maximum(tX + tb, 0.0) * ts,
         {"numpy": lambda: np.maximum(X + b, 0) * s,
          "numexpr": ne and (lambda: ne.evaluate("where(X + b > 0, X + b, 0) * s", {"X": X, "b": b, "s": s})),
          "jax": jax_peer(lambda X, b, s: jnp.maximum(X + b, 0) * s, X, b, s),
          **torch_peers(lambda X, b, s: torch.clamp_min(X + b, 0) * s, X, b, s)}),
        ("softmax_rows", 2 * X.nbytes, lambda: bz.softmax(tX),
         {"numpy": lambda: np_softmax(X), "jax": jax_peer(lambda X: jax.nn.softmax(X, axis=-1), X),
          **torch_peers(lambda X: torch.softmax(X, -1), X)}),
        ("layernorm", 2 * L.nbytes, lambda: bz.layer_norm(tL, tg, tbe),
         {"numpy": lambda: np_layernorm(L, g, be), "jax": jax_peer(jax_layernorm, L, g, be),
          **torch_peers(lambda L, g, b: torch.nn.functional.layer_norm(L, (L.shape[-1],), g, b, 1e-5), L, g, be)}),
        ("colsum", X.nbytes + X.nbytes // X.shape[0], lambda: tX.sum(axis=0),
         {"numpy": lambda: X.sum(axis=0), "jax": jax_peer(lambda X: X.sum(axis=0), X),
          **torch_peers(lambda X: X.sum(0), X)}),
        ("transpose_add", 2 * X.nbytes, lambda: tX.T + tX,
         {"numpy": lambda: X.T + X, "jax": jax_peer(lambda X: X.T + X, X), **torch_peers(lambda X: X.T + X, X)}),
    ]
    print(f"{'workload':16} {'system':8} {'time ms':>9} {'roofline':>9} {'kernels':>8}  note")
    codegen_ms = []  # per generated kernel
    for name, min_bytes, build, peers in workloads:
        bw = copy_bandwidth()
        bz.reset_stats()
        t0 = time.perf_counter()
        build().numpy()
        first = time.perf_counter() - t0
        st = bz.stats()
        kernels, interp = st["kernels_launched"], st["kernels_interpreted"]
        if st["kernels_compiled"]:
            codegen_ms.append(st["codegen_ns"] / st["kernels_compiled"] / 1e6)
        t = best(lambda: build().numpy())
        note = f"first run {first * 1e3:.1f} ms" + (f", {interp} interpreted" if interp else "")
        if st["kernels_compiled"]:
            note += f", codegen {codegen_ms[-1]:.3f} ms/kernel"
        print(f"{name:16} {'braze':8} {t * 1e3:9.2f} {min_bytes / bw / t:9.3f} {kernels:8d}  {note}")
        for peer, f in peers.items():
            if f is None:
                continue
            tp = best(f)
            print(f"{name:16} {peer:8} {tp * 1e3:9.2f} {min_bytes / bw / tp:9.3f} {'':8}  braze is {tp / t:.2f}x")
    if codegen_ms:
        print(f"median codegen per kernel: {statistics.median(codegen_ms):.3f} ms over {len(codegen_ms)} kernels "
              "(xbyak emission, first run of each workload)")


if __name__ == "__main__":
    main()
