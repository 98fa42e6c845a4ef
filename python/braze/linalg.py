"""``bz.linalg``: the array API's linear algebra extension (and NumPy's
np.linalg names).

What braze's ops express stays lazy and fuses: matmul (a library call with
its epilogue), the products and norms, trace and diagonal. The
factorizations and solvers (cholesky, det, eigh, inv, qr, solve, svd, ...)
are LAPACK's work: they realize their operand and call NumPy's np.linalg
(OpenBLAS's LAPACK), returning realized tensors, the rule of
python/braze/_gather.py. They take float32 and float64, as NumPy does.
"""

import math

import numpy as np

from . import _core
from ._array_api import _numpy_call, vecdot  # noqa: F401 (vecdot is part of the extension)
from ._gather import _as_tensor, _host, _realized
from ._numpy_functions import tensordot  # noqa: F401


def _t(x):
    from . import asarray
    return asarray(x)


def matmul(x1, x2, /):
    return _core.matmul(_t(x1), _t(x2))


def matrix_transpose(x, /):
    return _core.matrix_transpose(_t(x))


def outer(x1, x2, /):
    a, b = _t(x1), _t(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: takes two vectors, not shapes {list(a.shape)} and {list(b.shape)}")
    return _core.reshape(a, [-1, 1]) * _core.reshape(b, [1, -1])


def diagonal(x, /, *, offset=0):
    from ._numpy_functions import diagonal as diag
    return diag(_t(x), offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    d = diagonal(x, offset=offset)
    if dtype is not None:
        d = d.astype(dtype)
    r = _core.sum(d, [-1], False)
    return r if dtype is None else r.astype(dtype)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = _t(x)
    a = _core.abs(x if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else x.astype("float32"))
    if ord == math.inf:
        return _core.max(a, axis, keepdims)
    if ord == -math.inf:
        return _core.min(a, axis, keepdims)
    if ord == 0:
        return _core.sum(_core.astype(a != 0, a.dtype.name), axis, keepdims)
    if ord == 1:
        return _core.sum(a, axis, keepdims)
    if ord == 2:
        return _core.sqrt(_core.sum(a * a, axis, keepdims))
    return _core.power(_core.sum(_core.power(a, float(ord)), axis, keepdims), 1.0 / float(ord))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    x = _t(x)
    if ord == "fro":
        a = x if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else x.astype("float32")
        return _core.sqrt(_core.sum(a * a, [-2, -1], keepdims))
    return _as_tensor(_numpy_call("matrix_norm", lambda v: np.linalg.matrix_norm(v, keepdims=keepdims, ord=ord), x))


def _lapack(name, *args, **kwargs):
    """np.linalg.<name> on the realized operands (the module docstring)."""
    fn = getattr(np.linalg, name)
    tensors = [_t(a) for a in args]
    _realized(*tensors)
    values = [_host(t, f"linalg.{name}") for t in tensors]  # a device tensor is refused, not copied
    try:
        out = fn(*values, **kwargs)
    except np.linalg.LinAlgError as e:
        raise ValueError(f"linalg.{name}: {e}") from None
    if isinstance(out, tuple):  # a named result: EighResult, QRResult, SlogdetResult, SVDResult
        return type(out)(*[_as_tensor(np.asarray(o)) for o in out])
    return _as_tensor(np.asarray(out))


def cholesky(x, /, *, upper=False):
    return _lapack("cholesky", x, upper=upper)


def cross(x1, x2, /, *, axis=-1):
    return _lapack("cross", x1, x2, axis=axis)


def det(x, /):
    return _lapack("det", x)


def eigh(x, /):
    return _lapack("eigh", x)


def eigvalsh(x, /):
    return _lapack("eigvalsh", x)


def inv(x, /):
    return _lapack("inv", x)


def matrix_power(x, n, /):
    return _lapack("matrix_power", x, n=n)


def matrix_rank(x, /, *, rtol=None):
    return _lapack("matrix_rank", x, rtol=rtol)


def pinv(x, /, *, rtol=None):
    return _lapack("pinv", x, rtol=rtol)


def qr(x, /, *, mode="reduced"):
    return _lapack("qr", x, mode=mode)


def slogdet(x, /):
    return _lapack("slogdet", x)


def solve(x1, x2, /):
    return _lapack("solve", x1, x2)


def svd(x, /, *, full_matrices=True):
    return _lapack("svd", x, full_matrices=full_matrices)


def svdvals(x, /):
    return _lapack("svdvals", x)


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's np.linalg.norm for the vector and Frobenius cases."""
    x = _t(x)
    if ord is None and axis is None:
        return vector_norm(_core.reshape(x, [-1]), keepdims=False) if not keepdims else \
            _core.reshape(vector_norm(x, axis=None, keepdims=True), [1] * x.ndim)
    if isinstance(axis, int) or (axis is None and x.ndim == 1):
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    return _lapack("norm", x, ord=ord, axis=axis, keepdims=keepdims)
