"""What the training examples share (train_mlp.py, train_cnn.py, train_lm.py).

All three: the command line's common options (--device, --torch), the
parameters and batch tensors put on the device, the PyTorch twin that
--torch trains beside braze, and the report's head. The two digits classifiers (train_mlp.py,
train_cnn.py) also share everything but their model: the data and its
split, the minibatches, the epoch loop with its report, and the plot. An
example keeps only what is its own: the model, its loss and its PyTorch
twin.
"""

import argparse
import sys
import time

import numpy as np

import harness
from harness import bz


# 1797 digits: 1437 to train on, 360 to test on. A batch of another size
# would be a new program (shapes are part of a program's structure), so
# every step uses exactly BATCH rows and the 29 left over are dropped; the
# batches are drawn from a new shuffle every epoch, so no digit is left out
# for good.
TEST_SIZE, BATCH = 360, 64


# --- the command line ---------------------------------------------------------------


def parser(description):
    """An argument parser holding --device, every training example's first
    option."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    return p


def add_torch(p):
    p.add_argument("--torch", action="store_true", help="train the same model with PyTorch beside braze")


def parse(p, argv, *counts):
    """The arguments of `argv` (None: the command line), once each option
    named in `counts` is at least 1 and braze can use --device."""
    args = p.parse_args(argv)
    if any(getattr(args, name) < 1 for name in counts):
        p.error(" and ".join(f"--{name}" for name in counts) + " must be at least 1")
    harness.check_device(args.device)
    return args


def digits_parser(description, epochs, lr):
    """The digits examples' argument parser; `epochs` and `lr` are the
    example's defaults. An example that trains a model and then does more
    with it (quantized_mlp.py) adds its own options to it."""
    p = parser(description)
    p.add_argument("--epochs", type=int, default=epochs, help=f"passes over the training digits (default {epochs})")
    p.add_argument("--seed", type=int, default=0, help="seeds the initial weights, the split and the shuffles")
    p.add_argument("--lr", type=float, default=lr, help=f"Adam's learning rate (default {lr:g})")
    add_torch(p)
    p.add_argument("--plot", metavar="PATH", help="save the loss curves as a PNG (needs matplotlib)")
    return p


def digits_args(description, epochs, lr, argv=None):
    """The digits examples' command line (digits_parser's), parsed."""
    return parse(digits_parser(description, epochs, lr), argv, "epochs")


# --- braze and its PyTorch twin -----------------------------------------------------


def to_device(device, init, *arrays):
    """On `device`: the parameters, braze tensors of the NumPy arrays `init`
    (a dict), and a list of one tensor per array of `arrays`. A batch lives
    in tensors made once here that every step overwrites (bz.copyto
    allocates nothing), so each step's program reads the same inputs and
    replays."""
    with bz.device(device):
        return {k: bz.tensor(v) for k, v in init.items()}, [bz.tensor(a) for a in arrays]


class TorchRun:
    """A model's PyTorch twin, for the side-by-side losses: the same initial
    weights `init` (NumPy arrays) and the same batches, with PyTorch's
    float32 Adam at the same learning rate. forward(params, x) gives the
    logits of torch tensors; loss(params, x, y) the loss, by default the
    cross-entropy of those logits against the labels y."""

    def __init__(self, init, lr, forward, loss=None):
        import torch  # here: without PyTorch, this raises the ImportError that torch_beside reports
        self.torch = torch
        self.forward = forward
        self.loss = loss or (lambda params, x, y: torch.nn.functional.cross_entropy(forward(params, x), y))
        self.params = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
        self.opt = torch.optim.Adam(list(self.params.values()), lr=lr)

    def step(self, x, y):
        """One Adam step on the NumPy batch (x, y); its loss."""
        self.opt.zero_grad()
        loss = self.loss(self.params, self.torch.from_numpy(x), self.torch.from_numpy(y))
        loss.backward()
        self.opt.step()
        return loss.item()

    def accuracy(self, x, y):
        with self.torch.no_grad():
            return float((self.forward(self.params, self.torch.from_numpy(x)).argmax(1).numpy() == y).mean())


def torch_beside(args, init, forward, loss=None):
    """The PyTorch twin (TorchRun) when --torch asks for one; None without
    --torch, or without PyTorch (braze trains alone then, and says so)."""
    if not args.torch:
        return None
    try:
        return TorchRun(init, args.lr, forward, loss)
    except ImportError:
        print("PyTorch is not installed: training braze alone")
        return None


def print_head(device, title, columns, torch_columns, torch_run):
    """The report's first lines: `title` and the device braze runs on, then
    the table's header, braze's columns and, with the PyTorch twin beside
    (torch_run not None), the twin's; a column is (name, width)."""
    print(f"{title}; braze on {harness.where(device)}")
    if torch_run is not None:
        columns = columns + torch_columns
    print(" ".join(f"{name:>{width}}" for name, width in columns))


# --- the digits -------------------------------------------------------------------------


def load_digits(rng, shape=(64,)):
    """(x_train, y_train, x_test, y_test): scikit-learn's 8x8 digits, each
    an array of `shape` (the 64 pixels, or an image [1, 8, 8]) scaled to
    [0, 1], float32; labels int64. The split is a permutation drawn from
    `rng`: the same for every shape, so the examples train and test on the
    same digits for the same seed."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        sys.exit("error: this example needs scikit-learn (pip install scikit-learn)")
    digits = sklearn_digits()
    x = (digits.data / 16.0).astype(np.float32).reshape((-1,) + shape)  # pixels are 0..16
    y = digits.target.astype(np.int64)
    order = rng.permutation(len(x))
    test, train = order[:TEST_SIZE], order[TEST_SIZE:]
    return x[train], y[train], x[test], y[test]


def batches(rng, n):
    """The index arrays of one epoch's full minibatches."""
    order = rng.permutation(n)
    return [order[i:i + BATCH] for i in range(0, n - BATCH + 1, BATCH)]


def train_digits(args, model, init_params, loss_fn, forward, torch_forward, plot_title, shape=(64,)):
    """Trains a classifier of the digits (digits_args's `args`) with Adam,
    each step one program made by bz.optim.compile_step on the first step
    and replayed on every later one, and the PyTorch twin beside it with
    --torch; prints per epoch the mean training loss, the test accuracy and
    the time. Returns {"accuracy": the final test accuracy, "losses": the
    mean training loss of each epoch, "params": the trained parameters
    (braze tensors), "data": load_digits's (x_train, y_train, x_test,
    y_test)}.

    model: the first line's start, naming the model and the optimizer.
    init_params(rng): the initial weights, NumPy arrays. loss_fn(params, x,
    labels): the loss compile_step differentiates; forward(params, x): the
    logits, for the test accuracy; torch_forward: the same in PyTorch.
    plot_title: the --plot figure's title. shape: one digit's, as
    load_digits gives it."""
    rng = np.random.default_rng(args.seed)
    # One seed, drawn in this order: the split, the weights, the shuffles'
    # seed. Another order would give other runs for the same --seed.
    x_train, y_train, x_test, y_test = load_digits(rng, shape)
    init = init_params(rng)
    shuffle_seed = int(rng.integers(2**31))

    torch_run = torch_beside(args, init, torch_forward)
    params, (xb, yb, test_x) = to_device(args.device, init, np.zeros((BATCH,) + shape, np.float32),
                                         np.zeros(BATCH, np.int64), x_test)
    opt = bz.optim.Adam(params, lr=args.lr)
    step = bz.optim.compile_step(loss_fn, opt)

    print_head(args.device, f"{model}, batch {BATCH}: {len(x_train)} training digits ({len(x_train) // BATCH} steps "
                            f"per epoch), {len(x_test)} test digits",
               [("epoch", 5), ("loss", 8), ("test acc", 8), ("ms", 7), ("programs", 8)],
               [("torch loss", 10), ("torch acc", 9), ("torch ms", 8)], torch_run)

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
        save_plot(args.plot, curves, plot_title)
    return {"accuracy": accuracy, "losses": curves["braze"], "params": params,
            "data": (x_train, y_train, x_test, y_test)}


def save_plot(path, curves, title):
    """The mean training loss of each epoch, braze's and PyTorch's where it
    ran, as a PNG at `path`."""
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
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"loss curves saved to {path}")
