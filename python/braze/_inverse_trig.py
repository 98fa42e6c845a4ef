"""NumPy's inverse trigonometric functions, arctan, arctan2, arcsin and
arccos (and the array API's atan, atan2, asin, acos), built from braze's
lazy element-wise ops.

braze has no atan op. Written as a composite of comparisons, selects and
arithmetic, each function fuses into the one generated kernel that computes
whatever surrounds it, on every backend, with no new code generation.

The core is Cephes' arctangent: |t| is reduced to at most tan(pi/8)
(float32: atanf's degree-4 polynomial in t^2) or 0.66 (float64: atan's
rational P(t^2)/Q(t^2)), and atan = k pi/4 + atan(t). Two things keep it
within 2 ulp, which Cephes' atanf as published misses in float32 (2.2 to
2.3 ulp measured): the reduced argument is corrected for the rounding of its
numerator and denominator, and k pi/4, held as two parts (Cephes' MOREBITS,
generalized), is added to t exactly, so that the result rounds once at its
own scale. arctan2 reduces |y|/|x| the same way without forming the
quotient first; the signs of x and y, signed zeros included, then give
C99's special values. arcsin and arccos are arctan2 of (x, sqrt(1 - x^2))
and its swap. float16 and bfloat16 compute in float32 and round once;
integers and bools give float32 (braze's ToFloat rule, as sin).

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
_T3P8 = 2.414213562373095  # tan(3 pi/8)


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
    """Per compute dtype: where the middle reduction starts, the polynomial,
    pi/4 in two parts, the smallest subnormal (tiny), the magnitude past
    which |x| + |y| could overflow (huge) and one below which c |x| could
    round as a subnormal (small)."""

    def __init__(self, mid, poly, hi_bits, tiny, huge, small):
        self.mid, self.poly, self.tiny, self.huge, self.small = mid, poly, tiny, huge, small
        self.pio4_hi, self.pio4_lo = _split(_PI / 4, hi_bits)


_CEPHES = {
    _F32: _Cephes(math.tan(math.pi / 8), _atanf_poly, 21, 2.0 ** -149, 2.0 ** 125, 2.0 ** -100),
    _F64: _Cephes(0.66, _atan_poly, 50, 2.0 ** -1074, 2.0 ** 1021, 2.0 ** -900),
}


def _two_sum_error(a, b, s):
    """The rounding error of s = a + b, exactly (Knuth's TwoSum)."""
    bv = s - a
    return (a - (s - bv)) + (b - bv)


def _atan_parts(n, d, dt):
    """atan(n / d) for n, d >= 0 (d may be inf; not both) as k pi/4 + t + w,
    returned as (k, t, w): k in {0, 1, 2} counts Cephes' reduction, t is the
    reduced argument and t + w its arctangent, left unrounded. n/d itself is
    never formed: (n - d)/(n + d) and -d/n are exact rewrites of
    (r - 1)/(r + 1) and -1/r for r = n/d, so each branch rounds one
    division."""
    c = _CEPHES[dt]
    big = n > _T3P8 * d
    mid = n > c.mid * d
    diff, total = n - d, n + d
    num = _core.where(big, -d, _core.where(mid, diff, n))
    den = _core.where(big, n, _core.where(mid, total, d))
    t = num / _core.maximum(den, c.tiny)  # n = d = 0: 0/tiny = 0, not NaN; NaN stays NaN
    # In the middle branch n - d and n + d round too (1.5 ulp of t in all,
    # which alone used up float32's 2 ulp); add back their exact errors.
    en, ed = _two_sum_error(n, -d, diff), _two_sum_error(n, d, total)
    t = _core.where(big, t, _core.where(mid, t + (en - t * ed) / total, t))
    k = _core.astype(big, dt.name) + _core.astype(mid, dt.name)  # in dt: k * pio4_lo must not round to float32
    return k, t, c.poly(t, t * t)


def _combine(m, t, w, dt, neg=None):
    """m pi/4 + (t + w), negated where neg. The sum hi + t is split exactly
    (Fast2Sum: |hi| >= pi/4 > |t|, or hi = 0), so only the last addition
    rounds at the result's scale; w, lo and that split's error are far
    below it."""
    c = _CEPHES[dt]
    if neg is not None:
        t, w = _core.where(neg, -t, t), _core.where(neg, -w, w)
    hi = m * c.pio4_hi
    s = hi + t
    return s + (((hi - s) + t) + (m * c.pio4_lo + w))


def _signbit(x):
    # x < 0, -0.0 (1/-0.0 is -inf) or -inf (1/-inf is -0.0): exactly where
    # the smaller of x and 1/x is negative. NaN: False.
    return _core.minimum(x, 1 / x) < 0


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


def _compute(x, dt):
    """x in the dtype the math runs in for result dtype dt: float64 for
    float64, float32 for everything else."""
    cdt = _F64 if dt == _F64 else _F32
    return x if x.dtype == cdt else _core.astype(x, cdt.name)


def _result(r, dt):
    return r if r.dtype == dt else _core.astype(r, dt.name)


def arctan(x):
    x = _tensor(x)
    dt = _to_float(x.dtype)
    x = _compute(x, dt)
    k, t, w = _atan_parts(_core.abs(x), 1.0, x.dtype)
    r = _combine(k, t, w, x.dtype)  # +-inf: k = 2, t = -0: pi/2
    return _result(_core.where(_signbit(x), -r, r), dt)  # r is +0 for +-0: this restores -0


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
    y, x = _compute(y, dt), _compute(x, dt)
    cdt = x.dtype
    ay, ax = _core.abs(y), _core.abs(x)
    # Both scale by a power of 2 (exactly) when the larger is past huge, so
    # that |x| + |y| and tan(3pi/8) |x| stay finite (the smaller loses bits
    # only where its ratio to the larger underflows anyway), or below small,
    # so that the branch tests do not round among subnormals (1 and 2
    # subnormal units took the wrong branch: 79 ulp). Both infinite: the
    # ratio is 1 (C99: atan2(+-inf, +-inf) is +-pi/4 or +-3pi/4), not inf/inf.
    c = _CEPHES[cdt]
    m = _core.maximum(ax, ay)
    up = _core.full([], 1 / c.small, cdt.name, x.device)  # a constant of cdt: 2^900 is no float32
    scale = _core.where(m > c.huge, 0.25, _core.where(m < c.small, up, 1.0))
    both_inf = _core.logical_and(_core.isinf(x), _core.isinf(y))
    ax = _core.where(both_inf, 1.0, ax * scale)
    ay = _core.where(both_inf, 1.0, ay * scale)
    k, t, w = _atan_parts(ay, ax, cdt)
    # atan2(|y|, |x|) = k pi/4 + (t + w); where x < 0 (and x = -0) it is pi
    # minus that, (4 - k) pi/4 - (t + w).
    xneg = _signbit(x)
    r = _combine(_core.where(xneg, 4.0 - k, k), t, w, cdt, xneg)
    return _result(_core.where(_signbit(y), -r, r), dt)


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
