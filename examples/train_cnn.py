"""Trains a small convolutional network on scikit-learn's handwritten digits with braze.

The 8x8 digits as 1-channel images: conv 3x3 (1 -> 16, padding 1) + relu +
2x2 max pooling, conv 3x3 (16 -> 32, padding 1) + relu + 2x2 max pooling,
then a linear layer from the 32x2x2 features to the 10 classes; softmax
cross-entropy, Adam on minibatches. Pooling is a max over the window axes
of a reshaped view (no pooling op), and the gradients of conv2d are
convolutions themselves. Each training step (forward, gradients, Adam
update, loss) is one program, made by bz.optim.compile_step on the first
step and replayed on every later one. Prints per epoch the mean training
loss, the test accuracy and the time; --torch trains the same model in
PyTorch beside it (same initial weights, same minibatches) and prints both
losses.

    python examples/train_cnn.py [--epochs N] [--seed S] [--lr LR] [--torch] [--plot loss.png] [--device cpu|cuda]

Needs scikit-learn (the digits ship with it: nothing is downloaded). The
data, the training loop and the report are examples/training.py's, shared
with train_mlp.py (the same split and minibatches for the same seed); this
file holds the model.
"""

import math

import numpy as np

import training
from harness import bz


CHANNELS = (1, 16, 32)  # the input's channels, then each convolution's
SIDE = 8  # the digits are 8x8; each pooling halves the side
FEATURES = CHANNELS[-1] * (SIDE // 4) ** 2  # 32 channels of 2x2 after two poolings
CLASSES = 10
BATCH = training.BATCH  # images per step (tests/python and bench/training.py read train_cnn.BATCH)


def init_params(rng):
    """PyTorch's initialisation of nn.Conv2d and nn.Linear, U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) for weights and biases alike (fan_in: the inputs one
    output sums over), as NumPy arrays (both frameworks start from these).
    Convolution weights are [out, in, 3, 3]; the linear one [in, out]."""
    params = {}
    for i, (c_in, c_out) in enumerate(zip(CHANNELS, CHANNELS[1:])):
        bound = 1 / math.sqrt(c_in * 9)
        params[f"conv{i}_w"] = rng.uniform(-bound, bound, (c_out, c_in, 3, 3)).astype(np.float32)
        params[f"conv{i}_b"] = rng.uniform(-bound, bound, c_out).astype(np.float32)
    bound = 1 / math.sqrt(FEATURES)
    params["fc_w"] = rng.uniform(-bound, bound, (FEATURES, CLASSES)).astype(np.float32)
    params["fc_b"] = rng.uniform(-bound, bound, CLASSES).astype(np.float32)
    return params


def pool(x):
    """2x2 max pooling: [n, c, h, w] -> [n, c, h/2, 2, w/2, 2], max over the 2s."""
    n, c, h, w = x.shape
    return bz.max(x.reshape((n, c, h // 2, 2, w // 2, 2)), axis=(3, 5))


def forward(params, x):
    """The logits [n, 10] of the images x [n, 1, 8, 8]."""
    for i in range(len(CHANNELS) - 1):
        x = pool(bz.relu(bz.conv2d(x, params[f"conv{i}_w"], params[f"conv{i}_b"], padding=1)))
    return x.reshape((x.shape[0], FEATURES)) @ params["fc_w"] + params["fc_b"]


def loss_fn(params, x, labels):
    return bz.cross_entropy(forward(params, x), labels)


def torch_forward(params, x):
    """The same network in PyTorch, as a PyTorch user writes it."""
    import torch.nn.functional as fn
    for i in range(len(CHANNELS) - 1):
        x = fn.max_pool2d(fn.relu(fn.conv2d(x, params[f"conv{i}_w"], params[f"conv{i}_b"], padding=1)), 2)
    return x.flatten(1) @ params["fc_w"] + params["fc_b"]


# The defaults of the command line (quantized_cnn.py trains with the same learning rate).
EPOCHS, LR = 6, 1e-2


def train(args):
    """Trains and reports with training.digits_args's `args`; returns
    training.train_digits's result (the trained parameters among it)."""
    convs = ", ".join(f"conv 3x3 {a} -> {b} + relu + pool" for a, b in zip(CHANNELS, CHANNELS[1:]))
    return training.train_digits(args, f"CNN {convs}, linear {FEATURES} -> {CLASSES}; Adam lr {args.lr}",
                                 init_params, loss_fn, forward, torch_forward=torch_forward,
                                 plot_title="CNN on the digits, Adam", shape=(1, SIDE, SIDE))


def main(argv=None):
    """Trains and reports; returns training.train_digits's result,
    {"accuracy": the final test accuracy, "losses": the mean training loss
    of each epoch, ...} (for the tests)."""
    return train(training.digits_args(__doc__.splitlines()[0], epochs=EPOCHS, lr=LR, argv=argv))


if __name__ == "__main__":
    main()
