"""NumPy's inverse trigonometric functions, arctan, arctan2, arcsin and
arccos (and the array API's atan, atan2, asin, acos), built from braze's
lazy element-wise ops.

braze has no atan op. Written as a composite of comparisons, selects and
arithmetic, each function fuses into the one generated kernel that computes
whatever surrounds it, on every backend, with no new code generation.

The core is Cephes' arctangent of a ratio r = n/d in [0, 1] (1/|x| past
1; min/max of |x| and |y| for arctan2): past tan(pi/8) (float32, atanf's
degree-4 polynomial in t^2) or 0.66 (float64, atan's rational
P(t^2)/Q(t^2)) it is reduced to t = (r - 1)/(r + 1), and atan(r) = k pi/4
+ atan(t). Two things keep it within 2 ulp, which Cephes' atanf as
published misses in float32 (2.2 to 2.3 ulp measured): t is formed from n
and d with one division and corrected for the rounding of n - d and n + d,
and the multiple of pi/4, held as two parts (Cephes' MOREBITS,
generalized), is added to t exactly, so that the result rounds once at its
own scale. The signs of x and y, signed zeros included, then give C99's
special values. arcsin and arccos are arctan2 of (x, sqrt(1 - x^2)) and its
swap. float16 and bfloat16 compute in float32 and round once; integers and
bools give float32 (braze's ToFloat rule, as sin), computed in float64 and
rounded once where an operand is an int64 or uint32 (_compute).

The float32 math stays in float32 on purpose: one float64 value makes the
CPU kernel wide (jit_cpu/README.md, Note [Wide kernels]), which measured
6 times slower here.
"""

import math
from decimal import Decimal
from fractions import Fraction

import ml_dtypes
import numpy as np

from . import _core

__all__ = ["arctan", "arctan2", "arcsin", "arccos", "atan", "atan2", "asin", "acos"]

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_HALVES = {np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)}
_PI = Fraction(Decimal("3.14159265358979323846264338327950288419716939937510582097494459"))


def _split(c, bits):
    """c as hi + lo, hi with `bits` significant bits, so that 2 hi, 3 hi
    and 4 hi are exact in the dtype: k pi/4 rounds only in its lo part."""
    m, e = math.frexp(float(c))
    hi = math.ldexp(round(math.ldexp(m, bits)), e - bits)
    return hi, float(c - Fraction(hi))


def _atanf_poly(t, z):
    """Cephes atanf for |t| <= tan(pi/8): atan(t) = t + this (z = t^2)."""
    p = ((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1
    return t * z * p


def _atan_poly(t, z):
    """Cephes atan for |t| <= 0.66: atan(t) = t + t z P(z)/Q(z)."""
    p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z
          - 7.500855792314704667340e1) * z - 1.228866684490136173410e2) * z - 6.485021904942025371773e1
    q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z
          + 4.328810604912902668951e2) * z + 4.853903996359136964868e2) * z + 1.945506571482613964425e2
    return t * (z * p / q)


class _Cephes:
    """Per compute dtype: where the reduction starts, the polynomial, pi/4 in
    two parts, the smallest subnormal (tiny), the magnitude past which
    n + d could overflow (huge) and one below which mid d could round as a
    subnormal (small)."""

    def __init__(self, mid, poly, hi_bits, tiny, huge, small):
        self.mid, self.poly, self.tiny, self.huge, self.small = mid, poly, tiny, huge, small
        self.pio4_hi, self.pio4_lo = _split(_PI / 4, hi_bits)


_CEPHES = {
    _F32: _Cephes(math.tan(math.pi / 8), _atanf_poly, 21, 2.0 ** -149, 2.0 ** 125, 2.0 ** -100),
    _F64: _Cephes(0.66, _atan_poly, 50, 2.0 ** -1074, 2.0 ** 1021, 2.0 ** -900),
}


def _atan_parts(n, d, dt):
    """atan(n / d) for 0 <= n <= d, d > 0, as k pi/4 + t + w, returned as
    (k, t, w): k in {0, 1} is Cephes' reduction, t the reduced argument and
    t + w its arctangent, left unrounded. n/d itself is never formed:
    (n - d)/(n + d) is an exact rewrite of (r - 1)/(r + 1) for r = n/d, so
    t rounds one division."""
    c = _CEPHES[dt]
    k = _core.astype(n > c.mid * d, dt.name)  # in dt: k * pio4_lo must not round to float32
    md, nm = k * d, k * n
    num, den = n - md, d + nm  # k = 0: n / d
    # n - d and n + d round (1.5 ulp of t in all, which alone used up
    # float32's 2 ulp): add back their errors, exact by Fast2Sum (d >= n),
    # zero where k = 0. Ordered so that the kernel computes them before t0.
    en, ed = n - (num + md), nm - (den - d)
    t0 = num / den
    t = (en - ed * t0) / den + t0
    return k, t, c.poly(t, t * t)


def _combine(base, k, t, w, dt):
    """(base + k) pi/4 + t + w. The multiple of pi/4 is hi + lo with hi
    exact, and hi + t is split exactly (Fast2Sum: |hi| >= pi/4 > |t|, or
    hi = 0), so only the last addition rounds at the result's scale; w,
    lo and the split's error are far below it."""
    c = _CEPHES[dt]
    m = base + k
    hi = m * c.pio4_hi
    s = hi + t
    return s + (((hi - s) + t) + (m * c.pio4_lo + w))


def _is_float(dt):
    return dt.kind == "f" or dt in _HALVES


def _to_float(dt):
    return dt if _is_float(dt) else _F32


def _promote_float(a, b):
    """braze's PromoteFloat rule (divide's, docs/semantics.md): a float wins
    over an integer or bool, float16 with bfloat16 is float32, the wider
    float wins, two non-floats give float32."""
    if _is_float(a) != _is_float(b):
        return a if _is_float(a) else b
    if not _is_float(a):
        return _F32
    if a == b:
        return a
    return _F32 if {a, b} == _HALVES else (a if a.itemsize >= b.itemsize else b)


def _tensor(x):
    if isinstance(x, _core.Tensor):
        return x
    from . import asarray
    return asarray(x)


def _weak(v):
    # A NumPy scalar is strong, as an array (np.float64 is a float subclass).
    return isinstance(v, (bool, int, float)) and not isinstance(v, np.generic)


# Integers that a CPU kernel holds in 64-bit lanes (jit_cpu/lanes.h, Note
# [Wide kernels]), where float32 values are computed in float64 and rounded
# after every op.
WIDE_INTEGERS = {np.dtype(np.int64), np.dtype(np.uint32)}


def _compute(x, dt, *others):
    """x in the dtype the math runs in for result dtype dt: float64 for
    float64, and where x or one of `others` (the call's other operands) is
    an int64 or uint32, whose kernel is wide anyway: its float32 math,
    rounded after every op, took 6-9 times as long as float64 math
    (arcsin of 1M int64: 18.9 ms, NumPy's float64 arcsin 2.1), and the
    float64 result rounds to float32 once. float32 for everything else."""
    wide = any(o.dtype in WIDE_INTEGERS for o in (x, *others))
    cdt = _F64 if dt == _F64 or wide else _F32
    return x if x.dtype == cdt else _core.astype(x, cdt.name)


def _result(r, dt):
    return r if r.dtype == dt else _core.astype(r, dt.name)


# Generated kernels compute the operands of an op in order, depth first, and
# must fit the values alive at once in the vector registers (11 on AVX2). So
# the results below are written sign * _combine(base, k, t, w): the sign and
# the multiple of pi/4 are computed first, then the reduction, then t, then
# its polynomial, with few values alive across each stretch.


def arctan(x):
    x = _tensor(x)
    dt = _to_float(x.dtype)
    x = _compute(x, dt)
    # Clamped at 2^60, whose arctangent rounds to pi/2 in float32 and
    # float64 alike: d = inf would make k d = 0 inf NaN.
    a = _core.minimum(_core.abs(x), 2.0 ** 60)
    # Past 1, atan(a) = pi/2 - atan(1/a) = -(-2 pi/4 + atan(1/a)). The sign
    # multiplies last, so that +0 becomes -0 for -0.
    swap = a > 1.0
    sign = _core.where(_core.not_equal(swap, _core.signbit(x)), -1.0, 1.0)
    base = _core.where(swap, -2.0, 0.0)
    k, t, w = _atan_parts(_core.minimum(a, 1.0), _core.maximum(a, 1.0), x.dtype)
    return _result(sign * _combine(base, k, t, w, x.dtype), dt)


def arctan2(y, x):
    # A Python scalar is weak, as in every braze op: it takes the other
    # operand's (float) dtype.
    if _weak(y) and not _weak(x):
        x = _tensor(x)
        dt = _to_float(x.dtype)
        y = _tensor(np.asarray(y, dtype=dt))
    elif _weak(x) and not _weak(y):
        y = _tensor(y)
        dt = _to_float(y.dtype)
        x = _tensor(np.asarray(x, dtype=dt))
    else:
        y, x = _tensor(y), _tensor(x)
        dt = _promote_float(y.dtype, x.dtype)
    y, x = _compute(y, dt, x), _compute(x, dt, y)
    cdt = x.dtype
    c = _CEPHES[cdt]
    ay, ax = _core.abs(y), _core.abs(x)
    # atan2(y, x) = sign ((base + k) pi/4 + t + w), atan(n/d) = k pi/4 + t + w
    # for n/d = min/max of |x|, |y|: |y| > |x| gives pi/2 - atan(n/d), x < 0
    # (or -0) pi minus that, y < 0 (or -0) the negation; -0 for y = -0 comes
    # from the sign, as a product.
    swap, xneg = ay > ax, _core.signbit(x)
    sign = _core.where(_core.not_equal(_core.not_equal(swap, xneg), _core.signbit(y)), -1.0, 1.0)
    base = _core.where(swap, _core.where(xneg, 2.0, -2.0), _core.where(xneg, -4.0, 0.0))
    # n/d is scaled by a power of 2 (exactly) where d is past huge, so that
    # n + d stays finite (n loses bits only where n/d underflows anyway), or
    # below small, so that the branch test does not round among subnormals
    # (1 and 2 subnormal units took the wrong branch: 79 ulp). d = 0 (both
    # zero) becomes tiny: 0/tiny = 0. d infinite: n/d is 0, or 1 where n is
    # infinite too (C99: atan2(+-inf, +-inf) is +-pi/4 or +-3pi/4), so that
    # no inf reaches the core (k d, inf - inf).
    n, d = _core.minimum(ax, ay), _core.maximum(_core.maximum(ax, ay), c.tiny)
    up = _core.full([], 1 / c.small, cdt.name, x.device)  # a constant of cdt: 2^900 is no float32
    scale = _core.where(d > c.huge, 0.25, _core.where(d < c.small, up, 1.0))
    d_inf = _core.isinf(d)
    n = _core.where(d_inf, _core.astype(_core.isinf(n), cdt.name), n * scale)
    k, t, w = _atan_parts(n, _core.where(d_inf, 1.0, d * scale), cdt)
    return _result(sign * _combine(base, k, t, w, cdt), dt)


def _sqrt_one_minus_square(x):
    # 1 - x^2 cancels as |x| nears 1, where (1 - x)(1 + x) does not: 1 - x
    # is exact for x in [0.5, 1]. Below 0.5, 1 - x x rounds once at 1's
    # scale rather than three times (1.5 ulp less in arcsin there). |x| > 1
    # (inf too): the square root of a negative, NaN.
    return _core.sqrt(_core.where(_core.abs(x) < 0.5, 1.0 - x * x, (1.0 - x) * (1.0 + x)))


def arcsin(x):
    x = _tensor(x)
    dt = _to_float(x.dtype)
    x = _compute(x, dt)
    return _result(arctan2(x, _sqrt_one_minus_square(x)), dt)


def arccos(x):
    x = _tensor(x)
    dt = _to_float(x.dtype)
    x = _compute(x, dt)
    return _result(arctan2(_sqrt_one_minus_square(x), x), dt)


atan, atan2, asin, acos = arctan, arctan2, arcsin, arccos
