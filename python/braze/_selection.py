"""Choosing, looking up and testing values, built from braze's ops:
select and piecewise (chains of where), polyval (Horner's loop), interp
and digitize, append, and the tests array_equiv, iscomplexobj, isrealobj,
isreal and iscomplex (braze has no complex dtype). select, piecewise,
polyval, isreal and iscomplex record ordinary lazy ops. Where NumPy's
answer needs an op braze does not have yet, the function uses braze's
stand-in for it, which realizes its operands and lets NumPy compute
(python/braze/_gather.py's rule): interp and digitize search
(``bz.searchsorted``); append and interp(period=) concatenate (lazily,
Note [Lazy concatenation]); array_equiv answers a Python bool. Their
docstrings say so. float32 stays float32 where NumPy widens it to float64
(interp).
"""

import builtins

import numpy as np

from . import _core
from ._numpy_functions import _bz, _t
from ._quantiles import _median_dtype, _promote


def polyval(p, x):
    """The polynomial with coefficients p (highest power first) at x:
    Horner's loop, NumPy's (p's length is read, its values stay lazy)."""
    p, x = _t(p), _t(x)
    y = _core.full(list(x.shape), 0, x.dtype.name, x.device)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


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


def append(arr, values, axis=None):
    """NumPy's append: a concatenation of two (lazy: Note [Lazy concatenation])."""
    bz = _bz()
    a, v = _t(arr), _t(values)
    if axis is None:
        a, v, axis = _core.reshape(a, [-1]), _core.reshape(v, [-1]), 0
    return bz.concatenate([a, v], axis=axis)


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


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["polyval", "select", "piecewise", "interp", "digitize", "append", "array_equiv", "iscomplexobj",
             "isrealobj", "isreal", "iscomplex"]
# NumPy ufuncs braze builds here (its __array_ufunc__): none.
UFUNCS = []

__all__ = FUNCTIONS + UFUNCS
