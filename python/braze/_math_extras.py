"""NumPy's element-wise tests, special functions, nan- reductions and
gufuncs that braze builds from its ops: ``isposinf``/``isneginf``,
``real_if_close``, ``i0``, the ufuncs ``bitwise_count`` and ``conjugate``
(braze has no complex dtype: a real tensor is its own conjugate), the nan-
reductions and scans NumPy has beside nansum/nanmean (``nanprod``,
``nanvar``, ``nanstd``, ``nancumsum``, ``nancumprod``), ``unwrap`` and the
gufuncs ``matvec``/``vecmat``.

Lazy: isposinf, isneginf, i0 (the Chebyshev series of cephes, as NumPy's)
and bitwise_count (shifts, masks and adds) are element-wise and fuse into
one kernel (i0 sums its series as one reduction); nanprod, nanvar and
nanstd are selects and reductions; matvec and vecmat are one matmul.
Realizing (python/braze/_gather.py's rule): nancumsum, nancumprod and
unwrap scan with braze's ``cumulative_sum``/``cumulative_prod`` stand-ins,
which realize their operand. Integers give braze's float32 where NumPy
computes in float64 (nanvar, nanstd, i0, unwrap with a float period).
"""

import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _core, _numpy_functions
from ._copyto import write_out
from ._core import Tensor
from ._differences import _along
from ._numpy_functions import _bz, _float, _nan_fill, _t
from ._quantiles import _is_float


# --- tests and element-wise -----------------------------------------------------------------------------


def _not_complex(x, op):
    if not isinstance(x, Tensor) and np.iscomplexobj(x):
        raise TypeError(f"{op}: This operation is not supported for {np.asarray(x).dtype} values because it "
                        "would be ambiguous.")


def _infinite(x, value, out, op):
    _not_complex(x, op)
    x = _t(x)
    if _is_float(x.dtype):
        r = x == value
    else:  # integers and bools are never infinite
        r = _core.full(list(x.shape), False, "bool", x.device)
    return write_out(r, out, op, "same_kind")


def isposinf(x, out=None):
    """True where x is +inf (a lazy compare)."""
    return _infinite(x, math.inf, out, "isposinf")


def isneginf(x, out=None):
    """True where x is -inf (a lazy compare)."""
    return _infinite(x, -math.inf, out, "isneginf")


conjugate = _numpy_functions.conjugate  # braze's own (a copy): np.conjugate reaches it through UFUNCS
degrees, radians = _numpy_functions.rad2deg, _numpy_functions.deg2rad  # NumPy's other names for them


def real_if_close(a, tol=100):
    """A braze tensor is real already: itself, as NumPy returns a real array."""
    if isinstance(a, Tensor):
        return a
    return _t(np.real_if_close(a, tol))


# cephes' Chebyshev coefficients for I0 (numpy/lib/_function_base_impl.py),
# highest order first:
# exp(-x) I0(x) on [0, 8] ...
_I0A = [
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1,
]
# ... and sqrt(x) exp(-x) I0(x) on [8, inf), in 32/x - 2.
_I0B = [
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1,
]


def _series(coefficients, size):
    """cephes' coefficients (highest order first) as the Chebyshev
    series' weights, lowest order first, zero-padded to size, the constant
    term halved: chbevl(2y, c) = sum_k w[k] T_k(y)."""
    w = [0.0] * (size - len(coefficients)) + list(coefficients)
    w = np.array(w[::-1])
    w[0] *= 0.5
    return w


_NEAR, _FAR = _series(_I0A, len(_I0A)), _series(_I0B, len(_I0A))


def i0(x):
    """The modified Bessel function of the first kind, order 0: NumPy's
    cephes series (exp(x) chbevl(x/2 - 2, A) up to 8, exp(x) chbevl(32/x
    - 2, B) / sqrt(x) past it), in x's float type (float32 for integers;
    NumPy: float64). Lazy. The series is summed in closed form, sum_k w_k
    cos(k arccos y), as one reduction over a new axis of its 30 terms:
    Clenshaw's recurrence (NumPy's _chbevl) would make each of the 55
    coefficients a kernel input, past a kernel's limit, and split it into
    many kernels; this is one (float64's arccos: a few)."""
    if not isinstance(x, Tensor) and np.iscomplexobj(x):
        raise TypeError("i0: i0 not supported for complex values")
    x = _core.abs(_float(x))
    dtype = x.dtype.name
    near = x <= 8.0
    y = _core.where(near, x * 0.25 - 1.0, 16.0 / x - 1.0)  # chbevl's argument / 2, in [-1, 1]
    theta = _bz().arccos(_core.minimum(_core.maximum(y, -1.0), 1.0))
    k = _core._arange(0, len(_NEAR), 1, dtype, x.device)
    w = _core.where(_core.expand_dims(near, x.ndim), _bz().asarray(_NEAR.astype(dtype), device=x.device),
                    _bz().asarray(_FAR.astype(dtype), device=x.device))
    s = _core.sum(_core.cos(_core.expand_dims(theta, x.ndim) * k) * w, [x.ndim], False)
    return _core.where(near, _core.exp(x) * s, _core.exp(x) * s / _core.sqrt(x))


def _popcount63(v):
    """Set bits of int64 values in [0, 2^63): SWAR sums of bit pairs, then
    nibbles, then bytes; no step can overflow."""
    v = v - ((v >> 1) & 0x5555555555555555)
    v = (v & 0x3333333333333333) + ((v >> 2) & 0x3333333333333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0F
    v = v + (v >> 8)
    v = v + (v >> 16)
    v = v + (v >> 32)
    return v & 0x7F


def bitwise_count(x):
    """The number of 1 bits in |x| (NumPy's ufunc, uint8): lazy shifts,
    masks and adds in int64."""
    x = _t(x)
    if x.dtype == np.bool_:
        return _core.astype(x, "uint8")
    if x.dtype.kind not in "iu":
        raise TypeError(f"bitwise_count: ufunc 'bitwise_count' not supported for the input types ({x.dtype}), and "
                        "the inputs could not be safely coerced to any supported types according to the casting "
                        "rule ''safe''")
    a = _core.abs(x) if x.dtype.kind == "i" else x  # abs(MIN) wraps to MIN: its one bit is counted below
    if x.dtype.itemsize == 8:
        bits = _popcount63(a & 0x7FFFFFFFFFFFFFFF) + _core.astype(a < 0, "int64")
    else:
        bits = _popcount63(_core.astype(a, "int64") & ((1 << 8 * x.dtype.itemsize) - 1))
    return _core.astype(bits, "uint8")


# --- nan- reductions and scans --------------------------------------------------------------------------


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """The product with NaNs as 1 (lazy: a select and the product)."""
    from ._numpy_protocols import masked_reduction
    bz = _bz()
    x = _nan_fill(a, 1)
    if dtype is not None:
        x = _core.astype(x, bz._dtype_name(dtype))
    if where is not True or initial is not np._NoValue:
        r = masked_reduction(bz, "prod", x, axis, keepdims, where, initial)
    else:
        r = bz.prod(x, axis, keepdims)
    return write_out(r, out, "nanprod")


def _nan_scan(a, axis, dtype, out, fill, scan, op):
    x = _nan_fill(a, fill)
    if axis is None:
        x, axis = _core.reshape(x, [-1]), 0
    return write_out(getattr(_bz(), scan)(x, axis=axis, dtype=dtype), out, op)


def nancumsum(a, axis=None, dtype=None, out=None):
    """The running sum with NaNs as 0 (flat for axis=None). The NaNs are
    replaced lazily; the scan is braze's cumulative_sum, which realizes."""
    return _nan_scan(a, axis, dtype, out, 0, "cumulative_sum", "nancumsum")


def nancumprod(a, axis=None, dtype=None, out=None):
    """The running product with NaNs as 1; realizes as nancumsum."""
    return _nan_scan(a, axis, dtype, out, 1, "cumulative_prod", "nancumprod")


def _nanvar(a, axis, dtype, ddof, keepdims, where, mean, correction, op):
    """NumPy's _nanvar: the squared deviations from the mean of the kept
    values (not NaN, where= True), over their count - ddof; NaN where that
    is <= 0. Lazy selects and sums; float16 computes in float32."""
    bz = _bz()
    if correction is not np._NoValue:
        if ddof != 0:
            raise ValueError(f"{op}: ddof and correction can't be provided simultaneously.")
        ddof = correction
    x = _t(a)
    if dtype is not None:
        x = _core.astype(x, bz._dtype_name(dtype))
    x = _float(x)
    result = x.dtype.name
    if x.dtype.itemsize < 4:
        x = _core.astype(x, "float32")
    keep = _core.logical_not(_core.isnan(x))
    if where is not True:
        keep = _core.logical_and(keep, _core.astype(_t(where), "bool"))
    axis = None if axis is None else normalize_axis_tuple(axis, x.ndim, op)
    ones = _core.astype(keep, x.dtype.name)
    count = _core.sum(_core.broadcast_to(ones, list(x.shape)), axis, True)
    if mean is np._NoValue:
        mean = _core.sum(_core.where(keep, x, 0.0), axis, True) / count
    else:
        mean = _core.astype(_t(mean), x.dtype.name)
    d = _core.where(keep, x - mean, 0.0)
    dof = count - ddof
    if not keepdims:
        dof = _core.reshape(dof, [s for d, s in enumerate(x.shape) if axis is not None and d not in axis])
    v = _core.sum(d * d, axis, keepdims) / dof
    v = _core.where(dof > 0, v, math.nan)
    return _core.astype(v, result) if v.dtype.name != result else v


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=np._NoValue,
           correction=np._NoValue):
    """The variance ignoring NaNs (NaN for a slice with no more than ddof
    values); integers give float32 (NumPy: float64). Lazy."""
    return write_out(_nanvar(a, axis, dtype, ddof, keepdims, where, mean, correction, "nanvar"), out, "nanvar")


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=np._NoValue,
           correction=np._NoValue):
    """The standard deviation ignoring NaNs: sqrt(nanvar). Lazy."""
    v = _nanvar(a, axis, dtype, ddof, keepdims, where, mean, correction, "nanstd")
    return write_out(_core.sqrt(v), out, "nanstd")


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """NumPy's unwrap: jumps between neighbours larger than discont (at
    least period/2) are taken back by multiples of period. The corrections
    are lazy element-wise ops over the differences; their running sum is
    braze's cumulative_sum, which realizes them."""
    bz = _bz()
    p = _t(p)
    axis = normalize_axis_index(operator.index(axis), p.ndim, "unwrap")
    dd = bz.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    integral = dd.dtype.kind in "iu" and isinstance(period, (int, np.integer))
    if integral:
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
        dtype = dd.dtype
    else:
        dd = _float(dd)
        high, ambiguous = period / 2, True
        dtype = dd.dtype
    low = -high
    ddmod = _core.remainder(dd - low, period) + low
    if ambiguous:  # -period/2 for a step up: +period/2, as NumPy
        ddmod = _core.where(_core.logical_and(ddmod == low, dd > 0), high, ddmod)
    correction = _core.where(_core.abs(dd) < discont, 0, ddmod - dd)
    n = p.shape[axis]
    if n <= 1:
        return _core.astype(p, dtype.name)
    fixed = _along(p, axis, 1, n) + bz.cumulative_sum(correction, axis=axis)
    parts = [_core.astype(_along(p, axis, 0, 1), dtype.name), _core.astype(fixed, dtype.name)]
    return bz.concatenate(parts, axis=axis)


# --- gufuncs --------------------------------------------------------------------------------------------


def _gufunc_operands(op, signature, x1, x2, ranks):
    a, b = _t(x1), _t(x2)
    for i, (t, rank) in enumerate(zip((a, b), ranks)):
        if t.ndim < rank:
            raise ValueError(f"{op}: Input operand {i} does not have enough dimensions (has {t.ndim}, gufunc core "
                             f"with signature {signature} requires {rank})")
    return a, b


def matvec(x1, x2):
    """NumPy's matvec: (..., m, n) by (..., n) gives (..., m); one matmul."""
    signature = "(m,n),(n)->(m)"
    a, b = _gufunc_operands("matvec", signature, x1, x2, (2, 1))
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"matvec: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"{signature} (size {b.shape[-1]} is different from {a.shape[-1]})")
    r = _core.matmul(a, _core.reshape(b, list(b.shape) + [1]))
    return _core.reshape(r, list(r.shape[:-1]))


def vecmat(x1, x2):
    """NumPy's vecmat: (..., n) by (..., n, m) gives (..., m) (x1's
    conjugate is x1: braze has no complex dtype); one matmul."""
    signature = "(n),(n,m)->(m)"
    a, b = _gufunc_operands("vecmat", signature, x1, x2, (1, 2))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"vecmat: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"{signature} (size {b.shape[-2]} is different from {a.shape[-1]})")
    r = _core.matmul(_core.reshape(a, list(a.shape[:-1]) + [1, a.shape[-1]]), b)
    return _core.reshape(r, list(r.shape[:-2]) + [r.shape[-1]])


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["isposinf", "isneginf", "nanprod", "nancumsum", "nancumprod", "nanvar", "nanstd", "unwrap",
             "real_if_close", "i0"]
# NumPy ufuncs braze builds here (its __array_ufunc__); conjugate is braze's
# own (python/braze/_numpy_functions.py), listed so np.conjugate reaches it.
UFUNCS = ["bitwise_count", "matvec", "vecmat", "conjugate", "degrees", "radians"]

__all__ = FUNCTIONS + UFUNCS
