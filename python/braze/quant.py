"""Quantization (issue 28, first step): quantize and dequantize, per tensor
or per channel, symmetric or asymmetric, built from braze's element-wise
ops so that they fuse with whatever is around them (a dequantize, the
float work after it and the quantize of the result are one kernel); the
scale and zero point of a range (`qparams`); and `calibrate`, which runs a
model over sample batches and collects the ranges of the tensors it
names. `docs/quantization.md` has the formulas and the conventions.

The product of quantized values is written as NumPy has it,
`a.astype("int32") @ w.astype("int32")` with int8 (or uint8) a and int8 w:
one oneDNN call multiplying the 8-bit values into int32 (Note [Integer
matmul] in fusion/passes.h); so is bz.conv2d of such casts. Not here yet:
cuBLASLt's int8 matmul.
"""

import numpy as np

from . import _core
from ._numpy_functions import _bz, _t, normalized_axis

__all__ = ["quantize", "dequantize", "qparams", "calibrate"]

# The integer types a value quantizes to, and their ranges.
_RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


def _dtype_name(dtype, op):
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = repr(dtype)
    if name not in _RANGES:
        raise TypeError(f"{op}: dtype must be int8 or uint8, got {name}")
    return name


def _channel_axis(axis, ndim, op):
    if axis is None:
        return None
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{op}: axis must be an int or None, got {type(axis).__name__}")
    return normalized_axis(axis, ndim, op)


def _parameter(v, x, axis, op, what, dtype):
    """A scale or zero point as x reads it: a number or 0-d tensor for the
    whole tensor, or one value per channel along `axis` (a 1-d array),
    viewed to broadcast along that axis."""
    if isinstance(v, _core.Tensor):
        t = v if v.dtype == np.dtype(dtype) else _core.astype(v, dtype)
    else:
        a = np.asarray(v, dtype=dtype)
        t = _bz().tensor(a, device=x.device) if a.ndim else a[()].item()
    ndim = 0 if not isinstance(t, _core.Tensor) else t.ndim
    if ndim == 0:
        return t
    if axis is None:
        raise ValueError(f"{op}: a {what} of shape {tuple(t.shape)} needs axis= (one value per channel)")
    if ndim != 1 or t.shape[0] != x.shape[axis]:
        raise ValueError(f"{op}: {what} has shape {tuple(t.shape)}, but axis {axis} of shape {tuple(x.shape)} "
                         f"has {x.shape[axis]} channels")
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return _core.reshape(t, shape)


def _float(x):
    return x if np.issubdtype(x.dtype, np.floating) else _core.astype(x, "float32")


def quantize(x, scale, zero_point=0, dtype="int8", axis=None):
    """round(x / scale) + zero_point, saturated to the range of `dtype`
    (int8: [-128, 127], uint8: [0, 255]) and stored as it. Ties round to
    even (np.round's rule, and oneDNN's); +-inf saturate; NaN becomes the
    zero point (it has no integer; dequantized it reads 0.0). `scale` and
    `zero_point` are numbers (per tensor) or, with `axis`, one per channel
    along that axis. Lazy: it fuses with the ops around it."""
    x = _t(x)
    name = _dtype_name(dtype, "quantize")
    axis = _channel_axis(axis, x.ndim, "quantize")
    f = _float(x)
    s = _parameter(scale, f, axis, "quantize", "scale", f.dtype.name)
    z = _parameter(zero_point, f, axis, "quantize", "zero_point", f.dtype.name)
    lo, hi = _RANGES[name]
    q = _bz().clip(_core.round(f / s) + z, lo, hi)
    q = _core.where(_core.isnan(f), z, q)
    return _core.astype(q, name)


def dequantize(q, scale, zero_point=0, axis=None, dtype="float32"):
    """(q - zero_point) * scale as `dtype` (float32 unless said), per
    tensor or, with `axis`, per channel; lazy, as quantize."""
    q = _t(q)
    axis = _channel_axis(axis, q.ndim, "dequantize")
    name = np.dtype(dtype).name
    if not np.issubdtype(np.dtype(name), np.floating):
        raise TypeError(f"dequantize: dtype must be a float type, got {name}")
    v = _core.astype(q, name)
    s = _parameter(scale, v, axis, "dequantize", "scale", name)
    z = _parameter(zero_point, v, axis, "dequantize", "zero_point", name)
    return (v - z) * s


def qparams(lo, hi, dtype="int8", symmetric=True):
    """The scale and zero point that map the range [lo, hi] (numbers, or
    arrays of one per channel) onto `dtype`'s, as NumPy values: the range
    is first widened to hold 0 (so zero quantizes exactly). Symmetric:
    scale = max(|lo|, |hi|) / 127.5 and zero point 0 (int8) or 128
    (uint8); asymmetric: scale = (hi - lo) / 255 and zero point
    qmin - round(lo / scale), clamped to the range. A scale is never below
    float32's epsilon (an all-zero range). These are PyTorch's MinMaxObserver
    formulas."""
    name = _dtype_name(dtype, "qparams")
    qmin, qmax = _RANGES[name]
    lo = np.minimum(np.asarray(lo, dtype=np.float64), 0.0)
    hi = np.maximum(np.asarray(hi, dtype=np.float64), 0.0)
    if lo.shape != hi.shape:
        raise ValueError(f"qparams: lo has shape {lo.shape} but hi has {hi.shape}")
    eps = float(np.finfo(np.float32).eps)
    if symmetric:
        scale = np.maximum(np.maximum(-lo, hi) / ((qmax - qmin) / 2), eps)
        zero = np.full(scale.shape, 0 if name == "int8" else (qmin + qmax + 1) // 2, dtype=np.int64)
    else:
        scale = np.maximum((hi - lo) / (qmax - qmin), eps)
        zero = np.clip(qmin - np.round(lo / scale), qmin, qmax).astype(np.int64)
    scale = scale.astype(np.float32)
    return (scale[()], zero[()]) if scale.ndim == 0 else (scale, zero)


def _observed(t, axis, percentile):
    """The range of one tensor: per tensor (axis None) or per channel."""
    t = _float(_t(t))
    if axis is not None:
        axis = _channel_axis(axis, t.ndim, "calibrate")
        t = _core.reshape(_bz().moveaxis(t, axis, -1), [-1, t.shape[axis]])
    else:
        t = _core.reshape(t, [-1])
    over = 0
    if percentile is None:
        lo, hi = _core.min(t, axis=over), _core.max(t, axis=over)
    else:
        lo = _bz().percentile(t, 100.0 - percentile, axis=over)
        hi = _bz().percentile(t, percentile, axis=over)
    _core.realize([lo, hi])
    return lo.numpy().astype(np.float64), hi.numpy().astype(np.float64)


def calibrate(model_fn, params, batches, *, axis=None, percentile=None):
    """Runs `model_fn(params, batch)` for each batch; it returns a dict of
    the tensors to observe by name (a layer's input, its weight, its
    output). Returns {name: (lo, hi)}: over all batches, the least and the
    greatest value of each tensor (axis=None) or of each channel along
    `axis` (NumPy arrays then); with `percentile=p` (say 99.99), each
    batch's (100 - p)-th and p-th percentiles instead of its extremes,
    averaged over the batches, so that rare outliers do not stretch the
    range. Feed the result to qparams."""
    if percentile is not None and not 50.0 < float(percentile) <= 100.0:
        raise ValueError(f"calibrate: percentile must be in (50, 100], got {percentile}")
    seen = {}
    count = 0
    for batch in batches:
        observed = model_fn(params, batch)
        if not isinstance(observed, dict):
            raise TypeError(f"calibrate: model_fn must return a dict of tensors by name, got {type(observed).__name__}")
        for name, t in observed.items():
            lo, hi = _observed(t, axis, percentile)
            if name not in seen:
                seen[name] = (lo, hi)
            elif percentile is None:
                seen[name] = (np.minimum(seen[name][0], lo), np.maximum(seen[name][1], hi))
            else:
                seen[name] = (seen[name][0] + lo, seen[name][1] + hi)
        count += 1
    if count == 0:
        raise ValueError("calibrate: no batches")
    if percentile is not None:
        seen = {n: (lo / count, hi / count) for n, (lo, hi) in seen.items()}
    return {n: (lo[()], hi[()]) for n, (lo, hi) in seen.items()}
