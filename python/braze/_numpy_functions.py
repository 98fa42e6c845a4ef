"""NumPy functions that braze builds from its own ops.

Each function here records ordinary lazy ops (element-wise ops, views,
reductions, matmul), so it fuses with what surrounds it exactly as if the
user had written the formula: ``np.clip(x, 0, 6) * 2`` is one kernel. What
needs an op braze does not have (a sort, a scan, a gather) is not here: it
stays a TypeError naming the function (docs/numpy-compat.md).

Numerical care where a textbook formula would lose it: sinh and the
inverse hyperbolics near zero and far out, hypot and logaddexp without
overflow, floor_divide through the exact remainder.
"""

import builtins
import functools
import math
import operator

import ml_dtypes
import numpy as np

from . import _core
from ._inverse_trig import WIDE_INTEGERS

pi = math.pi
e = math.e
euler_gamma = 0.5772156649015329
inf = math.inf
nan = math.nan
newaxis = None


def _bz():
    import braze
    return braze


def _t(x):
    return _bz().asarray(x)


def _float(x):
    """x as the float tensor an element-wise float op of braze gives for it
    (the ToFloat rule: integers and bools become float32)."""
    x = _t(x)
    return x if x.dtype.kind == "f" or x.dtype == _bz().bfloat16 else _core.astype(x, "float32")


def _float_math(f):
    """f, a composite of float ops, for any x: f(_float(x)), but an int64 or
    uint32 x computed in float64 and rounded to float32 once (its kernel is
    wide anyway: _inverse_trig._compute)."""
    @functools.wraps(f)
    def on_any(x):
        x = _t(x)
        if x.dtype in WIDE_INTEGERS:
            return _core.astype(f(_core.astype(x, "float64")), "float32")
        return f(_float(x))
    return on_any


def _pair(x1, x2):
    """Two operands as tensors, a Python number beside a tensor taking the
    dtype braze gives that pair (weak, as in every binary op: float16 + 2.0
    is float16), so that a composite computes in that dtype too."""
    weak = [isinstance(x, (int, float, bool)) and not isinstance(x, np.generic) for x in (x1, x2)]
    if weak[0] == weak[1]:
        return _t(x1), _t(x2)
    t = _t(x2 if weak[0] else x1)
    v = x1 if weak[0] else x2
    w = _bz().full([], v, _core.add(t, v).dtype)
    return (w, t) if weak[0] else (t, w)


def _float_pair(x1, x2):
    a, b = _pair(x1, x2)
    return _float(a), _float(b)


def _negate_where(neg, r):
    return _core.where(neg, _core.negative(r), r)


# --- element-wise ------------------------------------------------------------------------


@_float_math
def sinh(x):
    # Near 0, from expm1 (exp(x) - exp(-x) cancels); beyond, h = exp(|x|/2)
    # so that 0.5 * exp(|x|) = (0.5 h) h does not overflow before sinh does.
    a = _core.abs(x)
    em = _core.expm1(a)
    small = 0.5 * (em + em / (em + 1.0))
    h = _core.exp(a * 0.5)
    big = (0.5 * h) * h - 0.5 / (h * h)
    r = _core.where(a < 1.0, small, big)
    return _core.where(x == 0, x, _negate_where(x < 0, r))  # keeps -0.0 and NaN


@_float_math
def cosh(x):
    h = _core.exp(_core.abs(x) * 0.5)
    return (0.5 * h) * h + 0.5 / (h * h)


def _far(x):
    """Where x * x is near overflowing: past it the inverse hyperbolics are
    log(2x) to within an ulp (float16's range is the short one)."""
    return 128.0 if x.dtype == np.float16 else 2.0 ** 28


@_float_math
def arcsinh(x):
    a = _core.abs(x)
    near = _core.log1p(a + a * a / (1.0 + _core.sqrt(1.0 + a * a)))
    far = _core.log(a) + math.log(2.0)  # a * a would overflow; the rest is below an ulp
    r = _core.where(a > _far(x), far, near)
    return _core.where(x == 0, x, _negate_where(x < 0, r))


@_float_math
def arccosh(x):
    t = x - 1.0
    near = _core.log1p(t + _core.sqrt(t * (x + 1.0)))
    far = _core.log(x) + math.log(2.0)
    r = _core.where(x > _far(x), far, near)
    return _core.where(x < 1.0, math.nan, r)  # (x - 1)(x + 1) is positive again below -1


@_float_math
def arctanh(x):
    return 0.5 * _core.log1p(2.0 * x / (1.0 - x))


def log10(x):
    x = _float(x)
    return _core.log2(x) * math.log10(2.0)


def deg2rad(x):
    return _float(x) * (math.pi / 180.0)


def rad2deg(x):
    return _float(x) * (180.0 / math.pi)


def hypot(x1, x2):
    # Scaled by the larger magnitude, so x*x cannot overflow; an infinity
    # wins over a NaN, as in C99.
    a, b = _float_pair(x1, x2)
    a, b = _core.abs(a), _core.abs(b)
    big, small = _core.maximum(a, b), _core.minimum(a, b)
    r = small / big
    scaled = big * _core.sqrt(1.0 + r * r)
    r0 = _core.where(big == 0, big, scaled)
    return _core.where(_core.logical_or(_core.isinf(a), _core.isinf(b)), math.inf, r0)


def logaddexp(x1, x2):
    a, b = _float_pair(x1, x2)
    m = _core.maximum(a, b)
    r = m + _core.log1p(_core.exp(-_core.abs(a - b)))
    return _core.where(a == b, a + math.log(2.0), r)  # inf + inf: inf, not inf - inf


def logaddexp2(x1, x2):
    a, b = _float_pair(x1, x2)
    m = _core.maximum(a, b)
    r = m + _core.log1p(_core.exp2(-_core.abs(a - b))) * (1.0 / math.log(2.0))
    return _core.where(a == b, a + 1.0, r)


def trunc(x):
    x = _t(x)
    if x.dtype.kind in "iub":
        return x
    return _core.where(x < 0, _core.ceil(x), _core.floor(x))


fix = trunc


def positive(x):
    return _core.copy(_t(x))


def isfinite(x):
    x = _t(x)
    return _core.logical_not(_core.logical_or(_core.isnan(x), _core.isinf(x)))


def copysign(x1, x2):
    a, b = _float_pair(x1, x2)
    a = _core.astype(a, _core.add(a, b).dtype.name)  # the pair's promotion, as every binary op
    return _core.where(_core.signbit(a) == _core.signbit(b), a, _core.negative(a))


def fmax(x1, x2):
    a, b = _pair(x1, x2)
    return _core.where(_core.isnan(b), a, _core.where(_core.isnan(a), b, _core.maximum(a, b)))


def fmin(x1, x2):
    a, b = _pair(x1, x2)
    return _core.where(_core.isnan(b), a, _core.where(_core.isnan(a), b, _core.minimum(a, b)))


def heaviside(x1, x2):
    x, h0 = _float_pair(x1, x2)
    return _core.where(x < 0, 0.0, _core.where(x > 0, 1.0, _core.where(x == 0, h0, x)))


def logical_xor(x1, x2):
    a, b = _pair(x1, x2)
    return _core.not_equal(_core.astype(a, "bool"), _core.astype(b, "bool"))


def floor_divide(x1, x2):
    """NumPy's ``//``. Floats: from the exact remainder (Note [Exact
    remainder]), so (a - a % b) / b is an exact integer quotient; b == 0
    gives a / b. Integers: Note [Floor division of integers]."""
    bz = _bz()
    a, b = _pair(x1, x2)
    remainder = _core.remainder(a, b)  # promotion and its errors, as every binary op
    dtype = remainder.dtype
    if dtype == bz.bool_:
        raise TypeError("floor_divide: not supported for bool")
    if dtype == bz.int64:
        return _floor_divide_int64(_core.astype(a, "int64"), _core.astype(b, "int64"), remainder)
    if dtype.kind in "iu":
        # Note [Floor division of integers]
        # For integers |a| < 2^p, p a float type's significand bits, floor
        # of the rounded quotient is the floored quotient: where a / b
        # falls short of an integer n it falls short by at least 1 / |b|,
        # more than half a unit of n's last place (below |a / b| 2^-p), so
        # it never rounds up to n. 16-bit values divide in float32, 32-bit
        # ones in float64 (int64: _floor_divide_int64). x // 0 is 0, and
        # the least value // -1 wraps to itself in the cast back, as NumPy.
        ft = "float32" if dtype.itemsize <= 2 else "float64"
        af, bf = _core.astype(a, ft), _core.astype(b, ft)
        return _core.astype(_core.where(bf == 0, 0.0, _core.floor(af / bf)), dtype.name)
    q = (a - remainder) / b
    return _core.where(b == 0, a / b, _core.round(q))


def _floor_divide_int64(a, b, r):
    """a // b of int64 a and b, exactly, from r = a % b (Python's remainder,
    exact: an integer division per element). (a - r) / b is the floored
    quotient, an integer; float64 estimates it, integer arithmetic corrects
    the estimate, all element-wise (one kernel):

    - q0 = round((a - r) / b) in float64 (rounded operands: a - r may not
      fit int64, a near its least value) is within |q| x 2^-52 + 1 of the
      quotient q (at most 2^11 off), clipped below 2^63 so that it converts;
    - e = (a - r) - q0 * b is (q - q0) * b, small enough that int64's
      wrapping arithmetic gives it exactly, and e / b, a small integer,
      rounds to itself in float64.

    b == 0 gives 0, and b == -1 gives -a (the least value wraps to itself),
    as NumPy, without its warnings."""
    bs = _core.where((b == 0) | (b == -1), 1, b)  # a divisor that divides cleanly
    bf = _core.astype(bs, "float64")
    q0 = (_core.astype(a, "float64") - _core.astype(r, "float64")) / bf
    q0 = _core.astype(clip(_core.round(q0), -2.0**63, 2.0**63 - 1024), "int64")
    q = q0 + _core.astype(_core.round(_core.astype(a - r - q0 * bs, "float64") / bf), "int64")
    return _core.where(b == 0, 0, _core.where(b == -1, -a, q))


def float_power(x1, x2):
    a, b = _pair(x1, x2)
    return _core.power(_core.astype(a, "float64"), _core.astype(b, "float64"))


def clip(x, /, min=None, max=None):
    """The array API's clip (NumPy's np.clip(a, a_min, a_max) reaches it
    through _numpy_protocols)."""
    lo, hi = min, max
    x = _t(x)
    if lo is not None:
        x = _core.maximum(x, lo)
    if hi is not None:
        x = _core.minimum(x, hi)
    return x


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = _t(x)
    if x.dtype.kind not in "fV" and x.dtype != _bz().bfloat16:
        return x
    info = ml_dtypes.finfo(x.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    x = _core.where(_core.isnan(x), nan, x)
    return _core.where(x == math.inf, hi, _core.where(x == -math.inf, lo, x))


# --- reductions and comparisons ------------------------------------------------------------


def _count(mask, axis, keepdims):
    return _core.sum(_core.astype(mask, "int64"), axis, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    _plain(out, where, "all")
    return _count(_core.logical_not(_core.astype(_t(a), "bool")), axis, keepdims) == 0


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    _plain(out, where, "any")
    return _count(_core.astype(_t(a), "bool"), axis, keepdims) > 0


def count_nonzero(a, axis=None, *, keepdims=False):
    return _count(_core.astype(_t(a), "bool"), axis, keepdims)


def _plain(out, where, op):
    if out is not None or where is not True:
        raise TypeError(f"{op}: out= and where= are not supported")


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _t(a), _t(b)
    close = _core.abs(a - b) <= atol + rtol * _core.abs(b)
    finite = _core.logical_and(isfinite(a), isfinite(b))
    r = _core.where(finite, close, a == b)  # infinities: equal ones only
    if equal_nan:
        r = _core.logical_or(r, _core.logical_and(_core.isnan(a), _core.isnan(b)))
    return r


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    a, b = _t(a1), _t(a2)
    if tuple(a.shape) != tuple(b.shape):
        return False
    same = a == b
    if equal_nan and a.dtype.kind == "f":
        same = _core.logical_or(same, _core.logical_and(_core.isnan(a), _core.isnan(b)))
    return bool(all(same))


def _nan_fill(a, fill):
    a = _t(a)
    return _core.where(_core.isnan(a), fill, a) if a.dtype.kind == "f" or a.dtype == _bz().bfloat16 else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    _plain(out, True, "nansum")
    x = _nan_fill(a, 0)
    return _bz().sum(x, axis, keepdims, dtype=dtype)


def _nan_extreme(a, axis, keepdims, reduce, fill):
    a = _t(a)
    r = reduce(_nan_fill(a, fill), axis, keepdims)
    if a.dtype.kind != "f" and a.dtype != _bz().bfloat16:
        return r
    return _core.where(all(_core.isnan(a), axis=axis, keepdims=keepdims), math.nan, r)  # an all-NaN slice


def nanmax(a, axis=None, out=None, keepdims=False):
    _plain(out, True, "nanmax")
    return _nan_extreme(a, axis, keepdims, _core.max, -math.inf)


def nanmin(a, axis=None, out=None, keepdims=False):
    _plain(out, True, "nanmin")
    return _nan_extreme(a, axis, keepdims, _core.min, math.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    _plain(out, True, "nanmean")
    a = _t(a)
    kept = _count(_core.logical_not(_core.isnan(a)), axis, keepdims)
    return nansum(a, axis, None, None, keepdims) / kept


def ptp(a, axis=None, out=None, keepdims=False):
    _plain(out, True, "ptp")
    a = _t(a)
    return _core.max(a, axis, keepdims) - _core.min(a, axis, keepdims)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    a = _t(a)
    if weights is None:
        avg = _core.mean(a, axis, keepdims)
        total = _bz().full(list(avg.shape), a.size // builtins.max(avg.size, 1), avg.dtype)
    else:
        w = _t(weights)
        if w.shape != a.shape:
            if axis is None or w.ndim != 1:
                raise ValueError(f"average: weights of shape {list(w.shape)} differ from the data's "
                                 f"{list(a.shape)}; give 1-d weights with an axis")
            ax = operator.index(axis) % a.ndim
            w = _core.reshape(w, [w.shape[0] if d == ax else 1 for d in range(a.ndim)])
        total = _core.sum(_core.broadcast_to(w, list(a.shape)), axis, keepdims)
        avg = _core.sum(a * w, axis, keepdims) / total
    return (avg, _core.broadcast_to(total, list(avg.shape))) if returned else avg


# --- creation ------------------------------------------------------------------------------


def empty(shape, dtype=None, order="C", *, device=None, like=None):
    return _bz().zeros(shape, dtype, device)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _bz().zeros_like(_t(prototype), dtype, device, shape=shape)


def _grid(n, m, k):
    """cols - rows of an [n, m] grid, as int64: its diagonal k is where it equals k."""
    return _core.subtract(_core.reshape(_core._arange(0, m, 1, "int64", None), [1, m]),
                          _core.reshape(_core._arange(0, n, 1, "int64", None), [n, 1]))


def eye(N, M=None, k=0, dtype=None, order="C", *, device=None, like=None):
    bz = _bz()
    M = N if M is None else M
    r = _core.astype(_grid(N, M, k) == k, bz._dtype_name(bz.float32 if dtype is None else dtype))
    return r if device is None else r.to(device)


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None, *, like=None):
    bz = _bz()
    M = N if M is None else M
    return _core.astype(_grid(N, M, k) <= k, bz._dtype_name(bz.float32 if dtype is None else dtype))


def tril(m, k=0):
    m = _t(m)
    keep = _grid(m.shape[-2], m.shape[-1], k) <= k
    return _core.where(keep, m, False if m.dtype == _bz().bool_ else 0)


def triu(m, k=0):
    m = _t(m)
    keep = _grid(m.shape[-2], m.shape[-1], k) >= k
    return _core.where(keep, m, False if m.dtype == _bz().bool_ else 0)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """Computed in float64 as NumPy does (start + i * step, the last one
    exactly stop), then cast; the default dtype is braze's float32."""
    bz = _bz()
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    if axis != 0 or np.ndim(start) or np.ndim(stop):
        raise TypeError("linspace: only scalar start and stop along axis 0 are supported")
    start, stop = float(start), float(stop)  # 0-d tensors too: float64, as NumPy's, never integer / integer
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else math.nan
    i = _core._arange(0, num, 1, "float64", None)
    y = i * step + start if div > 0 else i * 0.0 + start
    if endpoint and num > 1:
        y = _core.where(i == num - 1, stop, y)
    out = _core.astype(y, bz._dtype_name(bz.float32 if dtype is None else dtype))
    out = out if device is None else out.to(device)
    return (out, step) if retstep else out


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij'")
    ts = [_core.reshape(_t(x), [-1]) for x in xi]
    n = len(ts)
    shapes = [[1] * n for _ in ts]
    for i, t in enumerate(ts):
        shapes[i][i] = t.shape[0]
    if indexing == "xy" and n > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [_core.reshape(t, s) for t, s in zip(ts, shapes)]
    if sparse:
        return out
    full = list(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    return [_core.broadcast_to(o, full) for o in out]


# --- views and rearrangements --------------------------------------------------------------


def normalized_axis(axis, ndim, op):
    """axis as an index in [0, ndim), or NumPy's AxisError naming op: the
    one check of an axis argument in braze's Python."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{op}: axis {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim


def moveaxis(a, source, destination):
    a = _t(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same number of elements")
    src = [normalized_axis(s, a.ndim, "moveaxis") for s in src]
    dst = [normalized_axis(d, a.ndim, "moveaxis") for d in dst]
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _core.permute_dims(a, order)


def swapaxes(a, axis1, axis2):
    a = _t(a)
    order = list(range(a.ndim))
    i, j = normalized_axis(axis1, a.ndim, "swapaxes"), normalized_axis(axis2, a.ndim, "swapaxes")
    order[i], order[j] = order[j], order[i]
    return _core.permute_dims(a, order)


def ravel(a, order="C"):
    """A view where NumPy's is one (python/braze/_views.py). 'A' and 'K':
    F order where the tensor is a view NumPy would lay out in F order only
    (x.T of a C-order x), else C."""
    if order not in ("C", "F", "K", "A"):
        raise ValueError(f"ravel: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    views = _bz()._views
    a = _t(a)
    if order in ("A", "K"):
        flags = views.layout(a).flags
        order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    return views.reshape(a, [-1], order)


def flip(m, axis=None):
    m = _t(m)
    axes = range(m.ndim) if axis is None else [axis] if isinstance(axis, int) else axis
    axes = {normalized_axis(a, m.ndim, "flip") for a in axes}
    return m[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(m.ndim))]


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """A view: the two axes moved last and flattened, read with step n + 1."""
    a = _t(a)
    i, j = normalized_axis(axis1, a.ndim, "diagonal"), normalized_axis(axis2, a.ndim, "diagonal")
    if i == j:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    rest = [d for d in range(a.ndim) if d not in (i, j)]
    x = _core.permute_dims(a, rest + [i, j])
    n, m = x.shape[-2], x.shape[-1]
    k = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    flat = _core.reshape(x, [*x.shape[:-2], n * m])
    lead = (slice(None),) * len(rest)
    return flat[(*lead, slice(start, start + (k - 1) * (m + 1) + 1 if k else start, m + 1))]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _plain(out, True, "trace")
    d = diagonal(a, offset, axis1, axis2)
    return _bz().sum(d, [-1], dtype=dtype)


def outer(a, b, out=None):
    _plain(out, True, "outer")
    return _core.reshape(_t(a), [-1, 1]) * _core.reshape(_t(b), [1, -1])


def tensordot(a, b, axes=2):
    """Contracted axes moved together, both sides flattened to matrices: one
    matmul (a library call) and a reshape."""
    a, b = _t(a), _t(b)
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={axes} is out of range for ranks {a.ndim} and {b.ndim}")
        ax_a, ax_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        ax_a, ax_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    ax_a = [normalized_axis(x, a.ndim, "tensordot") for x in ax_a]
    ax_b = [normalized_axis(x, b.ndim, "tensordot") for x in ax_b]
    if len(ax_a) != len(ax_b) or builtins.any(a.shape[i] != b.shape[j] for i, j in zip(ax_a, ax_b)):
        raise ValueError(f"tensordot: shape-mismatch for sum (axes {ax_a} of {list(a.shape)} and {ax_b} of "
                         f"{list(b.shape)})")
    free_a = [d for d in range(a.ndim) if d not in ax_a]
    free_b = [d for d in range(b.ndim) if d not in ax_b]
    k = math.prod(a.shape[d] for d in ax_a)
    am = _core.reshape(_core.permute_dims(a, free_a + ax_a), [math.prod(a.shape[d] for d in free_a), k])
    bm = _core.reshape(_core.permute_dims(b, ax_b + free_b), [k, math.prod(b.shape[d] for d in free_b)])
    return _core.reshape(_core.matmul(am, bm), [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


def inner(a, b):
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def vdot(a, b):
    return _core.sum(ravel(a) * ravel(b), None, False)


def diff(a, n=1, axis=-1):
    a = _t(a)
    ax = normalized_axis(axis, a.ndim, "diff")
    for _ in range(operator.index(n)):
        hi = tuple(slice(1, None) if d == ax else slice(None) for d in range(a.ndim))
        lo = tuple(slice(None, -1) if d == ax else slice(None) for d in range(a.ndim))
        a = _core.not_equal(a[hi], a[lo]) if a.dtype == _bz().bool_ else a[hi] - a[lo]
    return a


def repeat(a, repeats, axis=None):
    """An integer count: each element broadcast along a new axis after it and
    the two merged (a lazy copy)."""
    a = _t(a)
    if not isinstance(repeats, (int, np.integer)):
        # A count per element: the result's length is in the values; NumPy
        # computes it (python/braze/_gather.py's rule).
        from ._gather import _as_tensor, _host, _realized
        from ._more_numpy import _numpy
        _realized(a, repeats)
        counts = _host(repeats, "repeat") if isinstance(repeats, _core.Tensor) else np.asarray(repeats)
        return _as_tensor(_numpy("repeat", np.repeat, _host(a, "repeat"), counts, axis=axis))
    if axis is None:
        a, axis = _core.reshape(a, [-1]), 0
    ax = normalized_axis(axis, a.ndim, "repeat")
    wide = _core.expand_dims(a, ax + 1)
    shape = list(a.shape)
    wide = _core.broadcast_to(wide, shape[:ax + 1] + [int(repeats)] + shape[ax + 1:])
    return _core.reshape(wide, shape[:ax] + [shape[ax] * int(repeats)] + shape[ax + 1:])


def tile(A, reps):
    a = _t(A)
    reps = [int(reps)] if isinstance(reps, (int, np.integer)) else [int(r) for r in reps]
    d = builtins.max(a.ndim, len(reps))
    reps = [1] * (d - len(reps)) + reps
    shape = [1] * (d - a.ndim) + list(a.shape)
    x = _core.reshape(a, [v for s in shape for v in (1, s)])  # a unit axis before each
    x = _core.broadcast_to(x, [v for r, s in zip(reps, shape) for v in (r, s)])
    return _core.reshape(x, [r * s for r, s in zip(reps, shape)])


def roll(a, shift, axis=None):
    """Two slices joined: a lazy concatenation (Note [Lazy concatenation])."""
    bz = _bz()
    a = _t(a)
    if axis is None:
        return _core.reshape(roll(_core.reshape(a, [-1]), shift, 0), list(a.shape))
    if not isinstance(axis, int):
        for s, ax in zip([shift] * len(axis) if isinstance(shift, int) else shift, axis):
            a = roll(a, s, ax)
        return a
    ax = normalized_axis(axis, a.ndim, "roll")
    n = a.shape[ax]
    if n == 0:
        return a
    s = operator.index(shift) % n
    if s == 0:
        return a
    lead = (slice(None),) * ax
    return bz.concatenate([a[(*lead, slice(n - s, None))], a[(*lead, slice(0, n - s))]], axis=ax)


# --- dtypes --------------------------------------------------------------------------------


class _Info:
    """finfo/iinfo as the array API has them: Python numbers."""

    def __init__(self, info, dtype, floating):
        self.dtype = np.dtype(dtype)
        self.bits = int(info.bits)
        convert = float if floating else int
        self.max, self.min = convert(info.max), convert(info.min)
        if floating:
            self.eps = float(info.eps)
            self.smallest_normal = float(info.smallest_normal)
            self.resolution = float(info.resolution)

    def __repr__(self):
        return f"{'finfo' if hasattr(self, 'eps') else 'iinfo'}({self.dtype.name}: min={self.min}, max={self.max})"


def finfo(dtype):
    """NumPy's finfo, bfloat16 included (ml_dtypes)."""
    dt = dtype.dtype if isinstance(dtype, _core.Tensor) else np.dtype(dtype)
    return _Info(ml_dtypes.finfo(dt), dt, True)


def iinfo(dtype):
    dt = dtype.dtype if isinstance(dtype, _core.Tensor) else np.dtype(dtype)
    return _Info(np.iinfo(dt), dt, False)


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["nan_to_num", "all", "any", "count_nonzero", "isclose", "allclose", "array_equal", "nansum",
             "nanmax", "nanmin", "nanmean", "ptp", "average", "tril", "triu", "moveaxis", "swapaxes",
             "ravel", "flip", "fliplr", "flipud", "diagonal", "trace", "outer", "tensordot", "inner", "vdot", "diff",
             "repeat", "tile", "roll", "meshgrid", "fix"]
# NumPy ufuncs braze builds here (its __array_ufunc__).
UFUNCS = ["sinh", "cosh", "arcsinh", "arccosh", "arctanh", "log10", "deg2rad", "rad2deg", "hypot",
          "logaddexp", "logaddexp2", "trunc", "positive", "isfinite", "copysign", "fmax", "fmin",
          "heaviside", "logical_xor", "floor_divide", "float_power"]

__all__ = FUNCTIONS + UFUNCS + ["clip", "empty_like",
    "pi", "e", "euler_gamma", "inf", "nan", "newaxis", "empty", "eye", "identity", "tri", "linspace", "finfo",
    "iinfo", "asinh", "acosh", "atanh", "degrees", "radians", "mod", "true_divide", "absolute", "pow", "conj",
    "conjugate"]

asinh, acosh, atanh = arcsinh, arccosh, arctanh
degrees, radians = rad2deg, deg2rad
mod = _core.remainder
true_divide = _core.divide
absolute = _core.abs
pow = _core.power
conj = conjugate = positive
