"""NumPy functions that combine shifted slices of an array: ``gradient``
(finite differences), ``convolve`` and ``correlate`` (sliding weighted
sums). Slices and
pads are views, so each result is lazy element-wise arithmetic over views
of its input: one kernel, nothing copied.
"""

import builtins
import operator

import numpy as np

from . import _core
from ._numpy_functions import _bz, _t


def _along(x, axis, start, stop, step=1):
    """x[..., start:stop:step, ...] on `axis` (a view)."""
    key = [slice(None)] * x.ndim
    key[axis] = slice(start, stop, step)
    return x[tuple(key)]


def _joined(parts, axis):
    return _bz().concatenate(parts, axis=axis)


def _gradient_1d(f, axis, h, edge_order):
    """NumPy's second-order central differences inside, first- or
    second-order one-sided ones at the two ends, for a uniform spacing h."""
    n = f.shape[axis]
    if n < edge_order + 1:
        raise ValueError(f"gradient: axis {axis} of length {n} is too short for edge_order={edge_order} "
                         f"(it needs {edge_order + 1})")
    inner = (_along(f, axis, 2, n) - _along(f, axis, 0, n - 2)) / (2.0 * h)
    if edge_order == 1:
        first = (_along(f, axis, 1, 2) - _along(f, axis, 0, 1)) / h
        last = (_along(f, axis, n - 1, n) - _along(f, axis, n - 2, n - 1)) / h
    else:
        first = (-1.5 * _along(f, axis, 0, 1) + 2.0 * _along(f, axis, 1, 2) - 0.5 * _along(f, axis, 2, 3)) / h
        last = (0.5 * _along(f, axis, n - 3, n - 2) - 2.0 * _along(f, axis, n - 2, n - 1)
                + 1.5 * _along(f, axis, n - 1, n)) / h
    return _joined([first, inner, last], axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """NumPy's gradient with scalar spacings (one for all axes, or one per
    axis); integer input gives float32 (braze's default float, where NumPy
    gives float64). Coordinate arrays as spacing are a TypeError."""
    f = _t(f)
    if f.dtype.kind != "f":
        f = _core.astype(f, "float32")
    axes = list(range(f.ndim)) if axis is None else [axis] if isinstance(axis, int) else list(axis)
    axes = [operator.index(a) % f.ndim for a in axes]
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = [float(varargs[0])] * len(axes)
    elif len(varargs) == len(axes) and builtins.all(np.ndim(v) == 0 for v in varargs):
        spacing = [float(v) for v in varargs]
    else:
        raise TypeError("gradient: only scalar spacings are supported (one, or one per axis), not coordinate arrays")
    if edge_order not in (1, 2):
        raise ValueError("gradient: edge_order must be 1 or 2")
    result = [_gradient_1d(f, a, h, edge_order) for a, h in zip(axes, spacing)]
    return result[0] if len(result) == 1 else tuple(result)


# Past this many taps the shifted views would make one kernel of as many
# loads: NumPy convolves the values instead (its own direct sum).
_MAX_SHIFTED_TAPS = 64


def _tree_sum(terms):
    while len(terms) > 1:  # pairwise: the graph's depth grows as log2 of the taps
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]


def convolve(a, v, mode="full"):
    """NumPy's 1-D convolve: sum_k v[k] * a[n - k], a sum of len(v) shifted
    views of `a` padded with zeros (the shorter of the two slides over the
    longer, as NumPy swaps them); modes full, same and valid. Past
    _MAX_SHIFTED_TAPS taps the values are realized and NumPy convolves
    them (a realized tensor comes back)."""
    a, v = _t(a), _t(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"convolve: both operands must be 1-D, got shapes {list(a.shape)} and {list(v.shape)}")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError("convolve: an operand is empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', not {mode!r}")
    if m > _MAX_SHIFTED_TAPS:
        return _bz().asarray(np.convolve(a.numpy(), v.numpy(), mode))
    padded = _bz().pad(a, (m - 1, m - 1))  # a view: zeros outside a
    total = _tree_sum([v[k] * padded[m - 1 - k:m - 1 - k + n + m - 1] for k in range(m)])
    if mode == "full":
        return total
    if mode == "same":
        start = (m - 1) // 2
        return total[start:start + n]
    return total[m - 1:n]  # valid


def correlate(a, v, mode="valid"):
    """NumPy's 1-D correlate of real arrays: sum_n a[n + k] * v[n], the
    convolution with v reversed (a view); a longer v is correlated with a
    and the result reversed, as NumPy does."""
    a, v = _t(a), _t(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"correlate: both operands must be 1-D, got shapes {list(a.shape)} and {list(v.shape)}")
    if v.shape[0] > a.shape[0]:
        return convolve(v, a[::-1], mode)[::-1]
    return convolve(a, v[::-1], mode)


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["gradient", "convolve", "correlate"]
UFUNCS = []
__all__ = FUNCTIONS
