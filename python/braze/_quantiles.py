"""Order statistics built from braze's ops: median, percentile, quantile
and their nan- forms, NumPy's, every ``method`` (and amax and amin,
NumPy's names for the max and min reductions). Each sorts with
``bz.sort``, braze's stand-in for a sort op it does not have yet, which
realizes its operand and lets NumPy compute (python/braze/_gather.py's
rule); the picks and NumPy's interpolation after it are ordinary lazy ops
(the nan- forms compute their indices lazily per slice). Dtypes follow
NumPy's rules with braze's default float: integers interpolate in float32
where NumPy uses float64, as braze's mean does (the ToFloat rule, see
_numpy_functions._float). The dtype helpers here (_is_float, _promote,
_median_dtype) serve python/braze/_statistics.py, _grids.py and
_selection.py too.
"""

import builtins
import math

import numpy as np

from . import _core
from ._copyto import write_out
from ._numpy_functions import _bz, _t, normalized_axis
from ._reductions import max as amax, min as amin


def _is_float(dtype):
    return dtype.kind == "f" or dtype == _bz().bfloat16


def _promote(*dtypes):
    return _bz().result_type(*dtypes)


def _reduced(a, axis, op):
    """a with the reduced axes moved last and merged: (x, n, kept, rest)."""
    a = _t(a)
    if axis is None:
        axes = list(range(a.ndim))
    else:
        given = list(axis) if isinstance(axis, (tuple, list)) else [axis]
        axes = [normalized_axis(ax, a.ndim, op) for ax in given]
        if len(set(axes)) != len(axes):
            raise ValueError(f"{op}: repeated axis in {axis!r}")
    rest = [a.shape[d] for d in range(a.ndim) if d not in axes]
    x = _core.permute_dims(a, [d for d in range(a.ndim) if d not in axes] + sorted(axes)) if a.ndim else a
    n = math.prod(a.shape[d] for d in axes)
    kept = [1 if d in axes else a.shape[d] for d in range(a.ndim)]
    return _core.reshape(x, rest + [n]), n, kept, rest


def _finish(r, q_shape, rest, kept, keepdims, out, op):
    """r (the reduced shape, then the flat q) as NumPy lays it out: q's axes first."""
    if q_shape is not None:
        r = _core.permute_dims(r, [r.ndim - 1] + list(range(r.ndim - 1)))
    shape = ([] if q_shape is None else list(q_shape)) + (kept if keepdims else rest)
    return write_out(_core.reshape(r, shape), out, op)


def _nan_tensor(shape, dtype, device):
    return _core.full(list(shape), math.nan, dtype.name, device)


def _sorted(x):
    return _bz().sort(x, axis=-1)


def _median_dtype(a):
    return a.dtype if _is_float(a.dtype) else np.dtype("float32")


def _mid(lo, hi, dtype):
    """NumPy's mean of the middle one or two (float16 and bfloat16 in float32, +0.0 for -0.0)."""
    wide = "float32" if dtype.itemsize < 4 else dtype.name
    lo = _core.astype(lo, wide)
    r = lo + 0.0 if hi is None else (lo + _core.astype(hi, wide) + 0.0) / 2.0
    return _core.astype(r, dtype.name)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's median: the middle value, or the mean of the middle two, of
    each slice along ``axis`` (None: all; an int or a tuple); NaN where a
    slice holds a NaN or is empty. Integers give float32 (NumPy: float64).
    Sorts with ``bz.sort``, which realizes ``a`` (NumPy computes the sort)."""
    a = _t(a)
    dtype = _median_dtype(a)
    x, n, kept, rest = _reduced(a, axis, "median")
    if n == 0 or math.prod(rest) == 0:
        return _finish(_nan_tensor(rest, dtype, a.device), None, rest, kept, keepdims, out, "median")
    s = _sorted(x)
    h = n // 2
    r = _mid(s[..., h], None, dtype) if n % 2 else _mid(s[..., h - 1], s[..., h], dtype)
    if _is_float(a.dtype):
        r = _core.where(_core.isnan(s[..., -1]), math.nan, r)  # NaN sorts last
    return _finish(r, None, rest, kept, keepdims, out, "median")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median of the values that are not NaN; NaN for a slice of NaNs (NumPy
    warns there). Sorts (and takes along the axis) with braze's stand-ins,
    which realize."""
    a = _t(a)
    if not _is_float(a.dtype):
        return median(a, axis, out, overwrite_input, keepdims)
    dtype = a.dtype
    x, n, kept, rest = _reduced(a, axis, "nanmedian")
    if n == 0 or math.prod(rest) == 0:
        return _finish(_nan_tensor(rest, dtype, a.device), None, rest, kept, keepdims, out, "nanmedian")
    s = _sorted(x)
    k = _core.sum(_core.astype(_core.logical_not(_core.isnan(s)), "int64"), [-1], True)  # NaNs sort last
    lo = _core.maximum(_core.bitwise_right_shift(k - 1, 1), 0)
    hi = _core.minimum(_core.bitwise_right_shift(k, 1), n - 1)
    both = _bz().take_along_axis(s, _bz().concatenate([lo, hi], axis=-1), axis=-1)
    odd = _core.bitwise_and(k, 1) == 1
    even = _mid(both[..., 0:1], both[..., 1:2], dtype)
    r = _core.where(k == 0, math.nan, _core.where(odd, _mid(both[..., 1:2], None, dtype), even))
    return _finish(_core.reshape(r, rest), None, rest, kept, keepdims, out, "nanmedian")


class _HostOps:
    floor, ceil, around, where, maximum = np.floor, np.ceil, np.around, np.where, np.maximum

    @staticmethod
    def to_int(x):
        return np.asarray(x).astype(np.int64)


class _LazyOps:
    floor, ceil, around, where, maximum = _core.floor, _core.ceil, _core.round, _core.where, _core.maximum

    @staticmethod
    def to_int(x):
        return _core.astype(x, "int64")


def _discrete(o, index, pick_previous):
    previous = o.floor(index)
    gamma = index - previous
    return o.maximum(o.to_int(o.where(pick_previous(gamma, index), previous, previous + 1)), 0)


def _continuous(alpha, beta):
    return lambda n, q, o: n * q + (alpha + q * (1 - alpha - beta)) - 1


def _same(gamma, index, o):
    return gamma


# NumPy's methods (numpy/lib/_function_base_impl.py, _QuantileMethods): the
# virtual index from (n, q), and how the interpolation weight is fixed (None:
# the index is an integer, no interpolation).
_METHODS = {
    "inverted_cdf": (lambda n, q, o: _discrete(o, n * q - 1, lambda g, i: g == 0), None),
    "averaged_inverted_cdf": (lambda n, q, o: n * q - 1, lambda g, i, o: o.where(g == 0, 0.5, 1.0)),
    "closest_observation": (lambda n, q, o: _discrete(o, n * q - 1 - 0.5,
                                                      lambda g, i: (g == 0) & (o.floor(i) % 2 == 1)), None),
    "interpolated_inverted_cdf": (_continuous(0, 1), _same),
    "hazen": (_continuous(0.5, 0.5), _same),
    "weibull": (_continuous(0, 0), _same),
    "linear": (lambda n, q, o: (n - 1) * q, _same),
    "median_unbiased": (_continuous(1 / 3.0, 1 / 3.0), _same),
    "normal_unbiased": (_continuous(3 / 8.0, 3 / 8.0), _same),
    "lower": (lambda n, q, o: o.to_int(o.floor((n - 1) * q)), None),
    "higher": (lambda n, q, o: o.to_int(o.ceil((n - 1) * q)), None),
    "midpoint": (lambda n, q, o: 0.5 * (o.floor((n - 1) * q) + o.ceil((n - 1) * q)),
                 lambda g, i, o: o.where(i % 1 == 0, 0.0, 0.5)),
    "nearest": (lambda n, q, o: o.to_int(o.around((n - 1) * q)), None),
}


def _lerp(a, b, t, t1, high):
    """NumPy's _lerp: a + (b - a) t, or b - (b - a)(1 - t) where t >= 0.5."""
    d = b - a
    if isinstance(high, bool):
        return b - d * t1 if high else a + d * t
    return _core.where(high, b - d * t1, a + d * t)


def _quantile(a, q, axis, out, method, keepdims, interpolation, weights, op, skip_nan, scale):
    if weights is not None:
        raise TypeError(f"{op}: weights= is not supported")
    if interpolation is not None:
        if method != "linear":
            raise TypeError(f"{op}: give only method=, not interpolation= as well")
        method = interpolation
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {list(_METHODS)}")
    bz = _bz()
    a = _t(a)
    weak = type(q) in (int, float)  # NumPy's weak q: the result keeps a's float type
    qs = np.asarray(q.numpy() if isinstance(q, _core.Tensor) else q)
    if scale != 1:
        qs = np.true_divide(qs, scale)
    if qs.dtype == np.bool_ or qs.dtype.kind not in "iuf":
        qs = qs.astype(np.float64)
    if qs.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if qs.size and not (qs.min() >= 0 and qs.max() <= 1):
        raise ValueError("Percentiles must be in the range [0, 100]" if scale == 100 else
                         "Quantiles must be in the range [0, 1]")
    index_of, fix_gamma = _METHODS[method]
    integral = fix_gamma is None or (method == "linear" and qs.dtype.kind in "iu")
    if not _is_float(a.dtype):
        skip_nan = False  # nothing to skip
    if integral:
        dtype = a.dtype
    else:
        dtype = a.dtype if _is_float(a.dtype) else np.dtype("float32")
        if not weak:
            gamma_dtype = np.dtype("float64") if qs.dtype.kind in "iu" else qs.dtype
            dtype = _promote(dtype, gamma_dtype)
    q_shape = None if qs.ndim == 0 else qs.shape
    x, n, kept, rest = _reduced(a, axis, op)
    flat_q = qs.reshape(-1)
    nq = flat_q.size
    if n == 0 and not skip_nan:
        raise IndexError(f"{op}: index -1 is out of bounds for axis 0 with size 0")
    if n == 0 or math.prod(rest) == 0 or nq == 0:
        r = _nan_tensor(rest + [nq], dtype, a.device) if _is_float(dtype) else \
            _core.full(rest + [nq], 0, dtype.name, a.device)
        return _finish(r if q_shape is not None else _core.reshape(r, rest), q_shape, rest, kept, keepdims, out, op)
    s = _sorted(x)

    if skip_nan:
        # The virtual indices depend on each slice's count of values: lazy,
        # as NumPy's _nanquantile_1d computes them per slice.
        o = _LazyOps
        k = _core.sum(_core.astype(_core.logical_not(_core.isnan(s)), "int64"), [-1], True)
        qt = bz.asarray(flat_q, device=a.device)
        if integral and fix_gamma is not None:  # linear with integer q: integer indices
            index = k * qt - qt
        else:
            index = index_of(k, qt if integral or qt.dtype.kind == "f" else _core.astype(qt, "float64"), o)
        count = k
    else:
        o = _HostOps
        index = np.asarray(index_of(n, flat_q, o)) if not (integral and fix_gamma is not None) else (n - 1) * flat_q
        count = n

    if integral:
        previous = o.to_int(index)
        high = None
    else:
        lower = o.floor(index)
        above, below = index >= count - 1, index < 0
        previous = o.where(below, 0, o.where(above, -1, lower))
        following = o.where(below, 0, o.where(above, -1, lower + 1))
        gamma = fix_gamma(index - previous, index, o)
        if o is _HostOps:
            gamma = np.asarray(gamma).astype(index.dtype)
            high = gamma >= 0.5
            t1 = 1 - gamma
            if weak and gamma.size == 1:
                gamma, t1, high = float(gamma[0]), float(t1[0]), builtins.bool(high[0])
            else:
                gamma = bz.asarray(gamma.astype(dtype), device=a.device)
                t1 = bz.asarray(t1.astype(dtype), device=a.device)
                high = bz.asarray(high, device=a.device)
        else:
            gamma = _core.astype(gamma, index.dtype.name)
            high = gamma >= 0.5
            t1 = _core.astype(1 - gamma, dtype.name)
            gamma = _core.astype(gamma, dtype.name)
        previous = o.to_int(previous)
        following = o.to_int(following)

    def positions(i):  # -1 is the last value (of the slice's values, for the nan- forms)
        if o is _HostOps:
            return np.where(i < 0, n - 1, i)
        return _core.minimum(_core.maximum(_core.where(i < 0, count - 1, i), 0), n - 1)

    wanted = [positions(previous)] if integral else [positions(previous), positions(following)]
    if o is _HostOps:
        picked = bz.take(s, np.concatenate(wanted), axis=-1)
    else:
        picked = bz.take_along_axis(s, wanted[0] if integral else bz.concatenate(wanted, axis=-1), axis=-1)
    if integral:
        r = picked
    else:
        lo = _core.astype(picked[..., :nq], dtype.name)
        hi = _core.astype(picked[..., nq:], dtype.name)
        r = _lerp(lo, hi, gamma, t1, high)
    if _is_float(a.dtype):
        if skip_nan:
            r = _core.where(count == 0, math.nan, r)
        else:
            r = _core.where(_core.expand_dims(_core.isnan(s[..., -1]), -1), math.nan, r)  # NaN sorts last
    if q_shape is None:
        r = _core.reshape(r, rest)
    return _finish(r, q_shape, rest, kept, keepdims, out, op)


_QUANTILE_DOC = """

    ``method`` is any of NumPy's ("linear", the default, "lower", "higher",
    "nearest", "midpoint", and the Hyndman-Fan ones); ``axis`` None, an int
    or a tuple; ``keepdims``. The result dtype is NumPy's, except that
    integers interpolate in float32 (NumPy: float64). Infinities
    interpolate as NumPy's formula does (inf - inf is NaN). Sorts with
    ``bz.sort``, which realizes ``a`` (NumPy computes the sort); the
    interpolation is lazy. weights= is not supported."""


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
             interpolation=None):
    return _quantile(a, q, axis, out, method, keepdims, interpolation, weights, "quantile", False, 1)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
               interpolation=None):
    return _quantile(a, q, axis, out, method, keepdims, interpolation, weights, "percentile", False, 100)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
                interpolation=None):
    return _quantile(a, q, axis, out, method, keepdims, interpolation, weights, "nanquantile", True, 1)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    return _quantile(a, q, axis, out, method, keepdims, interpolation, weights, "nanpercentile", True, 100)


quantile.__doc__ = "The q-th quantiles (q in [0, 1]) along ``axis``, NumPy's; NaN where a slice holds a NaN." + \
    _QUANTILE_DOC
percentile.__doc__ = "The q-th percentiles (q in [0, 100]) along ``axis``, NumPy's." + _QUANTILE_DOC
nanquantile.__doc__ = "quantile of the values that are not NaN (NaN for a slice of NaNs); the indices are " \
    "computed lazily per slice and taken with take_along_axis." + _QUANTILE_DOC
nanpercentile.__doc__ = "percentile of the values that are not NaN (NaN for a slice of NaNs)." + _QUANTILE_DOC


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile"]
# NumPy ufuncs braze builds here (its __array_ufunc__): none.
UFUNCS = []

__all__ = FUNCTIONS + UFUNCS + ["amax", "amin"]
