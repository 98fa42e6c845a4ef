"""Trains an MLP classifier on scikit-learn's handwritten digits with braze.

64 -> 128 (relu) -> 10, softmax cross-entropy, Adam on minibatches. Each
training step (forward, gradients, Adam update, loss) is one program, made
by bz.optim.compile_step on the first step and replayed on every later one.
Prints per epoch the mean training loss, the test accuracy and the time;
--torch trains the same model in PyTorch beside it (same initial weights,
same minibatches) and prints both losses.

    python examples/train_mlp.py [--epochs N] [--seed S] [--lr LR] [--torch] [--plot loss.png] [--device cpu|cuda]

Needs scikit-learn (the digits ship with it: nothing is downloaded).
"""

import argparse
import math
import sys
import time

import numpy as np

import harness
from harness import bz


SIZES = (64, 128, 10)
# 1797 digits: 1437 to train on, 360 to test on. A batch of another size
# would be a new program (shapes are part of a program's structure), so
# every step uses exactly BATCH rows and the 29 left over are dropped; the
# batches are drawn from a new shuffle every epoch, so no digit is left out
# for good.
TEST_SIZE, BATCH = 360, 64


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--epochs", type=int, default=20, help="passes over the training digits (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seeds the initial weights, the split and the shuffles")
    p.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate (default 0.003)")
    p.add_argument("--torch", action="store_true", help="train the same model with PyTorch beside braze")
    p.add_argument("--plot", metavar="PATH", help="save the loss curves as a PNG (needs matplotlib)")
    args = p.parse_args()
    if args.epochs < 1:
        p.error("--epochs must be at least 1")
    harness.check_device(args.device)
    return args


def load_digits(rng):
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1], float32;
    labels int64. The split is a permutation drawn from `rng`."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        sys.exit("error: this example needs scikit-learn (pip install scikit-learn)")
    digits = sklearn_digits()
    x = (digits.data / 16.0).astype(np.float32)  # pixels are 0..16
    y = digits.target.astype(np.int64)
    order = rng.permutation(len(x))
    test, train = order[:TEST_SIZE], order[TEST_SIZE:]
    return x[train], y[train], x[test], y[test]


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
    """The logits; the same code runs on braze tensors and torch tensors."""
    layers = len(SIZES) - 1
    for i in range(layers):
        x = x @ params[f"w{i}"] + params[f"b{i}"]
        if i + 1 < layers:
            x = bz.relu(x) if isinstance(x, bz.Tensor) else x.relu()
    return x


def loss_fn(params, x, labels):
    return bz.cross_entropy(forward(params, x), labels)


def batches(rng, n):
    """The index arrays of one epoch's full minibatches."""
    order = rng.permutation(n)
    return [order[i:i + BATCH] for i in range(0, n - BATCH + 1, BATCH)]


class TorchRun:
    """The same model, initial weights and minibatches in PyTorch (its
    float32 Adam), for the side-by-side losses."""

    def __init__(self, init, lr):
        import torch
        self.torch = torch
        self.params = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
        self.opt = torch.optim.Adam(list(self.params.values()), lr=lr)

    def step(self, x, y):
        torch = self.torch
        self.opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(forward(self.params, torch.from_numpy(x)), torch.from_numpy(y))
        loss.backward()
        self.opt.step()
        return loss.item()

    def accuracy(self, x, y):
        with self.torch.no_grad():
            return float((forward(self.params, self.torch.from_numpy(x)).argmax(1).numpy() == y).mean())


def main():
    args = parse_args()
    rng = np.random.default_rng(args.seed)
    x_train, y_train, x_test, y_test = load_digits(rng)
    init = init_params(rng)
    shuffle_seed = int(rng.integers(2**31))

    torch_run = None
    if args.torch:
        try:
            torch_run = TorchRun(init, args.lr)
        except ImportError:
            print("PyTorch is not installed: training braze alone")

    with bz.device(args.device):
        params = {k: bz.tensor(v) for k, v in init.items()}
        # The minibatch lives in two tensors that every step overwrites
        # (bz.copyto allocates nothing), so each step's program reads the
        # same inputs and replays.
        xb = bz.tensor(np.zeros((BATCH, SIZES[0]), np.float32))
        yb = bz.tensor(np.zeros(BATCH, np.int64))
        test_x = bz.tensor(x_test)

    opt = bz.optim.Adam(params, lr=args.lr)
    step = bz.optim.compile_step(loss_fn, opt)

    print(f"MLP {' -> '.join(map(str, SIZES))} (relu), Adam lr {args.lr}, batch {BATCH}: "
          f"{len(x_train)} training digits ({len(x_train) // BATCH} steps per epoch), {len(x_test)} test digits; "
          f"braze on {harness.where(args.device)}")
    header = f"{'epoch':>5} {'loss':>8} {'test acc':>8} {'ms':>7} {'programs':>8}"
    if torch_run is not None:
        header += f" {'torch loss':>10} {'torch acc':>9} {'torch ms':>8}"
    print(header)

    shuffles = np.random.default_rng(shuffle_seed)
    curves = {"braze": [], "torch": []}
    compiled_per_epoch = []  # programs compiled in each epoch: the step's and the test pass's, then none
    largest_difference = 0.0  # between braze's and PyTorch's loss at the same step
    braze_seconds = 0.0
    for epoch in range(1, args.epochs + 1):
        epoch_batches = batches(shuffles, len(x_train))
        compiled = bz.stats()["programs_compiled"]
        t0 = time.perf_counter()
        losses = []
        for idx in epoch_batches:
            bz.copyto(xb, x_train[idx])
            bz.copyto(yb, y_train[idx])
            losses.append(float(step(xb, yb)))  # read now: the next step overwrites the loss tensor
        with bz.no_grad():
            predicted = bz.argmax(forward(params, test_x), axis=-1).numpy()
        ms = (time.perf_counter() - t0) * 1e3
        braze_seconds += ms / 1e3
        compiled = bz.stats()["programs_compiled"] - compiled
        compiled_per_epoch.append(compiled)
        accuracy = float(np.mean(predicted == y_test))
        curves["braze"].append(float(np.mean(losses)))
        line = f"{epoch:5d} {curves['braze'][-1]:8.4f} {accuracy:8.1%} {ms:7.1f} {compiled:8d}"
        if torch_run is not None:
            t0 = time.perf_counter()
            torch_losses = [torch_run.step(x_train[idx], y_train[idx]) for idx in epoch_batches]
            largest_difference = max(largest_difference, float(np.max(np.abs(np.subtract(losses, torch_losses)))))
            torch_acc = torch_run.accuracy(x_test, y_test)
            torch_ms = (time.perf_counter() - t0) * 1e3
            curves["torch"].append(float(np.mean(torch_losses)))
            line += f" {curves['torch'][-1]:10.4f} {torch_acc:9.1%} {torch_ms:8.1f}"
        print(line)
    epochs = f"{args.epochs} epoch{'s' if args.epochs != 1 else ''}"
    print(f"test accuracy {accuracy:.1%} after {epochs}, {braze_seconds:.2f} s of training and testing; "
          f"programs compiled: {compiled_per_epoch[0]} in epoch 1, {sum(compiled_per_epoch[1:])} after it")

    if torch_run is not None:
        print(f"PyTorch: test accuracy {torch_acc:.1%}; the largest difference between the two losses at one step "
              f"was {largest_difference:.2e}")
    if args.plot:
        save_plot(args.plot, curves)


def save_plot(path, curves):
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    styles = {"braze": dict(marker="o", linestyle="-"), "torch": dict(marker="x", linestyle="--")}
    for name, losses in curves.items():
        if losses:  # the curves coincide: the markers tell them apart
            ax.plot(range(1, len(losses) + 1), losses, label=name, **styles[name])
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.set_yscale("log")
    ax.set_title("MLP on the digits, Adam")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"loss curves saved to {path}")


if __name__ == "__main__":
    main()
