"""A pre-norm transformer block (GPT-style) running repeated inference
iterations with braze, checked against the same block in NumPy:

    h = x + attention(layer_norm(x))       causal mask built with `where`
    y = h + W2 gelu(W1 layer_norm(h) + b1) + b2

The matmuls run through oneDNN with their bias, gelu and residual adds as
post-ops; layer_norm and softmax are one fused kernel each.

    python examples/transformer_block.py [--iterations N] [--device cpu|cuda]
"""

import math

import numpy as np

import harness
from harness import bz

B, T, D, H = 4, 128, 256, 4  # batch, sequence, model width, heads
DH = D // H
F = 4 * D  # MLP width


def make_weights(rng):
    w = lambda *s: (rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32)
    b = lambda n: (0.1 * rng.standard_normal(n)).astype(np.float32)
    return {
        "ln1_w": (1 + 0.1 * rng.standard_normal(D)).astype(np.float32), "ln1_b": b(D),
        "wq": w(D, D), "bq": b(D), "wk": w(D, D), "bk": b(D), "wv": w(D, D), "bv": b(D),
        "wo": w(D, D), "bo": b(D),
        "ln2_w": (1 + 0.1 * rng.standard_normal(D)).astype(np.float32), "ln2_b": b(D),
        "w1": w(D, F), "b1": b(F), "w2": w(F, D), "b2": b(D),
    }


# --- braze ------------------------------------------------------------------------


def heads(t):  # [B, T, D] -> [B, H, T, DH], a view
    return bz.permute_dims(t.reshape((B, T, H, DH)), (0, 2, 1, 3))


def braze_block(x, p, causal):
    ln1 = bz.layer_norm(x, p["ln1_w"], p["ln1_b"], eps=1e-5)
    q, k, v = (heads(ln1 @ p["w" + n] + p["b" + n]) for n in "qkv")
    scores = (q @ k.mT) * (1.0 / math.sqrt(DH))
    att = bz.softmax(bz.where(causal, scores, -1e30), axis=-1)
    ctx = bz.permute_dims(att @ v, (0, 2, 1, 3)).reshape((B, T, D))
    h = x + (ctx @ p["wo"] + p["bo"])
    ln2 = bz.layer_norm(h, p["ln2_w"], p["ln2_b"], eps=1e-5)
    return h + (bz.gelu(ln2 @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"])


# --- NumPy (float32, as a NumPy user would write it) --------------------------------


def np_layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def np_erf(x):
    # NumPy has no erf: Abramowitz and Stegun 7.1.26, |error| < 1.5e-7,
    # below float32's resolution of the result, in vector operations.
    a = np.abs(x)
    t = 1 / (1 + np.float32(0.3275911) * a)
    poly = t * (np.float32(0.254829592) + t * (np.float32(-0.284496736) + t * (np.float32(1.421413741) + t * (
        np.float32(-1.453152027) + t * np.float32(1.061405429)))))
    return np.sign(x) * (1 - poly * np.exp(-a * a))


def np_gelu(x):
    return 0.5 * x * (1 + np_erf(x / np.float32(math.sqrt(2))))


def np_heads(t):
    return t.reshape(B, T, H, DH).transpose(0, 2, 1, 3)


def numpy_block(x, p, causal):
    ln1 = np_layer_norm(x, p["ln1_w"], p["ln1_b"])
    q, k, v = (np_heads(ln1 @ p["w" + n] + p["b" + n]) for n in "qkv")
    scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(DH))
    scores = np.where(causal, scores, np.float32(-1e30))
    e = np.exp(scores - scores.max(-1, keepdims=True))
    att = e / e.sum(-1, keepdims=True)
    ctx = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    h = x + (ctx @ p["wo"] + p["bo"])
    ln2 = np_layer_norm(h, p["ln2_w"], p["ln2_b"])
    return h + (np_gelu(ln2 @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"])


def torch_block(x, p, causal):
    import torch
    import torch.nn.functional as fn
    ln1 = fn.layer_norm(x, (D,), p["ln1_w"], p["ln1_b"], eps=1e-5)
    q, k, v = (fn.linear(ln1, p["w" + n].T, p["b" + n]).reshape(B, T, H, DH).transpose(1, 2) for n in "qkv")
    scores = torch.where(causal, (q @ k.transpose(-1, -2)) / math.sqrt(DH), torch.tensor(-1e30))
    ctx = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(B, T, D)
    h = x + fn.linear(ctx, p["wo"].T, p["bo"])
    ln2 = fn.layer_norm(h, (D,), p["ln2_w"], p["ln2_b"], eps=1e-5)
    return h + fn.linear(fn.gelu(fn.linear(ln2, p["w1"].T, p["b1"])), p["w2"].T, p["b2"])


def main():
    args = harness.parse_args(__doc__.splitlines()[0], iterations=30)
    rng = np.random.default_rng(args.seed)
    weights = make_weights(rng)
    causal = np.tril(np.ones((T, T), dtype=bool))
    with bz.device(args.device):
        p = {k: bz.tensor(v) for k, v in weights.items()}
        # The mask from index comparisons, as braze ops (row >= column),
        # realized once: every iteration's `where` reads it.
        idx = bz.arange(T)
        mask = bz.greater_equal(idx.reshape((T, 1)), idx.reshape((1, T))).realize()

    # One program, replayed; each iteration copies its input into the same
    # tensor and writes into the same output: no allocation after the first.
    run_braze = harness.replaying(braze_block, args.device, p, mask)

    def run_torch(x):
        import torch
        tp = {k: torch.from_numpy(v) for k, v in weights.items()}
        return torch_block(x, tp, torch.from_numpy(causal))

    print(f"transformer block: batch {B}, sequence {T}, width {D}, {H} heads, MLP {F}; float32")
    harness.run("transformer block", args.iterations,
                lambda i: (np.random.default_rng(1000 + i).standard_normal((B, T, D)).astype(np.float32),),
                run_braze, lambda x: numpy_block(x, weights, causal), run_torch, rtol=2e-3, atol=2e-3,
                device=args.device)


if __name__ == "__main__":
    main()
