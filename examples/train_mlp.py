"""Trains an MLP classifier on scikit-learn's handwritten digits with braze.

64 -> 128 (relu) -> 10, softmax cross-entropy, Adam on minibatches. Each
training step (forward, gradients, Adam update, loss) is one program, made
by bz.optim.compile_step on the first step and replayed on every later one.
Prints per epoch the mean training loss, the test accuracy and the time;
--torch trains the same model in PyTorch beside it (same initial weights,
same minibatches) and prints both losses.

    python examples/train_mlp.py [--epochs N] [--seed S] [--lr LR] [--torch] [--plot loss.png] [--device cpu|cuda]

Needs scikit-learn (the digits ship with it: nothing is downloaded). The
data, the training loop and the report are examples/training.py's, shared
with train_cnn.py; this file holds the model.
"""

import math

import numpy as np

import training
from harness import bz


SIZES = (64, 128, 10)


def init_params(rng):
    """PyTorch's nn.Linear initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    for weights and biases alike, as NumPy arrays (both frameworks start
    from these)."""
    params = {}
    for i, (n_in, n_out) in enumerate(zip(SIZES, SIZES[1:])):
        bound = 1 / math.sqrt(n_in)
        params[f"w{i}"] = rng.uniform(-bound, bound, (n_in, n_out)).astype(np.float32)
        params[f"b{i}"] = rng.uniform(-bound, bound, n_out).astype(np.float32)
    return params


def forward(params, x):
    """The logits; the same code runs on braze tensors and torch tensors
    (so it is the PyTorch twin's forward too)."""
    layers = len(SIZES) - 1
    for i in range(layers):
        x = x @ params[f"w{i}"] + params[f"b{i}"]
        if i + 1 < layers:
            x = bz.relu(x) if isinstance(x, bz.Tensor) else x.relu()
    return x


def loss_fn(params, x, labels):
    return bz.cross_entropy(forward(params, x), labels)


# The defaults of the command line (quantized_mlp.py trains with the same learning rate).
EPOCHS, LR = 20, 3e-3


def train(args):
    """Trains and reports with training.digits_args's `args`; returns
    training.train_digits's result (the trained parameters among it)."""
    return training.train_digits(args, f"MLP {' -> '.join(map(str, SIZES))} (relu), Adam lr {args.lr}",
                                 init_params, loss_fn, forward, torch_forward=forward,
                                 plot_title="MLP on the digits, Adam")


def main():
    """Trains and reports; returns training.train_digits's result."""
    return train(training.digits_args(__doc__.splitlines()[0], epochs=EPOCHS, lr=LR))


if __name__ == "__main__":
    main()
