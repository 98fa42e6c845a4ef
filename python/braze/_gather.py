"""Indexing whose result depends on the values: NumPy's advanced indexing
(``x[index_array]``, ``x[mask]``), ``take``, ``take_along_axis`` and
``nonzero``; and the index arithmetic ``unravel_index`` and
``ravel_multi_index``.

braze has no gather op yet, so these realize their operands (one program)
and let NumPy pick the elements, returning a realized tensor: the cost
NumPy's own indexing has, and a point where recording stops (as a
concatenation of many parts, Note [Concatenation realizes]). A mask's result has a shape
only the values decide, so it could not be recorded lazily anyway.
"""

import numpy as np

from . import _core
from ._core import Tensor


def _host(t, op):
    if t.device != "cpu":
        raise TypeError(f"{op}: tensors on {t.device} are not supported yet (move with .to('cpu'))")
    return t.numpy()


def _realized(*ts):
    pending = [t for t in ts if isinstance(t, Tensor) and not t.is_realized]
    if pending:
        _core.realize(pending)


def _key_arrays(key, op):
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(_host(k, op) if isinstance(k, Tensor) else k for k in items)
    return out if isinstance(key, tuple) else out[0]


def advanced_getitem(x, key):
    """x[key] where key holds index arrays or masks (NumPy's rules)."""
    _realized(x, *(key if isinstance(key, tuple) else (key,)))  # one program for all
    arr = _host(x, "indexing")
    k = _key_arrays(key, "indexing")
    try:
        result = arr[k]
    except IndexError as e:
        raise IndexError(f"indexing: {e} (tensor of shape {list(x.shape)})") from None
    return _as_tensor(result)


def _as_tensor(arr):
    from . import asarray
    arr = np.asarray(arr)
    return asarray(arr if arr.flags.c_contiguous else arr.copy())  # (ascontiguousarray makes a 0-d array 1-d)


def take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None or mode != "raise":
        raise TypeError("take: out= and mode= other than 'raise' are not supported")
    from . import asarray
    x = asarray(a)
    _realized(x, indices)
    idx = _host(indices, "take") if isinstance(indices, Tensor) else np.asarray(indices)
    try:
        return _as_tensor(np.take(_host(x, "take"), idx, axis=axis))
    except IndexError as e:
        raise IndexError(f"take: {e}") from None


def take_along_axis(arr, indices, axis=-1):
    from . import asarray
    x = asarray(arr)
    _realized(x, indices)
    idx = _host(indices, "take_along_axis") if isinstance(indices, Tensor) else np.asarray(indices)
    return _as_tensor(np.take_along_axis(_host(x, "take_along_axis"), idx, axis=axis))


def nonzero(a):
    from . import asarray
    x = asarray(a)
    _realized(x)
    return tuple(_as_tensor(i) for i in np.nonzero(_host(x, "nonzero")))


def argwhere(a):
    from . import asarray
    x = asarray(a)
    _realized(x)
    return _as_tensor(np.argwhere(_host(x, "argwhere")))


def flatnonzero(a):
    from . import asarray
    x = asarray(a)
    _realized(x)
    return _as_tensor(np.flatnonzero(_host(x, "flatnonzero")))


def unravel_index(indices, shape, order="C"):
    """NumPy's, on the realized indices (index arithmetic: NumPy computes
    it); a tuple of tensors."""
    _realized(indices)
    return tuple(_as_tensor(i) for i in np.unravel_index(_key_arrays(indices, "unravel_index"), shape, order=order))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    _realized(*multi_index)
    return _as_tensor(np.ravel_multi_index(_key_arrays(tuple(multi_index), "ravel_multi_index"), dims, mode=mode,
                                           order=order))


_basic_getitem = Tensor.__getitem__


def _getitem(self, key):
    try:
        return _basic_getitem(self, key)  # integers, slices, None, ...: a lazy view
    except TypeError as e:
        if "advanced indexing" not in str(e):
            raise
    return advanced_getitem(self, key)


def install():
    Tensor.__getitem__ = _getitem


__all__ = ["take", "take_along_axis", "nonzero", "argwhere", "flatnonzero", "unravel_index", "ravel_multi_index"]
