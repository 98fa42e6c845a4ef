"""NumPy's remaining element-wise math, built from braze's ops: the
ufuncs rint, fabs, cbrt, ldexp, frexp, modf, divmod, gcd, lcm, nextafter
and spacing (frexp, modf and divmod return two tensors), and sinc. As in
python/braze/_numpy_functions.py, each records ordinary lazy ops, so it
fuses with what surrounds it into one kernel; none realizes. Integers give
braze's float32 where NumPy computes them in float64 (rint, cbrt, ...), as
its mean does (the ToFloat rule, see _numpy_functions._float); Python lists
are read as ``bz.asarray`` reads them (float32, int64).

Integer-exact parts stay exact: powers of two are built from their bits
(not exp2, whose integer powers are not exact on every backend), so
ldexp, frexp, nextafter and spacing are exact; gcd runs Euclid's
algorithm with least absolute remainders for a fixed number of steps (the
type's bit count: each step at least halves the remainder), lcm divides
exactly.
"""

import math

import numpy as np

from . import _core
from ._numpy_functions import _bz, _float, _t, copysign, floor_divide, trunc


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
    floor_divide, the remainder its remainder."""
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



def fmod(x1, x2):
    """C's remainder, with the sign of the dividend (NumPy's fmod), from
    Python's exact one (Note [Exact remainder]), which has the divisor's.
    Floats: |a| % |b| given a's sign, exact as fmod is (-0.0 kept; NaN for
    b = 0 or infinite a). Integers: where the signs differ, r - b (never
    past the type: |r - b| < |b|); by 0 it is 0, as NumPy (without its
    warning)."""
    a, b = _pair(x1, x2)
    r = _core.remainder(a, b)
    if r.dtype.kind == "f":
        return copysign(_core.remainder(_core.abs(a), _core.abs(b)), a)
    return _core.where(_core.logical_and(r != 0, (r < 0) != (a < 0)), r - b, r)


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["sinc"]
# NumPy ufuncs braze builds here (its __array_ufunc__); frexp, modf and divmod return two tensors.
UFUNCS = ["rint", "cbrt", "fabs", "ldexp", "frexp", "modf", "divmod", "gcd", "lcm", "nextafter", "spacing", "fmod"]

__all__ = FUNCTIONS + UFUNCS
