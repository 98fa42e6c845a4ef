"""NumPy's inverse trigonometric functions, arctan, arctan2, arcsin and
arccos (and the array API's atan, atan2, asin, acos), built from braze's
lazy element-wise ops.

braze has no atan op; written as a composite of comparisons, selects and
arithmetic, each function fuses into the one generated kernel that computes
whatever surrounds it, on every backend, with no new code generation.

The core is Cephes' arctangent: the argument is reduced to |t| <= tan(pi/8)
(float32: atanf's degree-4 polynomial in t^2, about 2 ulp) or |t| <= 0.66
(float64: atan's rational P(t^2)/Q(t^2)), with atan = k pi/4 + atan(t).
arctan2 reduces |y|/|x| the same way without forming the quotient first,
so that one rounded division feeds the polynomial; the quadrant then adds
pi/4 multiples, held in two parts (Cephes' MOREBITS, generalized), and the
signs of x and y, signed zeros included, give C99's special values.
arcsin and arccos are arctan2 of (x, sqrt(1 - x^2)) and its swap; float16
and bfloat16 compute in float32, integers and bools as float32 (braze's
ToFloat rule, as sin).
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
    """c as hi + lo, hi with `bits` significant bits: 3 hi and 4 hi are then
    exact in the dtype, so k pi/4 costs one rounding, in the lo part."""
    m, e = math.frexp(float(c))
    hi = math.ldexp(round(math.ldexp(m, bits)), e - bits)
    return hi, float(c - Fraction(hi))


class _Cephes:
    def __init__(self, mid, poly, hi_bits, tiny, huge):
        self.mid, self.poly, self.tiny, self.huge = mid, poly, tiny, huge
        self.pio4_hi, self.pio4_lo = _split(_PI / 4, hi_bits)


def _atanf_poly(t, z):  # Cephes atanf, |t| <= tan(pi/8): atan(t) = t + this
    p = ((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1
    return t * z * p


def _atan_poly(t, z):  # Cephes atan, |t| <= 0.66: atan(t) = t + t z P(z)/Q(z)
    p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z
          - 7.500855792314704667340e1) * z - 1.228866684490136173410e2) * z - 6.485021904942025371773e1
    q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z
          + 4.328810604912902668951e2) * z + 4.853903996359136964868e2) * z + 1.945506571482613964425e2
    return t * (z * p / q)


# tiny: the smallest subnormal; huge: past it, |x| + |y| could overflow.
_CEPHES = {
    _F32: _Cephes(math.tan(math.pi / 8), _atanf_poly, 21, 2.0 ** -149, 2.0 ** 125),
    _F64: _Cephes(0.66, _atan_poly, 50, 2.0 ** -1074, 2.0 ** 1021),
}
_T3P8 = 2.414213562373095  # tan(3 pi/8)
import os
WIDE = os.environ.get('WIDE') == '1'


def _atan_parts(n, d, c, dt):
    """atan(n / d) for n, d >= 0 (finite, or d = inf) as k pi/4 + t + w,
    returned as (k, t, w): k in {0, 1, 2} counts Cephes' reduction, t is the
    reduced argument and t + w (left unrounded) its arctangent. One division,
    the quotient n/d never formed: (n - d)/(n + d) and -d/n are exact
    rewrites of (r - 1)/(r + 1) and -1/r for r = n/d."""
    big = n > _T3P8 * d
    mid = n > c.mid * d
    if dt == _F32 and WIDE:
        # float32's reduced argument comes from float64, where n - d and
        # n + d are exact: rounded three times in float32 it was 1.5 ulp
        # off, which alone used up the 2 ulp.
        n, d = _core.astype(n, "float64"), (d if isinstance(d, float) else _core.astype(d, "float64"))
    num = _core.where(big, -d, _core.where(mid, n - d, n))
    den = _core.where(big, n, _core.where(mid, n + d, d))
    t = num / _core.maximum(den, c.tiny)  # 0/0 (n = d = 0) becomes 0/tiny = 0; NaN stays
    if dt == _F32 and WIDE:
        t = _core.astype(t, "float32")
    k = _core.astype(big, dt.name) + _core.astype(mid, dt.name)  # in dt: k * pio4_lo must not round to float32
    return k, t, c.poly(t, t * t)


def _combine(m, t, w, c, neg):
    """m pi/4 +- (t + w), with the sign - where neg. m pi/4 is hi + lo with
    hi exact; hi + t is summed exactly (Fast2Sum: |hi| >= pi/4 > |t| unless
    m = 0, where it is exact anyway), so the result is rounded once, past
    the errors of t and w."""
    if neg is not None:
        t, w = _core.where(neg, -t, t), _core.where(neg, -w, w)
    hi = m * c.pio4_hi
    s = hi + t
    return s + (((hi - s) + t) + (m * c.pio4_lo + w))


def _signbit(x):
    # x < 0, or -0.0 (1/-0.0 is -inf), or -inf (whose 1/x is -0.0): the
    # minimum of x and 1/x is negative exactly then. NaN: False.
    return _core.minimum(x, 1 / x) < 0


def _is_float(dt):
    return dt.kind == "f" or dt in _HALVES


def _tensor(x):
    if isinstance(x, _core.Tensor):
        return x
    from . import asarray
    return asarray(x)


def _compute(x, dt):
    """x in the dtype the math runs in for result dtype dt: float32 for
    float16, bfloat16 (rounded once at the end) and everything not float64."""
    cdt = _F64 if dt == _F64 else _F32
    return x if x.dtype == cdt else _core.astype(x, cdt.name)


def _result(r, dt):
    return r if r.dtype == dt else _core.astype(r, dt.name)


def _to_float(dt):
    return dt if _is_float(dt) else _F32


def _promote_float(a, b):
    """braze's PromoteFloat rule (docs/semantics.md), as divide's: a float
    wins over an integer or bool; float16 with bfloat16 is float32; two
    non-floats give float32."""
    if _is_float(a) != _is_float(b):
        return a if _is_float(a) else b
    if not _is_float(a):
        return _F32
    if a == b:
        return a
    if {a, b} == _HALVES:
        return _F32
    return a if a.itemsize >= b.itemsize else b


def _weak(v):
    return isinstance(v, (bool, int, float)) and not isinstance(v, np.generic)


def arctan(x):
    x = _tensor(x)
    dt = _to_float(x.dtype)
    x = _compute(x, dt)
    c = _CEPHES[x.dtype]
    k, t, w = _atan_parts(_core.abs(x), 1.0, c, x.dtype)
    r = _combine(k, t, w, c, None)  # inf: k = 2, t = -0: pi/2
    return _result(_core.where(_signbit(x), -r, r), dt)  # r is +0 for +-0: the sign restores -0


def arctan2(y, x):
    # A Python scalar is weak, as in every braze op: it takes the other
    # operand's float dtype.
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
    c = _CEPHES[cdt]
    ay, ax = _core.abs(y), _core.abs(x)
    # Past c.huge both scale by 1/4, exactly, so |x| + |y| and tan(3pi/8) |x|
    # stay finite; the smaller one can only lose bits where its ratio to the
    # larger underflows anyway. Both infinite: the ratio is taken as 1
    # (C99: atan2(+-inf, +-inf) = +-pi/4, +-3pi/4), not inf/inf.
    scale = _core.where(_core.maximum(ax, ay) > c.huge, 0.25, 1.0)
    both_inf = _core.logical_and(_core.isinf(x), _core.isinf(y))
    ax = _core.where(both_inf, 1.0, ax * scale)
    ay = _core.where(both_inf, 1.0, ay * scale)
    k, t, w = _atan_parts(ay, ax, c, cdt)
    # atan2(|y|, |x|) is k pi/4 + a; for x < 0 (-0 too) it is pi minus that,
    # (4 - k) pi/4 - a. The multiple of pi/4 in hi (exact) and lo parts.
    xneg = _signbit(x)
    m = _core.where(xneg, 4.0 - k, k)
    r = _combine(m, t, w, c, xneg)
    return _result(_core.where(_signbit(y), -r, r), dt)


def _sqrt_one_minus_square(x):
    # (1 - x)(1 + x) rather than 1 - x^2: 1 - x is exact for x in [0.5, 1],
    # where 1 - x^2 would cancel. |x| > 1 (inf too): sqrt of a negative, NaN.
    return _core.sqrt((1.0 - x) * (1.0 + x))


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
