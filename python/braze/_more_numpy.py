"""More NumPy functions NumPy programs call: membership (``isin``),
removing and inserting along an axis (``delete``, ``insert``), the
in-place writers (``fill_diagonal``, ``put_along_axis``, ``put``,
``putmask``, ``place``), ``resize``,
``histogram2d``, the selections ``partition``, ``argpartition`` and
``lexsort``, and the ufunc methods ``at``, ``reduceat`` and
``accumulate`` (reached from ``__array_ufunc__``).

Lazy where the result's shape is known from shapes alone: ``isin``
against a short list is one fused compare-and-reduce kernel, ``resize``
is a broadcast read, ``delete`` of one index or a unit-step slice and
``insert`` at one index are lazy concatenations (Note [Lazy
concatenation]). What needs a sort, a scatter or an index array braze has
no op for realizes its operands in one program and lets NumPy compute
(python/braze/_gather.py's rule), returning a realized tensor. The
in-place ones write through index assignment (Note [In-place updates]),
so every name bound to the tensor sees the write.
"""

import builtins
import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import _core
from ._core import Tensor
from ._differences import _along
from ._gather import _as_tensor, _host, _realized
from ._numpy_functions import _bz, _t


def _values(op, *xs):
    """xs with every tensor (also one inside a tuple or list: an index
    tuple, a list of keys or bins) replaced by its realized values; one
    program realizes them all."""
    def parts(x):
        return list(x) if isinstance(x, (tuple, list)) else [x]
    _realized(*[p for x in xs for p in parts(x) if isinstance(p, Tensor)])

    def host(x):
        if isinstance(x, Tensor):
            return _host(x, op)
        if isinstance(x, (tuple, list)) and builtins.any(isinstance(p, Tensor) for p in x):
            return type(x)(host(p) for p in x)
        return x
    return [host(x) for x in xs]


def _numpy(op, fn, *args, **kwargs):
    """fn (NumPy's) on host values; its error, of the same type, with a
    message that names op (an error type that takes no message, as
    NumPy's casting errors, which name their ufunc, is raised as it is)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError, IndexError) as e:
        try:
            named = type(e)(f"{op}: {e}")
        except Exception:
            raise e from None
        raise named from None


def _writable(op, a, name="a"):
    """a, a braze tensor these in-place writers can write (NumPy's own
    array goes to NumPy), else the TypeError."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: writes in place, so {name} must be a braze tensor, not {type(a).__name__}")
    return a


def _exact(x):
    """x as a tensor with NumPy's dtype for it (a Python float is float64,
    not braze's float32): membership compares exact values."""
    return x if isinstance(x, Tensor) else _bz().asarray(np.asarray(x))


def _is_index(obj):
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_))


# Up to this many test elements, isin compares every element with each
# (one fused kernel, no sort); past it the n*m compares would cost more
# than NumPy's sort of the values.
_MAX_COMPARED = 256


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """NumPy's isin: element's shape, True where the value is among
    test_elements (NaN never is). Against up to _MAX_COMPARED values,
    lazy: an equality broadcast over a new axis and any() of it, one
    kernel. Longer lists, and kind='table', realize and NumPy searches."""
    el, test = _exact(element), _exact(test_elements)
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: invalid kind {kind!r}; please use None, 'sort' or 'table'")
    if kind == "table" or test.size > _MAX_COMPARED:
        e, t = _values("isin", el, test)
        return _as_tensor(_numpy("isin", np.isin, e, t, assume_unique=assume_unique, invert=invert, kind=kind))
    test = _core.reshape(test, [-1])
    found = _bz().any(_core.expand_dims(el, el.ndim) == test, axis=-1)
    return _core.logical_not(found) if invert else found


def delete(arr, obj, axis=None):
    """NumPy's delete. One index, or a slice of step 1: the parts before
    and after, joined lazily. Index arrays, masks and strided slices:
    NumPy, on the realized values."""
    a = _t(arr)
    if axis is None:
        a, axis = _core.reshape(a, [-1]), 0
    axis = normalize_axis_index(operator.index(axis), a.ndim, "delete")
    n = a.shape[axis]
    if _is_index(obj):
        if not -n <= obj < n:
            raise IndexError(f"delete: index {obj} is out of bounds for axis {axis} with size {n}")
        gap = range(obj % n, obj % n + 1)
    else:
        gap = range(*obj.indices(n)) if isinstance(obj, slice) else None
        if gap is not None and len(gap) == 0:
            return _core.copy(a)
        if gap is None or len(gap) > 1 and abs(gap.step) != 1:  # not one run: NumPy's mask
            host, index = _values("delete", a, obj)
            return _as_tensor(_numpy("delete", np.delete, host, index, axis))
    start, stop = min(gap), max(gap) + 1
    return _bz().concatenate([_along(a, axis, 0, start), _along(a, axis, stop, n)], axis=axis)


def insert(arr, obj, values, axis=None):
    """NumPy's insert. At one index: values cast to arr's dtype, given
    arr's rank (leading axes) with their first axis moved to `axis`, as
    NumPy does, and broadcast into the gap; a lazy join of three parts.
    Index sequences, slices and masks: NumPy, on the realized values."""
    bz = _bz()
    a = _t(arr)
    if axis is None:
        a, axis = _core.reshape(a, [-1]), 0
    axis = normalize_axis_index(operator.index(axis), a.ndim, "insert")
    n = a.shape[axis]
    if not _is_index(obj):
        host, index, v = _values("insert", a, obj, values)
        return _as_tensor(_numpy("insert", np.insert, host, index, v, axis))
    if not -n <= obj <= n:
        raise IndexError(f"insert: index {obj} is out of bounds for axis {axis} with size {n}")
    index = obj % n if obj < 0 else obj
    v = _core.astype(values, a.dtype.name) if isinstance(values, Tensor) else \
        bz.asarray(np.asarray(values, dtype=a.dtype))
    v = _core.reshape(v, [1] * (a.ndim - v.ndim) + list(v.shape))
    v = bz.moveaxis(v, 0, axis)
    shape = list(a.shape)
    shape[axis] = v.shape[axis]
    try:
        v = _core.broadcast_to(v, shape)
    except ValueError as e:
        raise ValueError(f"insert: values of shape {list(v.shape)} do not fit the gap of shape {shape}: {e}") \
            from None
    return bz.concatenate([_along(a, axis, 0, index), v, _along(a, axis, index, n)], axis=axis)


def fill_diagonal(a, val, wrap=False):
    """NumPy's fill_diagonal, in place: the flat positions NumPy writes
    (every shape[1] + 1 of a matrix, stopping below the square unless
    wrap; the main diagonal of an equal-sided array), val repeated over
    them as a flat assignment repeats it. Written by index assignment."""
    if isinstance(a, np.ndarray):  # bz.fill_diagonal on NumPy's memory
        return _numpy("fill_diagonal", np.fill_diagonal, a, *_values("fill_diagonal", val), wrap)
    _writable("fill_diagonal", a)
    if a.ndim < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else builtins.min(a.size, a.shape[1] * a.shape[1])
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("fill_diagonal: all dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = a.size
    flat = np.arange(0, end, step)
    v = np.ravel(*_values("fill_diagonal", val))
    if flat.size == 0 or v.size == 0:  # NumPy writes nothing for an empty val
        return None
    a[np.unravel_index(flat, a.shape)] = np.resize(v, flat.size)
    return None


def put_along_axis(arr, indices, values, axis):
    """NumPy's put_along_axis, in place: the index NumPy builds (indices
    on `axis`, an arange on each other axis, broadcast) and one index
    assignment, so a repeated index keeps the last value. axis=None
    writes 1-D indices into the flat (C-order) positions."""
    idx, v = _values("put_along_axis", indices, values)
    idx = np.asarray(idx)
    if isinstance(arr, np.ndarray):  # NumPy's memory: NumPy writes it
        return _numpy("put_along_axis", np.put_along_axis, arr, idx, v, axis)
    _writable("put_along_axis", arr, "arr")
    if not np.issubdtype(idx.dtype, np.integer):
        raise IndexError("put_along_axis: `indices` must be an integer array")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("put_along_axis: when axis=None, `indices` must have a single dimension.")
        try:
            flat = np.arange(arr.size)[idx]  # NumPy's bounds check, negative indices counted from the end
        except IndexError as e:
            raise IndexError(f"put_along_axis: {e}") from None
        _numpy("put_along_axis", arr.__setitem__, np.unravel_index(flat, arr.shape), v)
        return None
    axis = normalize_axis_index(operator.index(axis), arr.ndim, "put_along_axis")
    if idx.ndim != arr.ndim:
        raise ValueError("put_along_axis: `indices` and `arr` must have the same number of dimensions")
    key = tuple(idx if d == axis else np.arange(n).reshape([-1 if k == d else 1 for k in range(arr.ndim)])
                for d, n in enumerate(arr.shape))
    _numpy("put_along_axis", arr.__setitem__, key, v)
    return None


def put(a, ind, v, mode="raise"):
    """NumPy's put, in place: a.flat[ind] = v, v repeated cyclically over
    the indices; mode 'raise' (negative indices from the end), 'wrap' or
    'clip'. One index assignment of the flat positions, so a repeated
    index keeps the last value, as NumPy's loop does."""
    if isinstance(a, np.ndarray):
        return _numpy("put", np.put, a, *_values("put", ind, v), mode=mode)
    _writable("put", a)
    idx, vals = (np.ravel(x) for x in _values("put", ind, v))
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"put: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if idx.size == 0:
        return None
    if not np.issubdtype(idx.dtype, np.integer):
        idx = _numpy("put", idx.astype, np.intp, casting="safe")
    if a.size == 0:
        raise IndexError("put: cannot replace elements of an empty array")
    if vals.size == 0:
        return None  # NumPy writes nothing
    n = a.size
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif ((idx < -n) | (idx >= n)).any():
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"put: index {bad} is out of bounds for axis 0 with size {n}")
    a[np.unravel_index(idx % n, a.shape)] = np.resize(vals, idx.size)
    return None


def putmask(a, mask, values):
    """NumPy's putmask, in place: where mask is set, a takes values'
    element at the same flat position, values repeated cyclically over a's
    size: a select of a and the repeated values, written back over a (one
    kernel with the work of lazy operands)."""
    if isinstance(a, np.ndarray):
        return _numpy("putmask", np.putmask, a, *_values("putmask", mask, values))
    _writable("putmask", a)
    bz = _bz()
    mask = _t(mask)
    if tuple(mask.shape) != tuple(a.shape):
        raise ValueError(f"putmask: mask and data must be the same size (mask {list(mask.shape)}, "
                         f"data {list(a.shape)})")
    vals = _t(values)
    if vals.size == 0:
        if a.size != 0:
            raise ValueError("putmask: values must not be empty")
        return None
    vals = vals if tuple(vals.shape) == tuple(a.shape) else resize(vals, a.shape)
    a[...] = bz.where(_core.astype(mask, "bool"), vals, a)
    return None


def place(arr, mask, vals):
    """NumPy's place, in place: the k-th set position of mask (in C order)
    takes vals[k], vals repeated cyclically. Which positions those are
    depends on mask's values, so mask is realized; the write is one index
    assignment."""
    if isinstance(arr, np.ndarray):
        return _numpy("place", np.place, arr, *_values("place", mask, vals))
    _writable("place", arr, "arr")
    m, v = (np.ravel(x) for x in _values("place", mask, vals))
    if m.size != arr.size:
        raise ValueError(f"place: mask and data must be the same size (mask {m.size}, data {arr.size})")
    flat = np.flatnonzero(m)
    if flat.size == 0:
        return None
    if v.size == 0:
        raise ValueError("place: Cannot insert from an empty array!")
    arr[np.unravel_index(flat, arr.shape)] = np.resize(v, flat.size)
    return None


def resize(a, new_shape):
    """NumPy's resize: the flat values repeated (cyclically) to fill
    new_shape; zeros where either is empty. Lazy: a broadcast read of the
    flat values, sliced and reshaped."""
    bz = _bz()
    a = _t(a)
    shape = [operator.index(new_shape)] if _is_index(new_shape) else [operator.index(d) for d in new_shape]
    if builtins.any(d < 0 for d in shape):
        raise ValueError("resize: all elements of `new_shape` must be non-negative")
    size = math.prod(shape)
    if a.size == 0 or size == 0:
        return bz.zeros(shape, a.dtype, a.device)
    flat = _core.reshape(a, [-1])
    return _core.reshape(bz.tile(flat, -(-size // a.size))[:size], shape)


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """NumPy's histogram2d on the realized values (counting is a scatter,
    as for histogram): (H, xedges, yedges) as tensors, NumPy's dtypes."""
    xs, ys, b, w = _values("histogram2d", x, y, bins, weights)
    h, xe, ye = _numpy("histogram2d", np.histogram2d, xs, ys, bins=b, range=range, density=density, weights=w)
    return _as_tensor(h), _as_tensor(xe), _as_tensor(ye)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's partition on the realized values (a selection: NumPy's
    introselect, so the order within each side is NumPy's too)."""
    x, k = _values("partition", _t(a), kth)
    return _as_tensor(_numpy("partition", np.partition, x, k, axis=axis, kind=kind, order=order))


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's argpartition on the realized values (int64 indices)."""
    x, k = _values("argpartition", _t(a), kth)
    return _as_tensor(_numpy("argpartition", np.argpartition, x, k, axis=axis, kind=kind, order=order))


def lexsort(keys, axis=-1):
    """NumPy's lexsort on the realized keys (the last key sorts first):
    int64 indices."""
    k, = _values("lexsort", keys)
    return _as_tensor(_numpy("lexsort", np.lexsort, k, axis=axis))


# --- ufunc methods (python/braze/_numpy_protocols.py's __array_ufunc__) --------------------------------

# ufunc.accumulate -> the array API's scan that is the same fold.
_SCANS = {"add": "cumulative_sum", "multiply": "cumulative_prod"}


def accumulate(ufunc, a, axis=0):
    """ufunc.accumulate: add and multiply are the array API's scans; any
    other ufunc (maximum, minimum, logical_and, ...) NumPy runs on the
    realized values (a scan is a loop braze has no op for)."""
    a = _t(a)
    if ufunc.__name__ in _SCANS:
        return getattr(_bz(), _SCANS[ufunc.__name__])(a, axis=axis)
    op = f"numpy.{ufunc.__name__}.accumulate"
    x, = _values(op, a)
    return _as_tensor(_numpy(op, ufunc.accumulate, x, axis=axis))


def reduceat(ufunc, a, indices, axis=0, dtype=None):
    """ufunc.reduceat: the fold of each run a[indices[i]:indices[i+1]]
    (a[indices[i]] itself where the next index is not larger), by NumPy on
    the realized values: the runs' lengths are in the indices."""
    op = f"numpy.{ufunc.__name__}.reduceat"
    x, idx = _values(op, _t(a), indices)
    return _as_tensor(_numpy(op, ufunc.reduceat, x, idx, axis=axis, dtype=dtype))


def at(ufunc, a, indices, b=None):
    """ufunc.at, in place and unbuffered: an index repeated applies the
    ufunc again (np.add.at accumulates). A scatter, which braze has no op
    for: NumPy applies it to a copy of a's realized values, which a then
    takes by index assignment (Note [In-place updates]); a NumPy array is
    written by NumPy directly."""
    op, operands = f"numpy.{ufunc.__name__}.at", () if b is None else (b,)
    if isinstance(a, np.ndarray):
        return _numpy(op, ufunc.at, a, *_values(op, indices, *operands))
    _writable(op, a)
    x, key, *rest = _values(op, a, indices, *operands)
    result = np.array(x)  # a writable copy
    _numpy(op, ufunc.at, result, key, *rest)
    a[...] = result
    return None


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["isin", "delete", "insert", "fill_diagonal", "put_along_axis", "put", "putmask", "place", "resize",
             "histogram2d", "partition", "argpartition", "lexsort"]
UFUNCS = []
__all__ = FUNCTIONS
