"""NumPy functions that rearrange or pick from arrays, built from braze's
ops: the rotations and axis moves (``rot90``, ``rollaxis``), ``block``,
``choose``, ``compress`` and ``extract``, ``ediff1d``, ``trim_zeros``,
the index helpers ``diag_indices_from``, ``tril_indices_from`` and
``triu_indices_from``, ``sliding_window_view``, ``apply_along_axis``,
``apply_over_axes`` and the aliasing tests ``may_share_memory`` and
``shares_memory``
(python/braze/_math_extras.py has the element-wise and nan- ones).

Lazy: rot90 and rollaxis are views (flips and transposes); block,
ediff1d, the picks of compress/extract and sliding_window_view's windows
join up to 8 parts lazily (Note [Lazy concatenation]); choose is a chain
of where.

Realizing, where the values decide a shape or an error
(python/braze/_gather.py's rule): compress, extract and trim_zeros
realize the condition (or the nonzero mask) only, then slice the data
lazily (more than 8 separate runs of a compress are taken by ``bz.take``,
which realizes); choose(mode='raise') realizes the one bool saying whether
an index is out of range; apply_along_axis stacks its slices' results,
which realizes past 8 of them (Note [Concatenation realizes]). The index
helpers depend on the shape alone and answer NumPy's arrays;
may_share_memory and shares_memory never realize (see their docstrings).
"""

import builtins
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _core, _views
from ._copyto import write_out
from ._core import Tensor
from ._differences import _along
from ._more_numpy import _numpy, _values
from ._numpy_functions import _bz, _t


# --- rotations and axis moves ---------------------------------------------------------------------------


def rot90(m, k=1, axes=(0, 1)):
    """NumPy's rot90: flips and a transpose, so a view (NumPy's steps)."""
    bz = _bz()
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2.")
    m = _t(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("rot90: Axes must be different.")
    if not (-m.ndim <= axes[0] < m.ndim and -m.ndim <= axes[1] < m.ndim):
        raise ValueError(f"rot90: Axes={axes} out of range for array of ndim={m.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return m[:]
    if k == 2:
        return bz.flip(bz.flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return _core.permute_dims(bz.flip(m, axes[1]), order)
    return bz.flip(_core.permute_dims(m, order), axes[1])


def rollaxis(a, axis, start=0):
    """NumPy's rollaxis: `axis` moved to before `start` (a transpose)."""
    a = _t(a)
    n = a.ndim
    axis = normalize_axis_index(operator.index(axis), n, "rollaxis")
    given = start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"rollaxis: 'start' arg requires {-n} <= start < {n + 1}, but {given} was "
                                      "passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    order = [d for d in range(n) if d != axis]
    order.insert(start, axis)
    return _core.permute_dims(a, order)


# --- joining and picking --------------------------------------------------------------------------------


def _block_index(index):
    return "arrays" + "".join(f"[{i}]" for i in index if i is not None)


def _block_depths(arrays, index=()):
    """NumPy's check (_block_check_depths_match): the index of the first
    innermost element (None last for an empty list) and the largest rank."""
    if type(arrays) is tuple:
        raise TypeError(f"block: {_block_index(index)} is a tuple. Only lists can be used to arrange blocks, and "
                        "np.block does not allow implicit conversion from tuple to ndarray.")
    if type(arrays) is list and arrays:
        found = [_block_depths(x, index + (i,)) for i, x in enumerate(arrays)]
        first, rank = found[0]
        for other, r in found[1:]:
            rank = builtins.max(rank, r)
            if len(other) != len(first):
                raise ValueError(f"block: List depths are mismatched. First element was at depth {len(first)}, "
                                 f"but there is an element at depth {len(other)} ({_block_index(other)})")
            if other[-1] is None:  # an empty list deeper in: reported below
                first = other
        return first, rank
    if type(arrays) is list:
        return index + (None,), 0
    return index, arrays.ndim if isinstance(arrays, Tensor) else np.ndim(arrays)


def _at_least(x, rank):
    x = _t(x)
    return _core.reshape(x, [1] * (rank - x.ndim) + list(x.shape)) if x.ndim < rank else x


def _block(arrays, depth, list_depth, rank):
    if depth == list_depth:
        return _at_least(arrays, rank)
    parts = [_block(x, depth + 1, list_depth, rank) for x in arrays]
    return _bz().concatenate(parts, axis=-(list_depth - depth))


def block(arrays):
    """NumPy's block: the innermost lists join along the last axis, each
    level out along the one before; blocks gain leading unit axes to the
    result's rank. Each level is one lazy concatenation (up to 8 parts)."""
    bottom, arr_rank = _block_depths(arrays)
    if bottom and bottom[-1] is None:
        raise ValueError(f"block: List at {_block_index(bottom)} cannot be empty")
    list_depth = len(bottom)
    rank = builtins.max(arr_rank, list_depth)
    result = _block(arrays, 0, list_depth, rank)
    return _core.copy(result) if list_depth == 0 else result


def choose(a, choices, mode="raise"):
    """NumPy's choose: choices[a[i]][i], broadcast together; a chain of
    where (lazy). mode='raise' realizes one bool (is any index out of
    range?) for NumPy's ValueError; 'wrap' and 'clip' stay lazy."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    idx = _t(a)
    if idx.dtype == np.bool_:
        idx = _core.astype(idx, "int64")
    elif idx.dtype.kind not in "iu":
        raise TypeError(f"choose: Cannot cast array data from {idx.dtype!r} to dtype('int64') according to the "
                        "rule 'safe'")
    if isinstance(choices, (Tensor, np.ndarray)):
        choices = [choices[i] for i in range(choices.shape[0])] if choices.ndim else [choices]
    choices = [_t(c) for c in choices]
    n = len(choices)
    if n == 0:
        raise ValueError("choose: 0-length sequence.")
    if mode == "raise":
        if builtins.bool(_bz().any(_core.logical_or(idx < 0, idx >= n))):
            raise ValueError("choose: invalid entry in choice array")
    elif mode == "wrap":
        idx = _core.remainder(idx, n)
    else:
        idx = _core.minimum(_core.maximum(idx, 0), n - 1)
    shape = list(np.broadcast_shapes(tuple(idx.shape), *[tuple(c.shape) for c in choices]))
    dtype = _bz().result_type(*choices)
    result = _core.astype(choices[n - 1], dtype.name)
    for i in range(n - 2, -1, -1):
        result = _core.where(idx == i, choices[i], result)
    result = _core.astype(result, dtype.name) if result.dtype != dtype else result
    return result if list(result.shape) == shape else _core.broadcast_to(result, shape)


# A pick of more runs than this would join more parts than a lazy
# concatenation takes (Note [Lazy concatenation]); bz.take picks instead.
_MAX_RUNS = 8


def _runs(idx):
    """Increasing indices as (start, stop, step) runs of equal steps."""
    runs, i = [], 0
    while i < len(idx):
        j, step = i + 1, 1
        if j < len(idx):
            step = int(idx[j] - idx[i])
            while j + 1 < len(idx) and idx[j + 1] - idx[j] == step:
                j += 1
            j += 1
        runs.append((int(idx[i]), int(idx[j - 1]) + 1, step))
        i = j
    return runs


def _pick(a, idx, axis):
    """a's elements at the increasing host indices idx along axis: strided
    slices of a joined lazily, or bz.take (realizes) for many runs."""
    if len(idx) == 0:
        return _core.copy(_along(a, axis, 0, 0))
    runs = _runs(idx)
    if len(runs) > _MAX_RUNS:
        return _bz().take(a, idx, axis=axis)
    parts = [_along(a, axis, *r) for r in runs]
    return _core.copy(parts[0]) if len(parts) == 1 else _bz().concatenate(parts, axis=axis)


def _condition(op, condition):
    c, = _values(op, condition)
    return np.asarray(c)


def compress(condition, a, axis=None, out=None):
    """NumPy's compress: the slices along axis where condition is true.
    The result's length is in condition's values: condition alone is
    realized, and a is sliced lazily (runs of equal steps, joined)."""
    c = _condition("compress", condition)
    if c.ndim != 1:
        raise ValueError("compress: condition must be a 1-d array")
    a = _t(a)
    if axis is None:
        a, axis = _core.reshape(a, [-1]), 0
    axis = normalize_axis_index(operator.index(axis), a.ndim, "compress")
    idx = np.flatnonzero(c)
    n = a.shape[axis]
    if len(idx) and idx[-1] >= n:
        raise IndexError(f"compress: index {idx[-1]} is out of bounds for axis {axis} with size {n}")
    return write_out(_pick(a, idx, axis), out, "compress")


def extract(condition, arr):
    """NumPy's extract: the flat elements of arr where the flat condition
    is nonzero. Realizes condition only (see compress)."""
    c = _condition("extract", condition)
    a = _core.reshape(_t(arr), [-1])
    idx = np.flatnonzero(c)
    if len(idx) and idx[-1] >= a.shape[0]:
        raise IndexError(f"extract: index {idx[-1]} is out of bounds for axis 0 with size {a.shape[0]}")
    return _pick(a, idx, 0)


def _edge(values, dtype, which):
    """to_begin/to_end as a flat tensor of ary's dtype, NumPy's same_kind check."""
    if values is None:
        return None
    have = values.dtype if isinstance(values, Tensor) else np.asarray(values).dtype
    if not np.can_cast(have, dtype, casting="same_kind"):
        raise TypeError(f"ediff1d: dtype of `{which}` must be compatible with input `ary` under the `same_kind` "
                        "rule.")
    t = values if isinstance(values, Tensor) else _bz().asarray(np.asarray(values))
    return _core.reshape(_core.astype(t, dtype.name), [-1])


def ediff1d(ary, to_end=None, to_begin=None):
    """NumPy's ediff1d: differences of the flat array, with to_begin and
    to_end (cast to its dtype) around them: one lazy concatenation."""
    a = _core.reshape(_t(ary), [-1])
    if a.dtype == np.bool_:
        raise TypeError("ediff1d: numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, "
                        "the `^` operator, or the logical_xor function instead.")
    begin, end = _edge(to_begin, a.dtype, "to_begin"), _edge(to_end, a.dtype, "to_end")
    d = a[1:] - a[:-1]
    parts = [p for p in (begin, d, end) if p is not None]
    return _bz().concatenate(parts) if len(parts) > 1 else d


def trim_zeros(filt, trim="fb", axis=None):
    """NumPy's trim_zeros: the smallest box (along `axis`: None for all)
    holding every nonzero value, leading ('f') and/or trailing ('b') zeros
    cut; a view of filt. Realizes only the nonzero mask of each axis."""
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    t = _t(filt)
    axes = tuple(range(t.ndim)) if axis is None else normalize_axis_tuple(axis, t.ndim, argname="axis")
    if not axes:
        return filt
    nonzero = t != 0  # NaN is not zero, -0.0 is
    masks = [_bz().any(nonzero, axis=tuple(d for d in range(t.ndim) if d != ax)) if t.ndim > 1 else nonzero
             for ax in range(t.ndim)]
    hosts = _values("trim_zeros", *masks)
    found = [np.flatnonzero(m) for m in hosts]
    if builtins.any(len(f) == 0 for f in found):  # all zero: every trimmed axis empty
        key = tuple(slice(0, 0) if d in axes else slice(None) for d in range(t.ndim))
    else:
        key = tuple(slice(int(f[0]) if "f" in trim else None, int(f[-1]) + 1 if "b" in trim else None)
                    if d in axes else slice(None) for d, f in enumerate(found))
    return t[key]


# --- index helpers --------------------------------------------------------------------------------------


def _shape_only(arr):
    """An ndarray of arr's shape and dtype that holds no memory (a
    broadcast scalar): for NumPy functions that read only the shape."""
    shape = tuple(arr.shape) if isinstance(arr, Tensor) else np.shape(arr)
    dtype = arr.dtype if isinstance(arr, Tensor) else np.asarray(arr).dtype
    return np.broadcast_to(np.zeros((), dtype), shape)


def diag_indices_from(arr):
    """NumPy's diag_indices_from: from arr's shape alone (NumPy arrays)."""
    return _numpy("diag_indices_from", np.diag_indices_from, _shape_only(arr))


def tril_indices_from(arr, k=0):
    """NumPy's tril_indices_from: from arr's shape alone (NumPy arrays)."""
    return _numpy("tril_indices_from", np.tril_indices_from, _shape_only(arr), k)


def triu_indices_from(arr, k=0):
    """NumPy's triu_indices_from: from arr's shape alone (NumPy arrays)."""
    return _numpy("triu_indices_from", np.triu_indices_from, _shape_only(arr), k)


# --- applying functions ---------------------------------------------------------------------------------


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """NumPy's apply_along_axis: func1d on each 1-d slice along axis (a
    lazy view), the results (cast to the first one's dtype, as NumPy's
    buffer) stacked, their axes where `axis` was. A stack of more than 8
    results realizes them (Note [Concatenation realizes])."""
    bz = _bz()
    a = _t(arr)
    axis = normalize_axis_index(operator.index(axis), a.ndim, "apply_along_axis")
    moved = _core.permute_dims(a, [d for d in range(a.ndim) if d != axis] + [axis])
    outer = list(moved.shape[:-1])
    if builtins.any(d == 0 for d in outer):
        raise ValueError("apply_along_axis: Cannot apply_along_axis when any iteration dimensions are 0")
    results = [_t(func1d(moved[index], *args, **kwargs)) for index in np.ndindex(*outer)]
    first = results[0]
    for r in results[1:]:
        if r.shape != first.shape:
            raise ValueError(f"apply_along_axis: func1d returned shapes {list(first.shape)} and "
                             f"{list(r.shape)}; every slice must give the same shape")
    results = [r if r.dtype == first.dtype else _core.astype(r, first.dtype.name) for r in results]
    stacked = bz.stack(results) if len(results) > 1 else _core.reshape(first, [1] + list(first.shape))
    r = _core.reshape(stacked, outer + list(first.shape))
    n, k = len(outer), first.ndim
    order = list(range(axis)) + list(range(n, n + k)) + list(range(axis, n))
    return _core.permute_dims(r, order) if order != list(range(n + k)) else r


def apply_over_axes(func, a, axes):
    """NumPy's apply_over_axes: func(a, axis) for each axis in turn, a
    reduced axis put back (expand_dims) so the rank stays."""
    val = _t(a)
    n = val.ndim
    if np.ndim(axes) == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = n + axis
        res = _t(func(val, axis))
        if res.ndim != val.ndim:
            res = _core.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("apply_over_axes: function is not returning an array of the correct shape")
        val = res
    return val


# --- aliasing -------------------------------------------------------------------------------------------


def _overlap(a, b, max_work, test):
    """Whether a and b could see each other's writes. Two braze tensors
    alias only as write-through views of one base (a lazy value is never
    shared otherwise: an in-place update gives a new one): NumPy's test on
    their layouts over that base. A tensor and a NumPy array: only a
    realized tensor, whose values the array may view (np.asarray(t))."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        (ra, ka), (rb, kb) = _views.root_of(a), _views.root_of(b)
        if ra is not rb and ra._node_id() != rb._node_id():
            return False
        memory = _views.c_layout(ra)
        return builtins.bool(test(_views.viewed(memory, ka), _views.viewed(memory, kb), max_work))
    if isinstance(b, Tensor):
        a, b = b, a
    if isinstance(a, Tensor):
        if not isinstance(b, np.ndarray) or not a.is_realized or a.device != "cpu":
            return False
        return builtins.bool(test(a._raw_bytes(), b, max_work))
    return builtins.bool(test(a, b, max_work))


def may_share_memory(a, b, max_work=None):
    """NumPy's may_share_memory for braze tensors, never realizing: True
    when the two could see each other's writes (see _overlap; bounds only,
    as NumPy's)."""
    return _overlap(a, b, max_work, lambda x, y, w: np.may_share_memory(x, y, max_work=w))


def shares_memory(a, b, max_work=None):
    """NumPy's shares_memory for braze tensors, never realizing: exact for
    two views of one base (NumPy's test on their layouts), else as
    may_share_memory."""
    return _overlap(a, b, max_work, lambda x, y, w: np.shares_memory(x, y) if w is None else
                    np.shares_memory(x, y, max_work=w))


# --- sliding windows --------------------------------------------------------------------------------------


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """NumPy's sliding_window_view: for each windowed axis, its windows
    stacked along a new last axis (window offset j is the slice
    [j : j + n - w + 1]), so a window of w is w lazy slices joined (Note
    [Lazy concatenation]: up to 8 lazily, more realize). A copy, not a
    view, read-only as NumPy's view is; writeable=True, a view whose
    writes reach x in NumPy, is a TypeError."""
    if writeable:
        raise TypeError("sliding_window_view: writeable=True is not supported (braze's windows are a copy of x, "
                        "not a view that writes through to it)")
    bz = _bz()
    x = _t(x)
    shape = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    if axis is None:
        if len(shape) != x.ndim:
            raise ValueError(f"sliding_window_view: since axis is None, window_shape {shape} must have as many "
                             f"entries as the input has dimensions ({x.ndim})")
        axes = tuple(range(x.ndim))
    else:
        axes = normalize_axis_tuple(axis, x.ndim, "sliding_window_view", allow_duplicate=True)
        if len(shape) != len(axes):
            raise ValueError(f"sliding_window_view: window_shape {shape} and axis {axis} must have the same length")
    if builtins.any(w < 0 for w in shape):
        raise ValueError("sliding_window_view: `window_shape` cannot contain negative values")
    out = x
    for ax, w in zip(axes, shape):
        n = out.shape[ax]
        if w > n:
            raise ValueError(f"sliding_window_view: window shape {shape} cannot be larger than the input's "
                             f"shape {list(x.shape)} along axis {ax}")
        lead = (slice(None),) * ax
        if w == 0:
            out = bz.zeros((*out.shape[:ax], n + 1, *out.shape[ax + 1:], 0), dtype=out.dtype)
            continue
        out = bz.stack([out[(*lead, slice(j, j + n - w + 1))] for j in range(w)], axis=-1)
    _views.set_read_only(out, True, broadcast=True)
    return out


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["rot90", "rollaxis", "block", "choose", "compress", "extract", "ediff1d", "trim_zeros",
             "diag_indices_from", "tril_indices_from", "triu_indices_from", "apply_along_axis", "apply_over_axes",
             "may_share_memory", "shares_memory"]
UFUNCS = []
STRIDE_TRICKS = ["sliding_window_view"]  # numpy.lib.stride_tricks'

__all__ = FUNCTIONS + UFUNCS + STRIDE_TRICKS
