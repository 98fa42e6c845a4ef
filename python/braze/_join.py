"""Joining and splitting: NumPy's concatenate, stack, the *stack helpers and
the split family.

Joining up to 8 tensors is lazy (Note [Lazy concatenation],
runtime/concatenate.cpp); more realize their inputs and return a realized
tensor (Note [Concatenation realizes]); splitting returns lazy
views, which cost nothing until read.
"""

import operator

import numpy as np

from . import _core
from ._numpy_functions import normalized_axis


def _tensors(arrays, op):
    if isinstance(arrays, _core.Tensor) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{op}: takes a sequence of tensors, not a {type(arrays).__name__}")
    from . import asarray
    return [asarray(a) for a in arrays]


def _cast(tensors, dtype, op):
    if dtype is None:
        return tensors
    from . import astype
    return [astype(t, dtype) for t in tensors]


def _no_out(out, op):
    if out is not None:
        raise TypeError(f"{op}: out= is not supported; braze returns a new tensor")


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """NumPy's ``concatenate``; ``axis=None`` joins the flattened tensors."""
    _no_out(out, "concatenate")
    ts = _cast(_tensors(arrays, "concatenate"), dtype, "concatenate")
    if axis is None:
        ts, axis = [_core.reshape(t, [-1]) for t in ts], 0
    return _core._concatenate(ts, operator.index(axis))


def concat(arrays, /, *, axis=0):
    """The array API's name for ``concatenate``."""
    return concatenate(arrays, axis)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _no_out(out, "stack")
    return _core._stack(_cast(_tensors(arrays, "stack"), dtype, "stack"), operator.index(axis))


def _at_least(t, rank):
    """NumPy's atleast_1d/2d/3d: a vector becomes a row [1, n]; for 3-d,
    [n] -> [1, n, 1] and [m, n] -> [m, n, 1]."""
    if t.ndim >= rank:
        return t
    if rank == 1:
        return _core.reshape(t, [1])
    if rank == 2:
        return _core.reshape(t, [1, -1] if t.ndim == 1 else [1, 1])
    if t.ndim == 2:
        return _core.reshape(t, [*t.shape, 1])
    return _core.reshape(t, [1, t.size if t.ndim else 1, 1])


def atleast_1d(*arys):
    out = [_at_least(t, 1) for t in _tensors(arys, "atleast_1d")]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = [_at_least(t, 2) for t in _tensors(arys, "atleast_2d")]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = [_at_least(t, 3) for t in _tensors(arys, "atleast_3d")]
    return out[0] if len(out) == 1 else out


def hstack(tup, *, dtype=None, casting="same_kind"):
    ts = [_at_least(t, 1) for t in _tensors(tup, "hstack")]
    return concatenate(ts, 0 if ts and ts[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([_at_least(t, 2) for t in _tensors(tup, "vstack")], 0, dtype=dtype)


row_stack = vstack


def dstack(tup):
    return concatenate([_at_least(t, 3) for t in _tensors(tup, "dstack")], 2)


def column_stack(tup):
    ts = _tensors(tup, "column_stack")
    return concatenate([_core.reshape(t, [-1, 1]) if t.ndim < 2 else t for t in ts], 1)


def array_split(ary, indices_or_sections, axis=0):
    """NumPy's ``array_split``: lazy views. A number n gives n parts, the
    first ``len % n`` one longer; a list gives the cut points."""
    from . import asarray
    t = asarray(ary)
    if t.ndim == 0:
        raise ValueError("array_split: a zero-dimensional tensor cannot be split")
    axis = normalized_axis(axis, t.ndim, "array_split")
    n = t.shape[axis]
    if hasattr(indices_or_sections, "__len__"):
        cuts = [operator.index(i) for i in indices_or_sections]
        bounds = [0, *cuts, n]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"array_split: number sections must be larger than 0, not {sections}")
        each, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + each + (1 if i < extra else 0))
    lead = (slice(None),) * axis
    return [t[(*lead, slice(lo, hi))] for lo, hi in zip(bounds[:-1], bounds[1:])]


def split(ary, indices_or_sections, axis=0):
    """NumPy's ``split``: as array_split, but a number of sections must
    divide the axis."""
    if not hasattr(indices_or_sections, "__len__"):
        from . import asarray
        t = asarray(ary)
        sections = operator.index(indices_or_sections)
        ax = operator.index(axis)
        if t.ndim and -t.ndim <= ax < t.ndim and sections > 0 and t.shape[ax] % sections:
            raise ValueError(f"split: array split does not result in an equal division ({t.shape[ax]} "
                             f"along axis {ax} into {sections} sections)")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    from . import asarray
    t = asarray(ary)
    if t.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(t, indices_or_sections, 1 if t.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    from . import asarray
    t = asarray(ary)
    if t.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(t, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    from . import asarray
    t = asarray(ary)
    if t.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(t, indices_or_sections, 2)


__all__ = ["concatenate", "concat", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack",
         "atleast_1d", "atleast_2d", "atleast_3d", "array_split", "split", "hsplit", "vsplit", "dsplit"]
