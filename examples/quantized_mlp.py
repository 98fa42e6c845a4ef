"""Post-training int8 quantization of train_mlp.py's MLP, beside the float32 model it came from.

Trains the float32 MLP 64 -> 128 (relu) -> 10 on scikit-learn's digits as
examples/train_mlp.py does (its model, examples/training.py's loop, the
same seed), then quantizes it without retraining (issue 28,
docs/quantization.md):

- calibration: bz.quant.calibrate runs the float model over a few training
  batches and observes each layer's input; its range gives a per-tensor
  scale and zero point for uint8 activations (asymmetric; oneDNN multiplies
  uint8 by int8). --percentile P takes each batch's P-th percentile rather
  than its extremes.
- weights: int8, symmetric (zero point 0), one scale per output channel
  (bz.quant.qparams on each column's range).
- the forward, written as NumPy would have it: per layer
  acc = q.astype(int32) @ w_q.astype(int32), one oneDNN call summing the
  8-bit products in int32 (Note [Integer matmul]), then one fused kernel
  that removes the activation's zero point, dequantizes with the product
  scale s_x * s_w, adds the bias, applies relu and quantizes the result
  for the next layer.

Prints the float32 and int8 test accuracy, how often their predictions
agree, each forward's time on the 360 test digits (braze float32, braze
int8, NumPy float32) and braze's kernels and library calls for each.
Checks the int8 forward against the same integer computation in NumPy (the
int32 sums bit for bit, the logits within a tolerance) and exits non-zero
where they differ.

    python examples/quantized_mlp.py [--epochs N] [--seed S] [--percentile P] [--batches B] [--iterations N]

Needs scikit-learn (the digits ship with it). CPU only: a CUDA device
refuses integer matmuls today.
"""

import io
import statistics
import sys
import time

import numpy as np

import harness
import train_mlp
import training
from harness import bz


LAYERS = len(train_mlp.SIZES) - 1
ACTIVATION = "uint8"  # the layer inputs are pixels in [0, 1] and relu outputs: never negative


# --- the command line ---------------------------------------------------------------


def parse_args(argv=None):
    """train_mlp.py's options (fewer epochs by default: the model reaches
    ~97% in 10) and this example's."""
    p = training.digits_parser(__doc__.splitlines()[0], epochs=10, lr=train_mlp.LR)
    p.add_argument("--percentile", type=float, default=None,
                   help="calibrate on each batch's P-th percentile (say 99.99) rather than its extremes")
    p.add_argument("--batches", type=int, default=8, help="training batches of 64 to calibrate on (default 8)")
    p.add_argument("--iterations", type=int, default=50, help="timed forwards of each kind (default 50)")
    args = training.parse(p, argv, "epochs", "batches", "iterations")
    if bz._core._device_name(args.device) != "cpu":
        p.error("the int8 forward runs on the CPU only (a CUDA device refuses integer matmuls: issue 28)")
    return args


# --- calibration and the quantized model ------------------------------------------------


def layer_inputs(params, x):
    """What calibration observes: each layer's input in the float model
    (train_mlp.forward's layers, keeping what goes into each)."""
    seen = {}
    for i in range(LAYERS):
        seen[f"x{i}"] = x
        x = x @ params[f"w{i}"] + params[f"b{i}"]
        if i + 1 < LAYERS:
            x = bz.relu(x)
    return seen


def calibrate(params, x_train, count, seed, percentile=None):
    """{"x0": (lo, hi), ...}: the ranges of the layers' inputs over `count`
    shuffled training batches."""
    batches = [bz.tensor(x_train[idx]) for idx in training.batches(np.random.default_rng(seed), len(x_train))[:count]]
    return bz.quant.calibrate(layer_inputs, params, batches, percentile=percentile)


def quantize_model(params, ranges):
    """The int8 model, one dict per layer, of braze tensors made once (a
    per-channel parameter given as a NumPy array would be copied in again
    at every call) and Python numbers (scalar parameters: a new value does
    not compile a new program):

    s_x, z_x: the input's scale and zero point (per tensor, uint8);
    w_q: the weight in int8, symmetric, one scale s_w per output channel;
    scale: s_x * s_w, the scale of the int32 sums (float32, per channel);
    correction: z_x * sum_k w_q[k, :] (int32): the part of
      sum_k q[k] * w_q[k, :] that the zero point adds, since
      sum_k (q[k] - z_x) * w_q[k, :] = acc - correction. Computed once
      here, so that the product stays a plain 8-bit matmul;
    b: the float32 bias, added after dequantizing."""
    model = []
    for i in range(LAYERS):
        w = params[f"w{i}"].numpy()
        s_x, z_x = bz.quant.qparams(*ranges[f"x{i}"], dtype=ACTIVATION, symmetric=False)
        s_w, _ = bz.quant.qparams(w.min(axis=0), w.max(axis=0), dtype="int8", symmetric=True)
        w_q = bz.quantize(w, s_w, 0, "int8", axis=1).numpy()
        correction = int(z_x) * w_q.astype(np.int32).sum(axis=0)
        model.append({"s_x": float(s_x), "z_x": int(z_x), "s_w": s_w, "w_q": bz.tensor(w_q),
                      "scale": bz.tensor(np.float32(s_x) * s_w), "correction": bz.tensor(correction.astype(np.int32)),
                      "b": params[f"b{i}"]})
    return model


def int8_forward(model, x, trace=None):
    """The logits of the int8 model for float32 digits x (a braze tensor).
    Per layer one oneDNN call (the uint8 x int8 products summed in int32)
    and one fused kernel (what follows it, up to the next layer's uint8
    input); the first layer's quantize of x is a kernel of its own. With a
    list `trace`, appends each layer's (uint8 input, int32 sums) for the
    cross-check."""
    q = bz.quantize(x, model[0]["s_x"], model[0]["z_x"], ACTIVATION)
    for i, layer in enumerate(model):
        acc = q.astype(np.int32) @ layer["w_q"].astype(np.int32)
        if trace is not None:
            trace.append((q, acc))
        # Integers first (exact), then float32: (acc - z_x sum_k w_q) * s_x * s_w + b.
        y = bz.dequantize(acc - layer["correction"], layer["scale"], axis=1) + layer["b"]
        if i + 1 == len(model):
            return y
        q = bz.quantize(bz.relu(y), model[i + 1]["s_x"], model[i + 1]["z_x"], ACTIVATION)


# --- the same in NumPy ------------------------------------------------------------------


def numpy_float_forward(weights, x):
    """The float32 model in NumPy: weights is a list of (w, b) arrays."""
    for i, (w, b) in enumerate(weights):
        x = x @ w + b
        if i + 1 < len(weights):
            x = np.maximum(x, 0)
    return x


def numpy_quantize(x, scale, zero):
    """quantize's formula (docs/quantization.md) for uint8, per tensor."""
    return np.clip(np.round(x / np.float32(scale)) + np.float32(zero), 0, 255).astype(np.uint8)


def numpy_int8_forward(model, x):
    """int8_forward's computation in NumPy: (logits, [(uint8 input, int32
    sums) per layer]). NumPy runs the int32 matmul without a BLAS (slowly,
    but these are small)."""
    trace = []
    q = numpy_quantize(x, model[0]["s_x"], model[0]["z_x"])
    for i, layer in enumerate(model):
        acc = q.astype(np.int32) @ layer["w_q"].numpy().astype(np.int32)
        trace.append((q, acc))
        y = (acc - layer["correction"].numpy()).astype(np.float32) * layer["scale"].numpy() + layer["b"].numpy()
        if i + 1 == len(model):
            return y, trace
        q = numpy_quantize(np.maximum(y, 0), model[i + 1]["s_x"], model[i + 1]["z_x"])


def cross_check(model, x_test, rtol=1e-5, atol=1e-5):
    """braze's int8 forward against NumPy's on the test digits. Each
    layer's int32 sums must equal NumPy's int32 matmul of the same uint8
    input bit for bit (that is the library call). The logits are compared
    with NumPy's whole int8 chain within float32 rounding (rtol, atol): the
    fused kernels compute what NumPy does, so every uint8 input should
    come out the same too (counted; one off by a step would move a logit by
    up to s_x * max |w| = ~1e-2, failing the check). Returns the figures
    and a list of failures (empty when it passes)."""
    trace = []
    logits = int8_forward(model, bz.tensor(x_test), trace)
    bz.realize([logits] + [t for pair in trace for t in pair])  # one program, the traced values among its outputs
    want_logits, want_trace = numpy_int8_forward(model, x_test)
    failures = []
    inputs_off = 0
    for i, ((q, acc), (want_q, _)) in enumerate(zip(trace, want_trace)):
        q, acc = q.numpy(), acc.numpy()
        want_acc = q.astype(np.int32) @ model[i]["w_q"].numpy().astype(np.int32)
        if acc.dtype != np.int32 or not np.array_equal(acc, want_acc):
            failures.append(f"layer {i}: braze's int32 sums differ from NumPy's int32 matmul of the same input")
        inputs_off += int(np.count_nonzero(q != want_q))
    logits = logits.numpy()
    diff = float(np.max(np.abs(logits - want_logits)))
    if not np.allclose(logits, want_logits, rtol=rtol, atol=atol):
        failures.append(f"the logits differ from NumPy's by up to {diff:.3e} (rtol {rtol}, atol {atol}); "
                        f"{inputs_off} uint8 layer inputs differ")
    return {"logits": logits, "numpy_logits": want_logits, "logits_diff": diff, "inputs_off": inputs_off,
            "inputs": sum(q.size for q, _ in want_trace)}, failures


# --- timing and counting -------------------------------------------------------------------


def step_counts(*tensors):
    """(fused kernels, library calls) of the program computing `tensors`,
    from bz.explain's first line (it realizes nothing)."""
    words = bz.explain(*tensors, file=io.StringIO()).split("\n", 1)[0].split()
    # "N step(s): K fused kernel(s), L library call(s)"
    return int(words[2]), int(words[5])


def time_forwards(fns, x, iterations):
    """Median ms of each fn(x) (a NumPy result) over `iterations` runs,
    one fn after the other rather than in turn: on a 2-core machine the
    threads one library leaves spinning after a call (braze's, oneDNN's
    OpenMP, OpenBLAS's) slow the next library's first call many times
    over, which timing them in turn would measure. And bz.stats()'s deltas
    of each fn's last run."""
    times, counts = {}, {}
    for name, fn in fns.items():
        fn(x)  # the first call builds the program (fusion, code, oneDNN primitives)
        samples = []
        for _ in range(iterations):
            before = bz.stats()
            t0 = time.perf_counter()
            fn(x)
            samples.append((time.perf_counter() - t0) * 1e3)
            after = bz.stats()
        times[name] = statistics.median(samples)
        counts[name] = {k: after[k] - before[k] for k in
                        ("kernels_launched", "library_calls_reference", "allocations", "programs_compiled")}
    return times, counts


# --- the example --------------------------------------------------------------------------


def main(argv=None):
    """Trains, quantizes, evaluates, checks and times; returns the figures
    (accuracies, agreement, the cross-check's, the times and counts) and
    what made them (the int8 model, the float parameters, the test set).
    Exits non-zero when the int8 forward disagrees with NumPy's."""
    args = parse_args(argv)
    trained = train_mlp.train(args)
    params = trained["params"]
    x_train, _, x_test, y_test = trained["data"]

    ranges = calibrate(params, x_train, args.batches, args.seed, args.percentile)
    model = quantize_model(params, ranges)
    print_calibration(args, model, ranges)

    weights = [(params[f"w{i}"].numpy(), params[f"b{i}"].numpy()) for i in range(LAYERS)]
    return evaluate(args, model, params, ranges, (x_test, y_test), train_mlp.forward, int8_forward, cross_check,
                    lambda x: numpy_float_forward(weights, x), "matmuls")


def print_calibration(args, model, ranges):
    """Each layer's calibrated input range, its scale and zero point, and its
    weights' scales (both quantized examples)."""
    how = f"{args.percentile:g}th percentiles" if args.percentile is not None else "extremes"
    print(f"\ncalibrated on {args.batches} training batches of {training.BATCH} ({how}); activations {ACTIVATION} "
          f"per tensor, weights int8 symmetric per output channel")
    for i, layer in enumerate(model):
        lo, hi = (v + 0.0 for v in ranges[f"x{i}"])  # + 0.0: a relu's least output is -0.0, printed as 0
        kind = f" ({layer['kind']})" if "kind" in layer else ""
        print(f"  layer {i}{kind}: input range [{lo:.4g}, {hi:.4g}] -> scale {layer['s_x']:.4g}, zero point "
              f"{layer['z_x']}; weight scales {layer['s_w'].min():.3g} .. {layer['s_w'].max():.3g}")


def evaluate(args, model, params, ranges, test, forward, int8_forward, cross_check, numpy_forward, products):
    """What both quantized examples report of their int8 model (this one's
    and quantized_cnn.py's): the float32 and int8 test accuracy and how
    often their predictions agree, the cross-check against NumPy's integer
    computation (cross_check(model, x_test) -> (figures, failures)), and
    each forward's time on the test set (forward(params, x): the float
    model; int8_forward(model, x); numpy_forward(x): NumPy's float32), with
    braze's kernels and library calls. Returns the figures and what made
    them; exits non-zero when the int8 forward disagrees with NumPy's.
    `products` names the int8 library calls (for the line on VNNI)."""
    x_test, y_test = test
    # Accuracy on the test digits.
    test_x = bz.tensor(x_test)
    float_pred = bz.argmax(forward(params, test_x), axis=-1).numpy()
    check, failures = cross_check(model, x_test)
    int8_pred = check["logits"].argmax(axis=-1)
    float_acc, int8_acc = float(np.mean(float_pred == y_test)), float(np.mean(int8_pred == y_test))
    agreement = float(np.mean(float_pred == int8_pred))
    print(f"\ntest accuracy on {len(y_test)} digits: float32 {float_acc:.2%}, int8 {int8_acc:.2%} "
          f"(difference {100 * (int8_acc - float_acc):+.2f} points); predictions agree on {agreement:.2%}")
    print(f"int8 forward against NumPy's: int32 sums {'equal' if not failures else 'DIFFERENT'} in every layer; "
          f"{check['inputs_off']} of {check['inputs']} uint8 inputs differ from NumPy's chain; logits within "
          f"{check['logits_diff']:.2e} of NumPy's")

    # Time: each forward on the whole test set, as a serving loop runs it (harness.replaying:
    # one bz.jit program fed by bz.copyto, writing into the same output, allocating nothing).
    fns = {"braze float32": harness.replaying(lambda x: forward(params, x), args.device),
           "braze int8": harness.replaying(lambda x: int8_forward(model, x), args.device),
           "numpy float32": numpy_forward}
    times, counts = time_forwards(fns, x_test, args.iterations)
    steps = {"braze float32": step_counts(forward(params, test_x)),
             "braze int8": step_counts(int8_forward(model, test_x))}
    print(f"\nforward on the {len(x_test)} test digits, median of {args.iterations} on {harness.where('cpu')}:")
    # kernels and library calls: the program's steps (bz.explain); launched: bz.stats()'s count of
    # both in one replayed run; on the reference: library calls oneDNN refused.
    print(f"{'':<14} {'ms':>7} {'kernels':>7} {'library calls':>13} {'launched':>8} {'on the reference':>16} "
          f"{'allocs':>6}")
    for name, ms in times.items():
        if name in steps:
            c = counts[name]
            print(f"{name:<14} {ms:7.3f} {steps[name][0]:7d} {steps[name][1]:13d} {c['kernels_launched']:8d} "
                  f"{c['library_calls_reference']:16d} {c['allocations']:6d}")
        else:
            print(f"{name:<14} {ms:7.3f}")
    exact = bz._core._library_calls()["int8"]
    print(f"oneDNN sums int8 into int32 exactly on this CPU ({bz._core._library_calls()['isa']}): {exact}"
          + ("" if exact else f"; the int8 {products} ran on the reference interpreter"))

    result = {"float_accuracy": float_acc, "int8_accuracy": int8_acc, "agreement": agreement, "check": check,
              "failures": failures, "times_ms": times, "counts": counts, "steps": steps, "ranges": ranges,
              "model": model, "params": params, "test": (x_test, y_test), "float_predictions": float_pred}
    if failures:
        sys.exit("error: the int8 forward disagrees with NumPy's: " + "; ".join(failures))
    return result


if __name__ == "__main__":
    main()
