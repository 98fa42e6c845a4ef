"""The reductions with NumPy's ``dtype=`` and ``out=``: ``bz.sum(x, axis,
keepdims, *, dtype=None, out=None)``, and the same as tensor methods.

They keep the core's positional order (x, axis, keepdims; var and std:
x, axis, correction, keepdims) and take NumPy's keywords where NumPy has
them: ``dtype`` on sum, prod, mean, var and std (x is cast to it, the
reduction runs in it and the result is it, as NumPy accumulates in it),
``out`` on all (python/braze/_copyto.py's write_out), and ``ddof`` on var
and std (NumPy's name for the correction: ``x.std(ddof=1)``), ``initial``
and ``where`` on sum, prod, max and min (masked_reduction in
_numpy_protocols.py: a select and the reduction, one kernel). max and min
have no ``dtype``, as in NumPy.
"""

import numpy as np

from . import _core
from ._copyto import write_out
from ._core import Tensor


def _reduce(fn, x, dtype, out, *args):
    if dtype is None:
        return write_out(fn(x, *args), out, fn.__name__)
    from . import _dtype_name
    name = _dtype_name(dtype)
    r = fn(_core.astype(x, name), *args)
    return write_out(r if r.dtype.name == name else _core.astype(r, name), out, fn.__name__)


def _fold(fn, x, dtype, out, axis, keepdims, where, initial):
    """sum, prod, max or min with NumPy's where= and initial=."""
    if where is True and initial is np._NoValue:
        return _reduce(fn, x, dtype, out, axis, keepdims)
    import braze as bz
    from ._numpy_protocols import masked_reduction
    x = bz.asarray(x, dtype=dtype)
    return write_out(masked_reduction(bz, fn.__name__, x, axis, keepdims, where, initial), out, fn.__name__)


def sum(x, axis=None, keepdims=False, *, dtype=None, out=None, initial=np._NoValue, where=True):
    return _fold(_core.sum, x, dtype, out, axis, keepdims, where, initial)


def prod(x, axis=None, keepdims=False, *, dtype=None, out=None, initial=np._NoValue, where=True):
    return _fold(_core.prod, x, dtype, out, axis, keepdims, where, initial)


def mean(x, axis=None, keepdims=False, *, dtype=None, out=None):
    return _reduce(_core.mean, x, dtype, out, axis, keepdims)


def _correction(correction, ddof, op):
    if ddof is None:
        return correction
    if correction != 0.0:
        raise ValueError(f"{op}: ddof and correction can't be provided simultaneously.")
    return ddof


def var(x, axis=None, correction=0.0, keepdims=False, *, ddof=None, dtype=None, out=None):
    return _reduce(_core.var, x, dtype, out, axis, _correction(correction, ddof, "var"), keepdims)


def std(x, axis=None, correction=0.0, keepdims=False, *, ddof=None, dtype=None, out=None):
    return _reduce(_core.std, x, dtype, out, axis, _correction(correction, ddof, "std"), keepdims)


def max(x, axis=None, keepdims=False, *, out=None, initial=np._NoValue, where=True):
    return _fold(_core.max, x, None, out, axis, keepdims, where, initial)


def min(x, axis=None, keepdims=False, *, out=None, initial=np._NoValue, where=True):
    return _fold(_core.min, x, None, out, axis, keepdims, where, initial)


__all__ = ["sum", "prod", "mean", "var", "std", "max", "min"]


def install():
    for name in __all__:
        setattr(Tensor, name, globals()[name])  # t.sum(axis, keepdims, *, dtype, out)
