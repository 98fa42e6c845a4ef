"""Creation and index helpers built from braze's ops: logspace,
geomspace, indices, mgrid, ogrid, ix_, diag, diagflat and vander. Each
records ordinary lazy ops (index arithmetic and selects, so a grid is one
kernel); ix_ of a boolean mask takes its nonzero(), which realizes.
float32 stays float32 where NumPy widens it to float64 (vander), and the
default float is braze's float32 where NumPy's is float64 (logspace,
geomspace, mgrid); Python lists are read as ``bz.asarray`` reads them
(float32, int64).
"""

import builtins
import math
import operator

import numpy as np

from . import _core
from ._numpy_functions import _bz, _t, diagonal, tile
from ._quantiles import _is_float
from ._ufunc_math import _c


def _out_float(dtype):
    bz = _bz()
    return bz._as_dtype(bz.float32 if dtype is None else dtype)


def _scalar_only(op, *values):
    if any(np.ndim(v) for v in values):
        raise TypeError(f"{op}: only scalar start and stop are supported")


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop), computed in float64; the default dtype
    is braze's float32 (NumPy: float64)."""
    _scalar_only("logspace", start, stop, base)
    bz = _bz()
    y = bz.linspace(float(start), float(stop), num, endpoint, dtype="float64")
    return _core.astype(_core.power(_c(float(base), "float64", None), y), _out_float(dtype).name)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """A geometric sequence from start to stop (NumPy's: through logspace,
    the ends exactly start and stop, negative ends allowed), computed in
    float64; the default dtype is braze's float32 (NumPy: float64)."""
    _scalar_only("geomspace", start, stop)
    start, stop = float(start), float(stop)
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    bz = _bz()
    sign = math.copysign(1.0, start)
    lo, hi = start / sign, stop / sign
    y = bz.linspace(float(np.log10(lo)), float(np.log10(hi)), num, endpoint, dtype="float64")
    r = _core.power(_c(10.0, "float64", None), y)
    i = _core._arange(0, num, 1, "int64", None)
    r = _core.where(i == 0, lo, r)
    if endpoint and num > 1:
        r = _core.where(i == num - 1, hi, r)
    return _core.astype(r * sign, _out_float(dtype).name)


def _stacked(grids, n):
    """The n grids (each broadcasting to one shape) as one [n, ...] tensor:
    a select on the leading index, so it stays one lazy kernel."""
    lead = _core.reshape(_core._arange(0, n, 1, "int64", None), [n] + [1] * (grids[0].ndim))
    r = grids[-1]
    for i in range(n - 2, -1, -1):
        r = _core.where(lead == i, grids[i], r)
    shape = [n] + list(np.broadcast_shapes(*[tuple(g.shape) for g in grids]))
    return _core.broadcast_to(r, shape)


def _axis_grid(values, k, nd):
    return _core.reshape(values, [values.shape[0] if d == k else 1 for d in range(nd)])


def indices(dimensions, dtype=int, sparse=False):
    """NumPy's indices: the index grids of a shape, lazily."""
    bz = _bz()
    dims = [operator.index(d) for d in dimensions]
    name = bz._dtype_name(dtype)
    nd = len(dims)
    grids = [_axis_grid(_core._arange(0, d, 1, name, None), k, nd) for k, d in enumerate(dims)]
    if sparse:
        return tuple(grids)
    if nd == 0:
        return _core.full([0], 0, name, None)
    return _stacked(grids, nd)


class _GridMaker:
    """NumPy's mgrid (dense) and ogrid (sparse): ``bz.mgrid[0:5, 0:3]``; a
    complex step (``5j``) is a number of points, ends included. Integers
    give int64, anything else braze's float32 (NumPy: float64)."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        bz = _bz()
        if isinstance(key, slice):
            start = 0 if key.start is None else key.start
            if isinstance(key.step, complex):
                count = int(abs(key.step))
                step = (key.stop - start) / float(count - 1) if count != 1 else 1
                return _core.astype(_core._arange(0, count, 1, "float64", None) * step + start, "float32")
            return bz.arange(start, key.stop, 1 if key.step is None else key.step)
        key = tuple(key)
        sizes, steps, starts, floats = [], [], [], False
        for k in key:
            if not isinstance(k, slice):
                raise TypeError(f"{'ogrid' if self.sparse else 'mgrid'}: takes slices, not {type(k).__name__}")
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if isinstance(step, complex):
                count = int(abs(step))
                floats = True
                step = (k.stop - start) / float(count - 1) if count != 1 else 1
            else:
                count = int(math.ceil((k.stop - start) / step))
                floats = floats or any(isinstance(v, float) for v in (start, k.stop, step))
            sizes.append(builtins.max(count, 0))
            steps.append(step)
            starts.append(start)
        work = "float64" if floats else "int64"
        nd = len(key)
        grids = [_axis_grid(_core._arange(0, size, 1, work, None) * step + start, i, nd)
                 for i, (size, step, start) in enumerate(zip(sizes, steps, starts))]
        grids = [_core.astype(g, "float32" if floats else "int64") for g in grids]
        if self.sparse:
            return tuple(grids)
        return _stacked(grids, nd)


mgrid = _GridMaker(sparse=False)
ogrid = _GridMaker(sparse=True)


def ix_(*args):
    """Open index grids for x[ix_(rows, cols)]; a boolean mask is its
    nonzero() (which realizes)."""
    bz = _bz()
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if not isinstance(new, _core.Tensor):
            arr = np.asarray(new)
            new = bz.asarray(arr.astype(np.int64) if arr.size == 0 else arr)
        if new.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if new.dtype == np.bool_:
            new = bz.nonzero(new)[0]
        out.append(_axis_grid(new, k, nd))
    return tuple(out)


def diag(v, k=0):
    """A 1-D v as the 2-D matrix with v on its k-th diagonal (a lazy select
    over the grid); a 2-D v's k-th diagonal (a view)."""
    v = _t(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    size = v.shape[0] + abs(k)
    zero = False if v.dtype == np.bool_ else 0
    if v.shape[0] == 0:
        return _core.full([size, size], zero, v.dtype.name, v.device)
    # v repeated to the matrix's size (a lazy view of a broadcast): entry i
    # of row i (k >= 0) or of column i (k < 0) is v[i] where the diagonal is.
    long = tile(v, -(-size // v.shape[0]))[:size]
    cols = _core.reshape(_core._arange(0, size, 1, "int64", v.device), [1, size])
    rows = _core.reshape(_core._arange(0, size, 1, "int64", v.device), [size, 1])
    source = _core.reshape(long, [size, 1] if k >= 0 else [1, size])
    return _core.where(cols - rows == k, source, zero)


def diagflat(v, k=0):
    return diag(_core.reshape(_t(v), [-1]), k)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix: powers by binary exponentiation (a few
    multiplies and selects, exact for integers, which give int64). Floats
    keep their type (NumPy: float64)."""
    x = _t(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else operator.index(N)
    dtype = x.dtype if _is_float(x.dtype) else np.dtype("int64")
    base = _core.reshape(_core.astype(x, dtype.name), [-1, 1])
    e = _core._arange(0, n, 1, "int64", x.device)
    e = _core.reshape(e if increasing else (n - 1) - e, [1, n])
    r = _core.broadcast_to(_c(1, dtype, x.device), [x.shape[0], n])
    for b in range(builtins.max(n - 1, 0).bit_length()):
        bit = _core.bitwise_and(_core.bitwise_right_shift(e, b), 1) == 1
        r = _core.where(bit, r * base, r)
        base = base * base
    return _core.astype(r, dtype.name)



# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["logspace", "geomspace", "ix_", "diag", "diagflat", "vander"]
# NumPy ufuncs braze builds here (its __array_ufunc__): none.
UFUNCS = []

__all__ = FUNCTIONS + UFUNCS + ["indices", "mgrid", "ogrid"]
