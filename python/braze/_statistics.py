"""Statistics other than order statistics, built from braze's ops: cov
and corrcoef (one matmul), trapezoid, bincount and histogram, nanargmax
and nanargmin. cov, corrcoef and trapezoid record ordinary lazy ops. Where
NumPy's answer needs an op braze does not have yet, the function uses
braze's stand-in for it, which realizes its operands and lets NumPy
compute (python/braze/_gather.py's rule): bincount and histogram count (a
scatter: bincount's length is in the data), nanargmax/nanargmin check for
an all-NaN slice (NumPy's ValueError), cov checks weights on the host
(cov(m, y) concatenates, lazily: Note [Lazy concatenation]). Their
docstrings say so. Integers give braze's float32 where NumPy computes in
float64 (trapezoid, cov), and float32 stays float32 where NumPy widens it
to float64 (cov, corrcoef).
"""

import math

import numpy as np

from . import _core
from ._copyto import write_out
from ._numpy_functions import _bz, _t, diagonal, normalized_axis
from ._quantiles import _is_float, _median_dtype, _promote


# --- covariance ------------------------------------------------------------------------------------------


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
    realized); y is joined to m with concatenate (lazily)."""
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


# --- integrals, counts and arg reductions ----------------------------------------------------------------


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral by the trapezoidal rule along axis (sample points x, or
    spacing dx). Integers give float32 (NumPy: float64)."""
    y = _t(y)
    ax = normalized_axis(axis, y.ndim, "trapezoid")
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
FUNCTIONS = ["cov", "corrcoef", "trapezoid", "bincount", "histogram", "nanargmax", "nanargmin"]
# NumPy ufuncs braze builds here (its __array_ufunc__): none.
UFUNCS = []

__all__ = FUNCTIONS + UFUNCS
