"""Post-training int8 quantization of train_cnn.py's CNN, beside the float32 model it came from.

Trains the float32 CNN (conv 3x3 1 -> 16 + relu + 2x2 max pooling, conv 3x3
16 -> 32 + relu + pooling, linear 128 -> 10) on scikit-learn's digits as
examples/train_cnn.py does (its model, examples/training.py's loop, the
same seed), then quantizes it without retraining (issue 28,
docs/quantization.md), as examples/quantized_mlp.py does the MLP:

- calibration: bz.quant.calibrate runs the float model over a few training
  batches and observes each layer's input; its range gives a per-tensor
  scale and zero point for uint8 activations (asymmetric; oneDNN multiplies
  uint8 by int8). --percentile P takes each batch's P-th percentile rather
  than its extremes.
- weights: int8, symmetric (zero point 0), one scale per output channel
  (bz.quant.qparams on each output channel's range: axis 0 of a
  convolution's [out, in, 3, 3], axis 1 of the linear layer's [in, out]).
- the forward, written as NumPy would have it: per convolution
  acc = bz.conv2d(q.astype(int32), w_q.astype(int32), padding=1), one
  oneDNN call summing the 8-bit products in int32 (Note [Integer matmul]),
  then one fused kernel that removes the activation's zero point,
  dequantizes with the product scale s_x * s_w (per channel, axis 1),
  adds the bias, applies relu and the 2x2 max pooling and quantizes the
  result for the next layer; the linear layer as in quantized_mlp.py.

Prints the float32 and int8 test accuracy, how often their predictions
agree, each forward's time on the 360 test digits (braze float32, braze
int8, NumPy float32) and braze's kernels and library calls for each.
Checks the int8 forward against the same integer computation in NumPy (the
int32 sums bit for bit, the logits within a tolerance) and exits non-zero
where they differ.

    python examples/quantized_cnn.py [--epochs N] [--seed S] [--percentile P] [--batches B] [--iterations N]

Needs scikit-learn (the digits ship with it). CPU only: a CUDA device
refuses integer matmuls and convolutions today. The report (accuracy,
timing, step counts) and NumPy's quantize are quantized_mlp.py's.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import quantized_mlp
import train_cnn
import training
from harness import bz
from quantized_mlp import numpy_quantize


CONVS = len(train_cnn.CHANNELS) - 1  # then the linear layer
LAYERS = CONVS + 1
STRIDE, PADDING = 1, 1  # train_cnn.forward's convolutions: 3x3, stride 1, padding 1 (the side kept)
ACTIVATION = "uint8"  # the layer inputs are pixels in [0, 1] and pooled relu outputs: never negative


# --- the command line ---------------------------------------------------------------


def parse_args(argv=None):
    """train_cnn.py's options (its defaults: ~98% in 6 epochs) and this
    example's."""
    p = training.digits_parser(__doc__.splitlines()[0], epochs=train_cnn.EPOCHS, lr=train_cnn.LR)
    p.add_argument("--percentile", type=float, default=None,
                   help="calibrate on each batch's P-th percentile (say 99.99) rather than its extremes")
    p.add_argument("--batches", type=int, default=8, help="training batches of 64 to calibrate on (default 8)")
    p.add_argument("--iterations", type=int, default=50, help="timed forwards of each kind (default 50)")
    args = training.parse(p, argv, "epochs", "batches", "iterations")
    if bz._core._device_name(args.device) != "cpu":
        p.error("the int8 forward runs on the CPU only (a CUDA device refuses integer matmuls and convolutions: "
                "issue 28)")
    return args


# --- calibration and the quantized model ------------------------------------------------


def layer_inputs(params, x):
    """What calibration observes: each layer's input in the float model
    (train_cnn.forward's layers, keeping what goes into each): x0 the
    images, x1 the first convolution's pooled output, x2 the second's,
    flattened for the linear layer."""
    seen = {}
    for i in range(CONVS):
        seen[f"x{i}"] = x
        x = train_cnn.pool(bz.relu(bz.conv2d(x, params[f"conv{i}_w"], params[f"conv{i}_b"], stride=STRIDE,
                                             padding=PADDING)))
    seen[f"x{CONVS}"] = x.reshape((x.shape[0], train_cnn.FEATURES))
    return seen


def calibrate(params, x_train, count, seed, percentile=None):
    """{"x0": (lo, hi), ...}: the ranges of the layers' inputs over `count`
    shuffled training batches."""
    batches = [bz.tensor(x_train[idx]) for idx in training.batches(np.random.default_rng(seed), len(x_train))[:count]]
    return bz.quant.calibrate(layer_inputs, params, batches, percentile=percentile)


def quantize_model(params, ranges):
    """The int8 model, one dict per layer (the convolutions, then the
    linear layer), of braze tensors made once and Python numbers, as
    quantized_mlp.quantize_model's:

    kind: "conv" or "linear";
    s_x, z_x: the input's scale and zero point (per tensor, uint8);
    w_q: the weight in int8, symmetric, one scale s_w per output channel
      (a convolution's [out, in, 3, 3] along axis 0, over each output
      channel's in x 3 x 3 values);
    scale: s_x * s_w, the scale of the int32 sums (float32, per channel);
    correction: the part of the int32 sums that the zero point adds (int32):
      acc - correction is the sum of (q - z_x) * w_q. For the linear layer
      z_x * sum_k w_q[k, :], as in quantized_mlp.py. For a convolution it
      is not z_x * w_q.sum(axis=(1, 2, 3)): conv2d pads q with 0, and a
      padded tap must add nothing (the float model pads with 0.0, which is
      q = z_x), so at the image's border only the taps inside the image
      carry a z_x. Hence the correction is z_x times the convolution of a
      ones image (same padding and stride) with w_q, [1, out, h, w],
      broadcast over the batch: exact for any zero point, computed once
      here (the input's side is fixed: 8, then 4), and the product stays a
      plain 8-bit convolution. (Padding q with z_x before the call would be
      exact too, but would cost a kernel per layer and forward; asserting
      z_x == 0, which calibration gives here as no input is negative,
      would break with a widened or a percentile range.)
    b: the float32 bias, added after dequantizing (viewed [1, out, 1, 1]
      for a convolution)."""
    model = []
    side = train_cnn.SIDE
    for i in range(LAYERS):
        conv = i < CONVS
        w = params[f"conv{i}_w" if conv else "fc_w"].numpy()
        b = params[f"conv{i}_b" if conv else "fc_b"]
        out_axis, over = (0, (1, 2, 3)) if conv else (1, 0)
        s_x, z_x = bz.quant.qparams(*ranges[f"x{i}"], dtype=ACTIVATION, symmetric=False)
        s_w, _ = bz.quant.qparams(w.min(axis=over), w.max(axis=over), dtype="int8", symmetric=True)
        w_q = bz.quantize(w, s_w, 0, "int8", axis=out_axis).numpy()
        if conv:
            ones = np.ones((1, w.shape[1], side, side), np.int32)
            correction = int(z_x) * numpy_conv2d(ones, w_q.astype(np.int32), STRIDE, PADDING)
            b = b.reshape((1, w.shape[0], 1, 1))
            side //= 2
        else:
            correction = int(z_x) * w_q.astype(np.int32).sum(axis=0)
        model.append({"kind": "conv" if conv else "linear", "s_x": float(s_x), "z_x": int(z_x), "s_w": s_w,
                      "w_q": bz.tensor(w_q), "scale": bz.tensor(np.float32(s_x) * s_w),
                      "correction": bz.tensor(correction.astype(np.int32)), "b": b})
    return model


def int8_forward(model, x, trace=None):
    """The logits of the int8 model for float32 images x [n, 1, 8, 8] (a
    braze tensor). Per layer one oneDNN call (the uint8 x int8 products
    summed in int32) and one fused kernel (what follows it, up to the next
    layer's uint8 input); the first layer's quantize of x is a kernel of
    its own, and so is the quantize of the second pooling's output, which
    the linear layer reads flattened (braze does not fuse it into the
    pooling's kernel today: 5 kernels where 4 would do). With a list
    `trace`, appends each layer's (uint8 input, int32 sums) for the
    cross-check."""
    q = bz.quantize(x, model[0]["s_x"], model[0]["z_x"], ACTIVATION)
    for i, layer in enumerate(model):
        if layer["kind"] == "conv":
            acc = bz.conv2d(q.astype(np.int32), layer["w_q"].astype(np.int32), stride=STRIDE, padding=PADDING)
        else:
            q = q.reshape((q.shape[0], train_cnn.FEATURES))
            acc = q.astype(np.int32) @ layer["w_q"].astype(np.int32)
        if trace is not None:
            trace.append((q, acc))
        # Integers first (exact), then float32: (acc - correction) * s_x * s_w + b.
        y = bz.dequantize(acc - layer["correction"], layer["scale"], axis=1) + layer["b"]
        if i + 1 == len(model):
            return y
        q = bz.quantize(train_cnn.pool(bz.relu(y)), model[i + 1]["s_x"], model[i + 1]["z_x"], ACTIVATION)


# --- the same in NumPy ------------------------------------------------------------------


def numpy_conv2d(x, w, stride=STRIDE, padding=PADDING):
    """conv2d of x [n, c, h, w] with w [o, c, kh, kw] in x's type, as
    im2col: each output position's window (sliding_window_view of x padded
    with 0) a row, times the weight as a matrix. float32 goes through the
    BLAS; int32 is NumPy's own integer matmul, exact (and slower)."""
    n, c = x.shape[:2]
    o, _, kh, kw = w.shape
    padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = sliding_window_view(padded, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]  # n c oh ow kh kw
    oh, ow = windows.shape[2:4]
    cols = windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    return (cols @ w.reshape(o, -1).T).reshape(n, oh, ow, o).transpose(0, 3, 1, 2)


def numpy_pool(x):
    """train_cnn.pool in NumPy: 2x2 max pooling of [n, c, h, w]."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def numpy_float_forward(weights, x):
    """The float32 model in NumPy: weights is a list of (w, b) arrays, the
    convolutions' then the linear layer's."""
    for w, b in weights[:-1]:
        x = numpy_pool(np.maximum(numpy_conv2d(x, w) + b[:, None, None], 0))
    w, b = weights[-1]
    return x.reshape(x.shape[0], -1) @ w + b


def numpy_int8_forward(model, x):
    """int8_forward's computation in NumPy: (logits, [(uint8 input, int32
    sums) per layer])."""
    trace = []
    q = numpy_quantize(x, model[0]["s_x"], model[0]["z_x"])
    for i, layer in enumerate(model):
        w_q = layer["w_q"].numpy().astype(np.int32)
        if layer["kind"] == "conv":
            acc = numpy_conv2d(q.astype(np.int32), w_q)
            b = layer["b"].numpy().reshape(1, -1, 1, 1)
            scale = layer["scale"].numpy().reshape(1, -1, 1, 1)
        else:
            q = q.reshape(q.shape[0], -1)
            acc = q.astype(np.int32) @ w_q
            b, scale = layer["b"].numpy(), layer["scale"].numpy()
        trace.append((q, acc))
        y = (acc - layer["correction"].numpy()).astype(np.float32) * scale + b
        if i + 1 == len(model):
            return y, trace
        q = numpy_quantize(numpy_pool(np.maximum(y, 0)), model[i + 1]["s_x"], model[i + 1]["z_x"])


def cross_check(model, x_test, rtol=1e-5, atol=1e-5):
    """braze's int8 forward against NumPy's on the test images, as
    quantized_mlp.cross_check. Each layer's int32 sums must equal NumPy's
    int32 convolution (or matmul) of the same uint8 input bit for bit (that
    is the library call), and the sums less the correction must equal
    NumPy's convolution of q - z_x padded with 0 (the zero point taken off
    right at the border too: this checks the correction itself). The logits
    are compared with NumPy's whole int8 chain within float32 rounding
    (rtol, atol); the uint8 inputs that differ from NumPy's chain are
    counted. Returns the figures and a list of failures (empty when it
    passes)."""
    trace = []
    logits = int8_forward(model, bz.tensor(x_test), trace)
    bz.realize([logits] + [t for pair in trace for t in pair])  # one program, the traced values among its outputs
    want_logits, want_trace = numpy_int8_forward(model, x_test)
    failures = []
    inputs_off = 0
    for i, ((q, acc), (want_q, _)) in enumerate(zip(trace, want_trace)):
        layer = model[i]
        q, acc, w_q = q.numpy(), acc.numpy(), layer["w_q"].numpy().astype(np.int32)
        product = numpy_conv2d if layer["kind"] == "conv" else np.matmul
        if acc.dtype != np.int32 or not np.array_equal(acc, product(q.astype(np.int32), w_q)):
            failures.append(f"layer {i}: braze's int32 sums differ from NumPy's int32 {layer['kind']} of the same "
                            f"input")
        centered = product(q.astype(np.int32) - layer["z_x"], w_q)
        if not np.array_equal(acc - layer["correction"].numpy(), centered):
            failures.append(f"layer {i}: the zero point's correction is not the sum of z_x over the taps inside "
                            f"the input")
        inputs_off += int(np.count_nonzero(q != want_q))
    logits = logits.numpy()
    diff = float(np.max(np.abs(logits - want_logits)))
    if not np.allclose(logits, want_logits, rtol=rtol, atol=atol):
        failures.append(f"the logits differ from NumPy's by up to {diff:.3e} (rtol {rtol}, atol {atol}); "
                        f"{inputs_off} uint8 layer inputs differ")
    return {"logits": logits, "numpy_logits": want_logits, "logits_diff": diff, "inputs_off": inputs_off,
            "inputs": sum(q.size for q, _ in want_trace)}, failures


# --- the example --------------------------------------------------------------------------


def main(argv=None):
    """Trains, quantizes, evaluates, checks and times; returns the figures
    (accuracies, agreement, the cross-check's, the times and counts) and
    what made them (the int8 model, the float parameters, the test set).
    Exits non-zero when the int8 forward disagrees with NumPy's."""
    args = parse_args(argv)
    trained = train_cnn.train(args)
    params = trained["params"]
    x_train, _, x_test, y_test = trained["data"]

    ranges = calibrate(params, x_train, args.batches, args.seed, args.percentile)
    model = quantize_model(params, ranges)
    quantized_mlp.print_calibration(args, model, ranges)

    weights = [(params[f"conv{i}_w"].numpy(), params[f"conv{i}_b"].numpy()) for i in range(CONVS)]
    weights.append((params["fc_w"].numpy(), params["fc_b"].numpy()))
    return quantized_mlp.evaluate(args, model, params, ranges, (x_test, y_test), train_cnn.forward, int8_forward,
                                  cross_check, lambda x: numpy_float_forward(weights, x),
                                  "convolutions and matmul")


if __name__ == "__main__":
    main()
