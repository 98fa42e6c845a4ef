"""More NumPy functions built from braze's ops: the rest of NumPy's
element-wise math (rint, cbrt, ldexp, frexp, modf, divmod, gcd, lcm,
nextafter, ...), order statistics (median, percentile, quantile and their
nan- forms), cov and corrcoef, and creation and index helpers (logspace,
geomspace, mgrid, ogrid, diag, vander, interp, ...).

As in python/braze/_numpy_functions.py, each function records ordinary
lazy ops, so the element-wise ones fuse with what surrounds them into one
kernel. Where NumPy's answer needs an op braze does not have yet, the
function uses braze's stand-in for it, which realizes its operands and
lets NumPy compute (python/braze/_gather.py's rule): the order statistics
sort (``bz.sort``), interp and digitize search (``bz.searchsorted``),
bincount and histogram count (a scatter: bincount's length is in the
data), nanargmax/nanargmin check for an all-NaN slice (NumPy's
ValueError), append, cov(m, y) and interp(period=) concatenate (Note
[Concatenation realizes]). Their docstrings say so.

Integer-exact parts stay exact: powers of two are built from their bits
(not exp2, whose integer powers are not exact on every backend), so
ldexp, frexp, nextafter and spacing are exact; gcd runs Euclid's
algorithm with least absolute remainders for a fixed number of steps (the
type's bit count: each step at least halves the remainder), lcm divides
exactly.

Dtypes follow NumPy's rules with braze's default float: where NumPy
computes an integer input in float64 (median, cbrt, trapezoid, ...),
braze computes it in float32, as its mean does (the ToFloat rule, see
_numpy_functions._float); float32 stays float32 where NumPy widens it to
float64 (cov, corrcoef, interp, vander, logspace, geomspace, mgrid);
Python lists are read as ``bz.asarray`` reads them (float32, int64).
"""

import builtins
import math
import operator

import numpy as np

from . import _core
from ._copyto import write_out
from ._numpy_functions import _axis, _bz, _float, _t, copysign, diagonal, floor_divide, tile, trunc
from ._reductions import max as amax, min as amin


def _c(value, dtype, device):
    """A 0-d constant of dtype on device (a Python number alone would be weak)."""
    return _core.full([], value, np.dtype(dtype).name, device)


def _pair(x1, x2):
    """_numpy_functions._pair, the Python number made on the tensor's device:
    a Python number beside a tensor takes the dtype braze gives that pair."""
    weak = [isinstance(x, (int, float, bool)) and not isinstance(x, np.generic) for x in (x1, x2)]
    if weak[0] == weak[1]:
        return _t(x1), _t(x2)
    t = _t(x2 if weak[0] else x1)
    v = x1 if weak[0] else x2
    w = _c(v, _core.add(t, v).dtype, t.device)
    return (w, t) if weak[0] else (t, w)


def _float_pair(x1, x2):
    a, b = _pair(x1, x2)
    return _float(a), _float(b)


def _is_float(dtype):
    return dtype.kind == "f" or dtype == _bz().bfloat16


def _promote(*dtypes):
    return _bz().result_type(*dtypes)


# --- exact powers of two ---------------------------------------------------------------------------------


def _pow2(n):
    """2.0 ** n as float64 for an int64 tensor n in [-1074, 1023], exact and
    without exp2 (whose integer powers are not exact on every backend): n
    = 32 h + l, 2^l an integer shift, 2^(32 h) the product of the powers
    2^(32 * 2^b) the bits of h + 30 select, from 2^-960 (products of powers
    of two in range are exact); below 2^-900, 2^(n + 128) * 2^-128."""
    low = n < -900
    k = _core.where(low, n + 128, n)  # [-946, 1023]
    u = _core.bitwise_right_shift(k, 5) + 30  # h + 30 in [0, 61]
    r = _core.astype(_core.bitwise_left_shift(_c(1, "int64", n.device), _core.bitwise_and(k, 31)), "float64")
    r = r * 2.0 ** -960
    for b in (5, 5, 4, 3, 2, 1, 0):  # bit 5's 2^1024 as 2^512 twice
        factor = 2.0 ** (512 if b == 5 else 32 << b)
        r = _core.where(_core.bitwise_and(u, 1 << b) != 0, r * factor, r)
    return _core.where(low, r * 2.0 ** -128, r)


def _scale(w, n, wide):
    """w * 2**n for float64 w and int64 n, rounded once. wide (w holds a
    float64's values): musl's scalbn, the scaling beyond the exponent range
    first, by 2^1023 or 2^-969, so that the last product is the only one
    that rounds; else (w holds a float32's, float16's or bfloat16's values)
    n is clamped to +-400, past which the narrow result is 0 or inf anyway,
    and the float64 product is exact."""
    if not wide:
        return w * _pow2(_core.minimum(_core.maximum(n, -400), 400))
    n = _core.minimum(_core.maximum(n, -2300), 2300)
    for _ in range(2):
        up, down = n > 1023, n < -1022
        w = _core.where(up, w * 2.0 ** 1023, _core.where(down, w * 2.0 ** -969, w))
        n = _core.where(up, n - 1023, _core.where(down, n + 969, n))
    return w * _pow2(_core.minimum(_core.maximum(n, -1022), 1023))


def _frexp64(w):
    """(m, e) of a float64 tensor, m in [0.5, 1) by magnitude, int64 e; m
    is w and e 0 for 0, infinities and NaN."""
    a = _core.abs(w)
    special = _core.logical_or(a == 0, _core.logical_or(_core.isinf(a), _core.isnan(a)))
    tiny = a < 2.0 ** -1022  # subnormal: scaled up first, so that log2 sees a normal number
    a = _core.where(special, _c(1.0, "float64", w.device), _core.where(tiny, a * 2.0 ** 54, a))
    e = _core.astype(_core.floor(_core.log2(a)), "int64") + 1  # in [-1021, 1025]
    m = a * _pow2(_core.maximum(-e, -1074))  # within a factor 2 of [0.5, 1): log2 may be off by one
    big, small = m >= 1.0, m < 0.5
    m = _core.where(big, m * 0.5, _core.where(small, m * 2.0, m))
    e = e + _core.where(big, 1, _core.where(small, -1, 0)) - _core.where(tiny, 54, 0)
    m = _core.where(special, w, _core.where(w < 0, _core.negative(m), m))
    return m, _core.where(special, 0, e)


# (mantissa digits, frexp exponent of the smallest normal) by dtype, for nextafter and spacing
_DIGITS = {"float64": (53, -1021), "float32": (24, -125), "float16": (11, -13), "bfloat16": (8, -125)}


# --- element-wise ----------------------------------------------------------------------------------------


def rint(x):
    """Rounds to the nearest integer, halves to even (braze's round).
    Integers give float32 (NumPy: float64)."""
    return _core.round(_float(x))


def fabs(x):
    return _core.abs(_float(x))


def cbrt(x):
    """The real cube root: exp(log|x| / 3) and a Newton step, in float64
    (float32 and narrower round once from it, so exact cubes come out
    exact); keeps the sign, -0.0, infinities and NaN."""
    x = _float(x)
    w = _core.astype(x, "float64")
    a = _core.abs(w)
    special = _core.logical_or(a == 0, _core.logical_or(_core.isinf(a), _core.isnan(a)))
    a = _core.where(special, _c(1.0, "float64", w.device), a)
    r = _core.exp(_core.log(a) * (1.0 / 3.0))
    r = r - (r - a / (r * r)) * (1.0 / 3.0)
    r = _core.where(special, w, _core.where(w < 0, _core.negative(r), r))
    return _core.astype(r, x.dtype.name)


def ldexp(x1, x2):
    """x1 * 2**x2, exact until the result's own rounding (computed in
    float64: float32 and narrower round once from it). x2 must be an
    integer, as in NumPy."""
    x = _float(x1)
    n = x2 if isinstance(x2, _core.Tensor) else _bz().asarray(x2, device=x.device)
    if n.dtype.kind not in "iub":
        raise TypeError(f"ldexp: the exponent must be an integer tensor, not {n.dtype.name} (NumPy's ufunc 'ldexp' "
                        "has no float exponent)")
    wide = x.dtype == np.float64
    return _core.astype(_scale(_core.astype(x, "float64"), _core.astype(n, "int64"), wide), x.dtype.name)


def frexp(x):
    """(mantissa, exponent): x = mantissa * 2**exponent with |mantissa| in
    [0.5, 1), exponent int32; (x, 0) for 0, infinities and NaN. Exact."""
    x = _float(x)
    m, e = _frexp64(_core.astype(x, "float64"))
    return _core.astype(m, x.dtype.name), _core.astype(e, "int32")


def modf(x):
    """(fractional part, integral part), both with x's sign (-0.0 too);
    modf(+-inf) is (+-0.0, +-inf)."""
    x = _float(x)
    whole = trunc(x)
    frac = _core.where(_core.isinf(x), 0.0, x - whole)
    return copysign(frac, x), whole


def divmod(x1, x2):
    """(x1 // x2, x1 % x2), NumPy's divmod: the quotient is braze's
    floor_divide (int64 refused, as ``//`` refuses it), the remainder its
    remainder."""
    a, b = _pair(x1, x2)
    return floor_divide(a, b), _core.remainder(a, b)


def _integer_pair(x1, x2, op):
    a, b = _pair(x1, x2)
    dtype = _core.add(a, b).dtype if a.dtype != np.bool_ or b.dtype != np.bool_ else np.dtype("bool")
    if dtype.kind not in "iu":
        raise TypeError(f"{op}: only integer inputs are supported, not {a.dtype.name} and {b.dtype.name} "
                        f"(NumPy's ufunc '{op}' has no loop for them)")
    return _core.astype(a, dtype.name), _core.astype(b, dtype.name), dtype


def _gcd(a, b, dtype):
    a, b = _core.abs(a), _core.abs(b)
    for _ in range(dtype.itemsize * 8 + 1):
        # Least absolute remainders: min(r, b - r) <= b / 2, so b reaches 0
        # within the type's bit count; then the steps keep (a, 0).
        d = _core.maximum(b, 1)  # b == 0: a % 1 is 0, so b stays 0
        r = _core.remainder(a, d)
        a, b = _core.where(b == 0, a, b), _core.minimum(r, d - r)
    return a


def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2| (integers); gcd(0, 0) is 0."""
    a, b, dtype = _integer_pair(x1, x2, "gcd")
    return _gcd(a, b, dtype)


def _exact_quotient(a, d, dtype):
    """a / d for integers where d divides a: from float64, corrected once
    (int64's quotients pass 2^53)."""
    q = _core.astype(_core.round(_core.astype(a, "float64") / _core.astype(d, "float64")), dtype.name)
    if dtype.itemsize == 8:
        r = a - q * d
        q = q + _core.astype(_core.round(_core.astype(r, "float64") / _core.astype(d, "float64")), dtype.name)
        q = _core.where(d == 1, a, q)  # a past 2^63 - 2^10 would round out of range
    return q


def lcm(x1, x2):
    """The least common multiple |x1| / gcd * |x2| (integers; it wraps past
    the type's range as NumPy's does); lcm(x, 0) is 0."""
    a, b, dtype = _integer_pair(x1, x2, "lcm")
    a, b = _core.abs(a), _core.abs(b)
    g = _gcd(a, b, dtype)
    live = g != 0
    return _core.where(live, _exact_quotient(a, _core.where(live, g, 1), dtype) * b, 0)


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (NumPy's formula)."""
    x = _float(x)
    y = x * math.pi
    return _core.where(x == 0, 1.0, _core.sin(y) / y)


def nextafter(x1, x2):
    """The next representable value after x1 towards x2, exact (a power of
    two, the spacing at x1, added or subtracted)."""
    a, b = _float_pair(x1, x2)
    dtype = _core.add(a, b).dtype
    a, b = _core.astype(a, dtype.name), _core.astype(b, dtype.name)
    digits, emin = _DIGITS[dtype.name]
    m, e = _frexp64(_core.astype(a, "float64"))
    up = _pow2(_core.maximum(e - digits, emin - digits))  # the spacing above |a|
    halves = _core.logical_and(_core.abs(m) == 0.5, e > emin)  # below a power of two (a normal one) it halves
    down = _core.where(halves, up * 0.5, up)
    rising = b > a
    away = rising == (a > 0)
    step = _core.astype(_core.where(away, up, down), dtype.name)
    r = a + _core.where(rising, step, _core.negative(step))
    tiny = 2.0 ** (emin - digits)  # (0-d constants of the dtype: a Python float beside a Python float is float32)
    r = _core.where(a == 0, _core.where(rising, _c(tiny, dtype, a.device), _c(-tiny, dtype, a.device)), r)
    big = float(_bz().finfo(dtype).max)
    r = _core.where(_core.isinf(a), _core.where(a > 0, _c(big, dtype, a.device), _c(-big, dtype, a.device)), r)
    r = _core.where(a == b, b, r)
    return _core.where(_core.logical_or(_core.isnan(a), _core.isnan(b)), math.nan, r)


def spacing(x):
    """The distance from x to the next value away from zero (negative for
    negative x); the smallest subnormal at +-0, NaN at infinities."""
    x = _float(x)
    digits, emin = _DIGITS[x.dtype.name]
    toward = _core.where(x < 0, -math.inf, math.inf)
    r = nextafter(x, _core.astype(toward, x.dtype.name)) - x
    return _core.where(x == 0, _c(2.0 ** (emin - digits), x.dtype, x.device), r)


# --- order statistics ------------------------------------------------------------------------------------


def _reduced(a, axis, op):
    """a with the reduced axes moved last and merged: (x, n, kept, rest)."""
    a = _t(a)
    if axis is None:
        axes = list(range(a.ndim))
    else:
        given = list(axis) if isinstance(axis, (tuple, list)) else [axis]
        axes = [_axis(ax, a.ndim, op) for ax in given]
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


def _host_weights(w, name, count):
    w = np.asarray(w.numpy() if isinstance(w, _core.Tensor) else w, dtype=np.float64)
    if name == "fweights" and not np.all(w == np.around(w)):
        raise TypeError("fweights must be integer")
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != count:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if np.any(w < 0):
        raise ValueError(f"{name} cannot be negative")
    return w


def _rows(m, rowvar, dtype, is_y):
    """m (or y) as NumPy's cov reads it: 2-d, variables in rows."""
    x = _t(m)
    if x.ndim > 2:
        raise ValueError(f"{'y' if is_y else 'm'} has more than 2 dimensions")
    vector = x.ndim == 1
    x = _core.reshape(_core.astype(x, dtype.name), [1, -1]) if x.ndim < 2 else _core.astype(x, dtype.name)
    # NumPy's tests: m by its rank, y by its first axis after ndmin=2
    if not rowvar and (x.shape[0] != 1 if is_y else not vector):
        x = _core.permute_dims(x, [1, 0])
    return x


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """NumPy's covariance matrix (rows are variables unless rowvar=False),
    with ddof, bias, fweights and aweights; one matmul. The dtype is m's
    float type (float32 for integers; NumPy: float64 unless dtype=).
    Weights are checked on the host as NumPy does (a lazy weight tensor is
    realized); y is joined to m with concatenate, which realizes."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    bz = _bz()
    dt = bz._as_dtype(dtype) if dtype is not None else _median_dtype(_t(m))
    if y is not None and dtype is None:
        dt = _promote(dt, _median_dtype(_t(y)))
    X = _rows(m, rowvar, dt, False)
    if X.shape[0] == 0:
        return _core.full([0, 0], 0, dt.name, X.device)
    if y is not None:
        X = bz.concatenate([X, _rows(y, rowvar, dt, True)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    nobs = X.shape[1]
    w = None
    if fweights is not None:
        w = _host_weights(fweights, "fweights", nobs)
    if aweights is not None:
        aw = _host_weights(aweights, "aweights", nobs)
        w = aw if w is None else w * aw
    if w is None:
        avg = _core.mean(X, [1], True)
        fact = nobs - ddof
    else:
        w_sum = float(w.sum())
        avg = _core.sum(X * bz.asarray(w.astype(dt), device=X.device), [1], True) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * float(np.sum(w * aw)) / w_sum
    if fact <= 0:
        fact = 0.0  # NumPy warns "Degrees of freedom <= 0" and divides by 0 as well
    X = X - avg
    XT = _core.permute_dims(X if w is None else X * bz.asarray(w.astype(dt), device=X.device), [1, 0])
    c = _core.matmul(X, XT)
    c = c * (1.0 / fact) if fact else c / 0.0
    squeezed = [d for d in c.shape if d != 1]
    return _core.reshape(c, squeezed)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients: cov scaled by the standard
    deviations, clipped to [-1, 1] (NaN stays NaN)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    sd = _core.sqrt(diagonal(c))
    c = c / _core.reshape(sd, [-1, 1]) / _core.reshape(sd, [1, -1])
    return _core.where(c > 1, 1.0, _core.where(c < -1, -1.0, c))


# --- creation and index helpers --------------------------------------------------------------------------


def _out_float(dtype):
    bz = _bz()
    return bz.float32 if dtype is None else bz._as_dtype(dtype)


def _scalar_only(op, *values):
    if any(np.ndim(v) for v in values):
        raise TypeError(f"{op}: only scalar start and stop are supported")


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop), computed in float64; the default dtype
    is braze's float32 (NumPy: float64)."""
    _scalar_only("logspace", start, stop, base)
    bz = _bz()
    y = bz.linspace(float(start), float(stop), num, endpoint, dtype="float64")
    return _core.astype(_core.power(_c(float(base), "float64", None), y), _out_float(dtype).name)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """A geometric sequence from start to stop (NumPy's: through logspace,
    the ends exactly start and stop, negative ends allowed), computed in
    float64; the default dtype is braze's float32 (NumPy: float64)."""
    _scalar_only("geomspace", start, stop)
    start, stop = float(start), float(stop)
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    bz = _bz()
    sign = math.copysign(1.0, start)
    lo, hi = start / sign, stop / sign
    y = bz.linspace(float(np.log10(lo)), float(np.log10(hi)), num, endpoint, dtype="float64")
    r = _core.power(_c(10.0, "float64", None), y)
    i = _core._arange(0, num, 1, "int64", None)
    r = _core.where(i == 0, lo, r)
    if endpoint and num > 1:
        r = _core.where(i == num - 1, hi, r)
    return _core.astype(r * sign, _out_float(dtype).name)


def _stacked(grids, n):
    """The n grids (each broadcasting to one shape) as one [n, ...] tensor:
    a select on the leading index, so it stays one lazy kernel."""
    lead = _core.reshape(_core._arange(0, n, 1, "int64", None), [n] + [1] * (grids[0].ndim))
    r = grids[-1]
    for i in range(n - 2, -1, -1):
        r = _core.where(lead == i, grids[i], r)
    shape = [n] + list(np.broadcast_shapes(*[tuple(g.shape) for g in grids]))
    return _core.broadcast_to(r, shape)


def _axis_grid(values, k, nd):
    return _core.reshape(values, [values.shape[0] if d == k else 1 for d in range(nd)])


def indices(dimensions, dtype=int, sparse=False):
    """NumPy's indices: the index grids of a shape, lazily."""
    bz = _bz()
    dims = [operator.index(d) for d in dimensions]
    name = bz._dtype_name(dtype)
    nd = len(dims)
    grids = [_axis_grid(_core._arange(0, d, 1, name, None), k, nd) for k, d in enumerate(dims)]
    if sparse:
        return tuple(grids)
    if nd == 0:
        return _core.full([0], 0, name, None)
    return _stacked(grids, nd)


class _GridMaker:
    """NumPy's mgrid (dense) and ogrid (sparse): ``bz.mgrid[0:5, 0:3]``; a
    complex step (``5j``) is a number of points, ends included. Integers
    give int64, anything else braze's float32 (NumPy: float64)."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        bz = _bz()
        if isinstance(key, slice):
            start = 0 if key.start is None else key.start
            if isinstance(key.step, complex):
                count = int(abs(key.step))
                step = (key.stop - start) / float(count - 1) if count != 1 else 1
                return _core.astype(_core._arange(0, count, 1, "float64", None) * step + start, "float32")
            return bz.arange(start, key.stop, 1 if key.step is None else key.step)
        key = tuple(key)
        sizes, steps, starts, floats = [], [], [], False
        for k in key:
            if not isinstance(k, slice):
                raise TypeError(f"{'ogrid' if self.sparse else 'mgrid'}: takes slices, not {type(k).__name__}")
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if isinstance(step, complex):
                count = int(abs(step))
                floats = True
                step = (k.stop - start) / float(count - 1) if count != 1 else 1
            else:
                count = int(math.ceil((k.stop - start) / step))
                floats = floats or any(isinstance(v, float) for v in (start, k.stop, step))
            sizes.append(builtins.max(count, 0))
            steps.append(step)
            starts.append(start)
        work = "float64" if floats else "int64"
        nd = len(key)
        grids = [_axis_grid(_core._arange(0, size, 1, work, None) * step + start, i, nd)
                 for i, (size, step, start) in enumerate(zip(sizes, steps, starts))]
        grids = [_core.astype(g, "float32" if floats else "int64") for g in grids]
        if self.sparse:
            return tuple(grids)
        return _stacked(grids, nd)


mgrid = _GridMaker(sparse=False)
ogrid = _GridMaker(sparse=True)


def ix_(*args):
    """Open index grids for x[ix_(rows, cols)]; a boolean mask is its
    nonzero() (which realizes)."""
    bz = _bz()
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if not isinstance(new, _core.Tensor):
            arr = np.asarray(new)
            new = bz.asarray(arr.astype(np.int64) if arr.size == 0 else arr)
        if new.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if new.dtype == np.bool_:
            new = bz.nonzero(new)[0]
        out.append(_axis_grid(new, k, nd))
    return tuple(out)


def diag(v, k=0):
    """A 1-D v as the 2-D matrix with v on its k-th diagonal (a lazy select
    over the grid); a 2-D v's k-th diagonal (a view)."""
    v = _t(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    size = v.shape[0] + abs(k)
    zero = False if v.dtype == np.bool_ else 0
    if v.shape[0] == 0:
        return _core.full([size, size], zero, v.dtype.name, v.device)
    # v repeated to the matrix's size (a lazy view of a broadcast): entry i
    # of row i (k >= 0) or of column i (k < 0) is v[i] where the diagonal is.
    long = tile(v, -(-size // v.shape[0]))[:size]
    cols = _core.reshape(_core._arange(0, size, 1, "int64", v.device), [1, size])
    rows = _core.reshape(_core._arange(0, size, 1, "int64", v.device), [size, 1])
    source = _core.reshape(long, [size, 1] if k >= 0 else [1, size])
    return _core.where(cols - rows == k, source, zero)


def diagflat(v, k=0):
    return diag(_core.reshape(_t(v), [-1]), k)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix: powers by binary exponentiation (a few
    multiplies and selects, exact for integers, which give int64). Floats
    keep their type (NumPy: float64)."""
    x = _t(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else operator.index(N)
    dtype = x.dtype if _is_float(x.dtype) else np.dtype("int64")
    base = _core.reshape(_core.astype(x, dtype.name), [-1, 1])
    e = _core._arange(0, n, 1, "int64", x.device)
    e = _core.reshape(e if increasing else (n - 1) - e, [1, n])
    r = _core.broadcast_to(_c(1, dtype, x.device), [x.shape[0], n])
    for b in range(builtins.max(n - 1, 0).bit_length()):
        bit = _core.bitwise_and(_core.bitwise_right_shift(e, b), 1) == 1
        r = _core.where(bit, r * base, r)
        base = base * base
    return _core.astype(r, dtype.name)


def polyval(p, x):
    """The polynomial with coefficients p (highest power first) at x:
    Horner's loop, NumPy's (p's length is read, its values stay lazy)."""
    p, x = _t(p), _t(x)
    y = _core.full(list(x.shape), 0, x.dtype.name, x.device)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral by the trapezoidal rule along axis (sample points x, or
    spacing dx). Integers give float32 (NumPy: float64)."""
    y = _t(y)
    ax = _axis(axis, y.ndim, "trapezoid")
    if x is None:
        d = dx
    else:
        x = _t(x)
        if x.ndim == 1:
            d = _core.reshape(x[1:] - x[:-1], [x.shape[0] - 1 if i == ax else 1 for i in range(y.ndim)])
        else:
            lead = (slice(None),) * (ax % x.ndim)
            d = x[(*lead, slice(1, None))] - x[(*lead, slice(None, -1))]
    lead = (slice(None),) * ax
    mid = y[(*lead, slice(1, None))] + y[(*lead, slice(None, -1))]
    return _core.sum(d * mid / 2.0, [ax], False)


def append(arr, values, axis=None):
    """NumPy's append: a concatenation (which realizes, Note [Concatenation realizes])."""
    bz = _bz()
    a, v = _t(arr), _t(values)
    if axis is None:
        a, v, axis = _core.reshape(a, [-1]), _core.reshape(v, [-1]), 0
    return bz.concatenate([a, v], axis=axis)


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, else default: a chain of
    where (lazy); dtypes promote as where's (a Python default is weak)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [_t(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    weak = (builtins.bool, int, float)
    choices = [c if isinstance(c, weak) and not isinstance(c, np.generic) else _t(c) for c in choicelist]
    result = default if isinstance(default, weak) and not isinstance(default, np.generic) else _t(default)
    for c, choice in zip(reversed(conds), reversed(choices)):
        result = _core.where(c, choice, result)
    if not isinstance(result, _core.Tensor):
        result = _t(result)
    shape = np.broadcast_shapes(*[tuple(c.shape) for c in conds],
                                *[tuple(c.shape) for c in choices if isinstance(c, _core.Tensor)])
    return result if tuple(result.shape) == shape else _core.broadcast_to(result, list(shape))


def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's piecewise, lazily: each function runs on all of x and where
    selects its values (later conditions win, values cast to x's dtype);
    one more function than conditions is the "otherwise". Unlike NumPy's,
    a function sees the whole x, not x[cond]: it must be element-wise."""
    x = _t(x)
    single = np.isscalar(condlist) or isinstance(condlist, builtins.bool) or (
        np.ndim(condlist) <= 1 if isinstance(condlist, (_core.Tensor, np.ndarray)) else
        not isinstance(condlist[0], (list, np.ndarray, _core.Tensor))) and x.ndim != 0
    conds = [condlist] if single else list(condlist)
    conds = [_core.astype(c if isinstance(c, _core.Tensor) else _bz().asarray(c, device=x.device), "bool")
             for c in conds]
    n, n2 = len(conds), len(funclist)
    if n == n2 - 1:
        anyc = conds[0]
        for c in conds[1:]:
            anyc = _core.logical_or(anyc, c)
        conds.append(_core.logical_not(anyc))
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = _core.full(list(x.shape), 0, x.dtype.name, x.device)
    for c, f in zip(conds, funclist):
        v = f(x, *args, **kw) if callable(f) else f
        v = v if isinstance(v, _core.Tensor) else _bz().asarray(v, device=x.device)
        y = _core.where(c, _core.astype(v, x.dtype.name), y)
    return y


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional linear interpolation, NumPy's: each x's interval
    from ``bz.searchsorted`` and its ends from ``bz.take`` (both realize:
    NumPy searches), the interpolation lazy, in float64. The result is the
    inputs' float type (NumPy: float64). period= sorts and joins xp (realizes)."""
    bz = _bz()
    x, xp, fp = _t(x), _t(xp), _t(fp)
    dtype = _promote(_median_dtype(x), _median_dtype(xp), _median_dtype(fp))
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("Data points must be 1-D sequences")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    xs, xq, fq = (_core.astype(t, "float64") for t in (x, xp, fp))
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(float(period))
        left = right = None
        xs, xq = _core.remainder(xs, period), _core.remainder(xq, period)
        order = bz.argsort(xq)
        xq, fq = bz.take(xq, order), bz.take(fq, order)
        xq = bz.concatenate([xq[-1:] - period, xq, xq[0:1] + period])
        fq = bz.concatenate([fq[-1:], fq, fq[0:1]])
    m = xq.shape[0]
    lval = fq[0] if left is None else _core.astype(_t(left), "float64")
    rval = fq[m - 1] if right is None else _core.astype(_t(right), "float64")
    if m == 1:
        r = _core.where(xs < xq[0], lval, _core.where(xs > xq[0], rval, fq[0]))
    else:
        bz.realize(xs, xq, fq)
        j = bz.searchsorted(xq, xs, side="right") - 1
        jc = _core.minimum(_core.maximum(j, 0), m - 2)
        x0, x1 = bz.take(xq, jc), bz.take(xq, jc + 1)
        f0, f1 = bz.take(fq, jc), bz.take(fq, jc + 1)
        slope = (f1 - f0) / (x1 - x0)
        r = slope * (xs - x0) + f0
        r = _core.where(_core.isnan(r), slope * (xs - x1) + f1, r)  # NaN one way: the other
        r = _core.where(_core.logical_and(_core.isnan(r), f0 == f1), f0, r)
        r = _core.where(xs == x0, f0, r)
        r = _core.where(j == m - 1, fq[m - 1], r)
        r = _core.where(j < 0, lval, _core.where(xs > xq[m - 1], rval, r))
        r = _core.where(_core.isnan(xs), xs, r)  # (one sample point: NumPy gives its fp for a NaN x)
    return _core.astype(r, dtype.name)


def digitize(x, bins, right=False):
    """The bin index of each x (NumPy's digitize): ``bz.searchsorted``,
    which realizes; the bins' monotonicity is checked on the host."""
    bz = _bz()
    b = _t(bins)
    if b.ndim != 1:
        raise ValueError("bins must be 1d" if b.ndim else "object of too small depth for desired array")
    d = np.diff(b.numpy().astype(np.float64))
    if np.all(d >= 0):
        mono = 1
    elif np.all(d <= 0):
        mono = -1
    else:
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    x = _t(x)
    if mono == -1:
        return b.shape[0] - bz.searchsorted(b[::-1], x, side=side)
    return bz.searchsorted(b, x, side=side)


def _host_values(op, *ts):
    from ._gather import _host, _realized
    ts = [t for t in ts]
    _realized(*[t for t in ts if isinstance(t, _core.Tensor)])
    return [_host(t, op) if isinstance(t, _core.Tensor) else t for t in ts]


def bincount(x, weights=None, minlength=0):
    """NumPy's bincount on the realized values: its length is in the data
    (max(x) + 1), so it realizes x (and weights), and NumPy counts."""
    from ._gather import _as_tensor
    xs, ws = _host_values("bincount", _t(x), None if weights is None else _t(weights))
    return _as_tensor(np.bincount(xs, weights=ws, minlength=minlength))


def histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's histogram on the realized values (counting is a scatter,
    which braze has no op for): realizes a (and bins, weights), returns
    (hist, bin_edges) as tensors with NumPy's dtypes."""
    from ._gather import _as_tensor
    av, bv, wv = _host_values("histogram", _t(a), bins if not isinstance(bins, (list, tuple)) else np.asarray(bins),
                              None if weights is None else _t(weights))
    hist, edges = np.histogram(av, bins=bv, range=range, density=density, weights=wv)
    return _as_tensor(hist), _as_tensor(edges)


def array_equiv(a1, a2):
    """True when the shapes broadcast together and all elements are equal."""
    try:
        a, b = _t(a1), _t(a2)
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except Exception:
        return False
    return builtins.bool(_bz().all(a == b))


def iscomplexobj(x):
    """False for braze tensors (braze has no complex dtype); NumPy's answer
    for anything else."""
    return False if isinstance(x, _core.Tensor) else builtins.bool(np.iscomplexobj(x))


def isrealobj(x):
    return not iscomplexobj(x)


def _complex_host(x):
    return not isinstance(x, _core.Tensor) and np.iscomplexobj(x)


def isreal(x):
    """All True for a braze tensor (no complex dtype), lazily."""
    if _complex_host(x):
        return _t(np.isreal(x))
    x = _t(x)
    return _core.full(list(x.shape), True, "bool", x.device)


def iscomplex(x):
    """All False for a braze tensor (no complex dtype), lazily."""
    if _complex_host(x):
        return _t(np.iscomplex(x))
    x = _t(x)
    return _core.full(list(x.shape), False, "bool", x.device)


def _nanarg(a, axis, out, keepdims, op, fill, arg):
    bz = _bz()
    a = _t(a)
    if not _is_float(a.dtype):
        return write_out(getattr(bz, arg)(a, axis=axis, keepdims=keepdims), out, op)
    nan = _core.isnan(a)
    r = getattr(bz, arg)(_core.where(nan, fill, a), axis=axis, keepdims=keepdims)
    empty = _core.sum(_core.astype(_core.logical_not(nan), "int64"), axis, False) == 0
    bad = _core.sum(_core.astype(empty, "int64"), None, False) > 0
    bz.realize(r, bad)  # NumPy raises for an all-NaN slice: the values decide
    if bool(bad):
        raise ValueError("All-NaN slice encountered")
    return write_out(r, out, op)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """argmax ignoring NaNs. Realizes: NumPy's ValueError for an all-NaN
    slice needs the values (the check and the result are one program)."""
    return _nanarg(a, axis, out, keepdims, "nanargmax", -math.inf, "argmax")


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """argmin ignoring NaNs; realizes (see nanargmax)."""
    return _nanarg(a, axis, out, keepdims, "nanargmin", math.inf, "argmin")


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["sinc", "median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile", "cov",
             "corrcoef", "logspace", "geomspace", "ix_", "diag", "diagflat", "vander", "polyval", "trapezoid",
             "append", "select", "piecewise", "interp", "digitize", "bincount", "histogram", "array_equiv",
             "iscomplexobj", "isrealobj", "isreal", "iscomplex", "nanargmax", "nanargmin"]
# NumPy ufuncs braze builds here (its __array_ufunc__); frexp, modf and divmod return two tensors.
UFUNCS = ["rint", "cbrt", "fabs", "ldexp", "frexp", "modf", "divmod", "gcd", "lcm", "nextafter", "spacing"]

__all__ = FUNCTIONS + UFUNCS + ["indices", "mgrid", "ogrid", "amax", "amin"]
