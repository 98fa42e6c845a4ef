"""An MLP classifier on synthetic data: 784 -> 512 -> 256 -> 10 with relu,
then softmax class probabilities, inference batch after batch, with braze and
NumPy side by side. Each layer's matmul, bias add and relu are one oneDNN
call; the softmax is one fused kernel.

    python examples/mlp.py [--iterations N] [--device cpu|cuda]
"""

import math

import numpy as np

import harness
from harness import bz

BATCH, SIZES = 256, (784, 512, 256, 10)


def make_weights(rng):
    layers = []
    for n_in, n_out in zip(SIZES, SIZES[1:]):
        w = (rng.standard_normal((n_in, n_out)) * math.sqrt(2.0 / n_in)).astype(np.float32)
        layers.append((w, (0.01 * rng.standard_normal(n_out)).astype(np.float32)))
    return layers


def braze_mlp(x, layers):
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        if i + 1 < len(layers):
            x = bz.relu(x)
    return bz.softmax(x, axis=-1)


def numpy_mlp(x, layers):
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        if i + 1 < len(layers):
            x = np.maximum(x, 0)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def torch_mlp(x, layers):
    import torch
    for i, (w, b) in enumerate(layers):
        x = torch.addmm(b, x, w)
        if i + 1 < len(layers):
            x = torch.relu(x)
    return torch.softmax(x, -1)


def main():
    args = harness.parse_args(__doc__.splitlines()[0], iterations=20)
    layers = make_weights(np.random.default_rng(args.seed))
    with bz.device(args.device):
        bz_layers = [(bz.tensor(w), bz.tensor(b)) for w, b in layers]

    def run_torch(x):
        import torch
        return torch_mlp(x, [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in layers])

    print(f"MLP classifier: batch {BATCH}, layers {' -> '.join(map(str, SIZES))}; float32")
    harness.run("mlp", args.iterations,
                lambda i: (np.random.default_rng(1000 + i).standard_normal((BATCH, SIZES[0])).astype(np.float32),),
                harness.replaying(braze_mlp, args.device, bz_layers),
                lambda x: numpy_mlp(x, layers), run_torch, rtol=1e-4, atol=1e-5, device=args.device)


if __name__ == "__main__":
    main()
