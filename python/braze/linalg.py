"""``bz.linalg``: the array API's linear algebra extension (and NumPy's
np.linalg names).

What braze's ops express stays lazy and fuses: matmul (a library call with
its epilogue), the products and norms, trace and diagonal. The
factorizations and solvers (cholesky, det, eigh, inv, qr, solve, svd, ...)
are LAPACK's work: they realize their operand and call NumPy's np.linalg
(OpenBLAS's LAPACK), returning realized tensors, the rule of
python/braze/_gather.py. They take float32 and float64, as NumPy does.
``multi_dot`` stays lazy: a chain of matmuls in the order NumPy picks.
"""

import math

import numpy as np

from . import _core
from ._array_api import _numpy_call, vecdot  # noqa: F401 (vecdot is part of the extension)
from ._gather import _as_tensor, _host, _realized
from ._numpy_functions import tensordot  # noqa: F401
from ._on_host import _on_host

# The np.linalg functions a tensor takes through __array_function__.
NUMPY_FUNCTIONS = ["norm", "det", "inv", "solve", "eigh", "eigvalsh", "slogdet", "matrix_power", "svd", "svdvals", "qr",
                   "cholesky", "pinv", "matrix_rank", "vector_norm", "matrix_norm", "lstsq", "multi_dot", "eigvals",
                   "eig"]


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


def svd(x, /, *, full_matrices=True, compute_uv=True, hermitian=False):
    """The array API's svd, with NumPy's keywords too (compute_uv=False: the
    singular values alone, as svdvals); np.linalg.svd's positional form is
    numpy_svd."""
    return _lapack("svd", x, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian)


def numpy_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """np.linalg.svd's signature, for __array_function__."""
    return svd(a, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian)


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


def lstsq(a, b, rcond=None):
    """NumPy's lstsq: (solution, residuals, rank, singular_values), the
    arrays as tensors and rank NumPy's integer. Realizes a and b in one
    program; NumPy's LinAlgError keeps its type."""
    return _on_host("linalg.lstsq", np.linalg.lstsq, a, b, rcond=rcond)


def eigvals(a):
    """NumPy's eigvals of a general matrix: a real tensor where every
    eigenvalue is real (NumPy's answer then); complex ones are a TypeError,
    braze having no complex dtype."""
    return _on_host("linalg.eigvals", np.linalg.eigvals, a, complex_why="the eigenvalues are complex")


def eig(a):
    """NumPy's eig: EigResult(eigenvalues, eigenvectors) as tensors where
    the eigenvalues are all real; complex ones are a TypeError."""
    return _on_host("linalg.eig", np.linalg.eig, a, complex_why="the eigenvalues are complex")


def _chain_order(dims):
    """The split NumPy's multi_dot picks for a chain of matrices whose
    shapes are dims[i] x dims[i + 1]: split[i][j] = k multiplies
    (i..k)(k+1..j). Cormen's dynamic program over the multiply-add count,
    as NumPy's _multi_dot_matrix_chain_order (the first k of least cost)."""
    n = len(dims) - 1
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def multi_dot(arrays, *, out=None):
    """NumPy's multi_dot, lazily: matmuls (library calls, each recorded)
    in the order NumPy picks, so the result fuses on with what follows. A
    1-D first array is a row, a 1-D last one a column (a 1-D or 0-d result,
    as NumPy's); the others must be 2-D. Two arrays are np.dot's."""
    if out is not None:
        raise TypeError("linalg.multi_dot: out= is not supported")
    # A Python list or NumPy array keeps NumPy's dtype (a Python float is float64).
    ts = [a if isinstance(a, _core.Tensor) else _t(np.asarray(a)) for a in arrays]
    if len(ts) < 2:
        raise ValueError("linalg.multi_dot: expecting at least two arrays")
    if len(ts) == 2:
        return np.dot(ts[0], ts[1])  # braze's np.dot (__array_function__), any ranks
    first, last = ts[0].ndim, ts[-1].ndim
    if first == 1:
        ts[0] = _core.reshape(ts[0], [1, -1])
    if last == 1:
        ts[-1] = _core.reshape(ts[-1], [-1, 1])
    for t in ts:
        if t.ndim != 2:
            raise np.linalg.LinAlgError(f"linalg.multi_dot: {t.ndim}-dimensional array given. Array must be "
                                        f"two-dimensional")
    if len(ts) == 3:  # NumPy's closed form for three (ties multiply B and C first)
        (a0, a1b0), (b1c0, c1) = ts[0].shape, ts[2].shape
        split = [[0, 0, 0 if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0) else 1], [0, 0, 1]]
    else:
        split = _chain_order([t.shape[0] for t in ts] + [ts[-1].shape[1]])
    result = _chain(ts, split, 0, len(ts) - 1)
    if first == 1 and last == 1:
        return _core.reshape(result, [])
    return _core.reshape(result, [-1]) if first == 1 or last == 1 else result


def _chain(ts, split, i, j):
    """The product ts[i] @ ... @ ts[j] in split's order (a module function,
    not a closure that calls itself: that cycle would hold the tensors)."""
    if i == j:
        return ts[i]
    k = split[i][j]
    return _core.matmul(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))
