"""Memory plans of the benchmark workloads (shared/bench/WORKLOADS.md) and of
MLP- and transformer-block-sized graphs: per graph the steps, the scratch
buffers planned, the arena (the plan's peak), the lower bound (the most
bytes alive at once over the schedule), arena / lower bound (the issue asks
<= 1.05) and arena / the no-reuse total. Plans only: nothing is run, so
the library-call graphs cost no matmul time.

Run: PYTHONPATH=build/python .venv/bin/python bench/memory_plan.py
"""
import numpy as np

import braze as bz


def t(*shape):
    return bz.tensor(np.zeros(shape, np.float32))


def mlp(x, layers):
    for w, b in layers:
        x = bz.relu(x @ w + b)
    return x


def transformer_block(x, batch, seq, d, heads):
    dh = d // heads

    def split(y):
        return bz.permute_dims(bz.reshape(y, (batch, seq, heads, dh)), (0, 2, 1, 3))

    h = bz.layer_norm(x, t(d), t(d))
    q, k, v = split(h @ t(d, d)), split(h @ t(d, d)), split(h @ t(d, d))
    attn = bz.softmax(q @ bz.matrix_transpose(k) * (1.0 / dh ** 0.5), axis=-1)
    o = bz.reshape(bz.permute_dims(attn @ v, (0, 2, 1, 3)), (batch * seq, d))
    y = x + o @ t(d, d)
    f = bz.gelu(bz.layer_norm(y, t(d), t(d)) @ t(d, 4 * d) + t(4 * d), approximate="tanh")
    return y + f @ t(4 * d, d)


def small_chain(x):
    y = x * 1.5 + 0.25
    y = bz.tanh(y) * 0.75 - 0.125
    y = bz.abs(y) + 0.5
    y = bz.sqrt(y) * 3.0
    return bz.maximum(y, 0.3) - 0.0625


def workloads():
    x = t(4096, 4096)
    g = t(16 << 20)
    yield "gelu_16M", lambda: 0.5 * g * (1 + bz.tanh(0.7978845608 * (g + 0.044715 * g ** 3)))
    yield "bias_relu_scale", lambda: bz.maximum(x + t(4096), 0.0) * t(4096, 1)
    yield "softmax_rows", lambda: bz.softmax(x, axis=-1)
    ln = t(16384, 1024)
    yield "layernorm", lambda: bz.layer_norm(ln, t(1024), t(1024), eps=1e-5)
    yield "colsum", lambda: x.sum(axis=0)
    yield "transpose_add", lambda: x.T + x
    yield "mlp", lambda: mlp(t(256, 1024), [(t(1024, 4096), t(4096))]) @ t(4096, 1024) + t(1024)
    yield "small_chain", lambda: small_chain(t(1024))
    yield "loop (one iteration)", lambda: bz.softmax(bz.maximum(x + t(4096), 0.0) * t(4096, 1), axis=-1)
    yield "mlp 3 layers [512,2048]", lambda: mlp(t(512, 2048), [(t(2048, 2048), t(2048))] * 3)
    tb = t(8 * 128, 512)
    yield "transformer block b8 s128 d512", lambda: transformer_block(tb, 8, 128, 512, 8)
    yield "4 transformer blocks", lambda: _blocks(tb, 4)


def _blocks(x, n):
    for _ in range(n):
        x = transformer_block(x, 8, 128, 512, 8)
    return x


def main():
    print(f"{'graph':32} {'steps':>5} {'bufs':>4} {'arena MB':>9} {'bound MB':>9} {'no-reuse MB':>11} "
          f"{'arena/bound':>11} {'arena/no-reuse':>14}")
    for name, build in workloads():
        p = bz._core._plan([build()])
        mb = lambda b: b / 2 ** 20
        ratio = f"{p['arena_bytes'] / p['lower_bound_bytes']:.3f}" if p["lower_bound_bytes"] else "-"
        reuse = f"{p['arena_bytes'] / p['no_reuse_bytes']:.3f}" if p["no_reuse_bytes"] else "-"
        print(f"{name:32} {p['steps']:5d} {p['buffers']:4d} {mb(p['arena_bytes']):9.2f} "
              f"{mb(p['lower_bound_bytes']):9.2f} {mb(p['no_reuse_bytes']):11.2f} {ratio:>11} {reuse:>14}")


if __name__ == "__main__":
    main()
