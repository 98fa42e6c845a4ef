"""``bz.copyto``: new values into an existing tensor's storage, in place."""

import numpy as np

from . import _core, _views
from ._core import Tensor


def copyto(dst, src):
    """Writes ``src`` into ``dst``, NumPy's ``np.copyto(dst, src)`` for braze.

    ``dst`` is a realized tensor; its storage is overwritten, nothing is
    allocated (``bz.stats()["allocations"]`` does not move), so a loop that
    refreshes its input this way and writes its result with
    ``bz.jit(out=...)`` allocates nothing per iteration. ``src`` is a NumPy
    array (any strides) or a braze tensor, lazy or realized, of ``dst``'s
    dtype and of its shape or one that broadcasts to it; a Python number
    or list is converted to ``dst``'s dtype. On a device other than the
    CPU a NumPy source goes to the device in one transfer, still with no
    braze allocation. Everything that reads ``dst``
    from now on sees the new values, as in NumPy: arrays returned earlier
    by ``dst.numpy()`` and lazy tensors recorded on it.
    """
    if not isinstance(dst, Tensor):
        raise TypeError(f"copyto: dst must be a braze tensor, not {type(dst).__name__}")
    if _views.read_only(dst):
        raise ValueError("copyto: assignment destination is read-only (a broadcast view, or flags.writeable turned "
                         "off, as in NumPy)")
    if _views.tracked(dst):  # a view made by indexing: its base takes the values (python/braze/_views.py)
        if not dst.is_realized:
            dst.realize()
        _copy_into(dst, src)
        _views.after_update(dst)
        return
    _copy_into(dst, src)


def numpy_copyto(dst, src, casting="same_kind", where=True):
    """NumPy's ``np.copyto`` with a braze tensor among its arguments: its
    casting rule (``same_kind`` by default) and ``where=`` mask, into a
    braze tensor (a view made by indexing writes its base) or, from one,
    into a NumPy array."""
    if isinstance(dst, np.ndarray):  # NumPy's memory: the values now
        np.copyto(dst, _host_values(src), casting=casting, where=_host_values(where))
        return
    if not isinstance(dst, Tensor):
        raise TypeError(f"numpy.copyto: dst must be a braze tensor or a NumPy array, not {type(dst).__name__}")
    src_dtype = src.dtype if isinstance(src, Tensor) else np.asarray(src).dtype
    weak = isinstance(src, (bool, int, float))  # a Python number takes dst's type, as in NumPy
    if not weak and not np.can_cast(src_dtype, dst.dtype, casting=casting):
        raise TypeError(f"numpy.copyto: cannot cast from {src_dtype!r} to {dst.dtype!r} according to the rule "
                        f"{casting!r}")
    from . import asarray, where as select
    value = asarray(src).astype(dst.dtype) if not weak else asarray(src, dtype=dst.dtype)
    if where is not True:
        value = select(asarray(where), value, dst)
    copyto(dst, value)


def _host_values(x):
    return x.numpy() if isinstance(x, Tensor) else x


def _copy_into(dst, src):
    if isinstance(src, Tensor):
        _check(dst, src.dtype, src.shape)
        if src.shape != dst.shape:
            src = _core.broadcast_to(src, list(dst.shape))
        _core.assign([dst], [src])  # a realized src is copied; a lazy one is evaluated into dst
        return
    is_array = isinstance(src, (np.ndarray, np.generic)) or hasattr(src, "__array__")
    arr = np.asarray(src) if is_array else np.asarray(src, dtype=dst.dtype)
    _check(dst, arr.dtype, arr.shape)
    if dst.device != "cpu":
        # Device memory has no host view: the values, in dst's layout on the
        # host (NumPy makes that copy only when arr is not already it), go
        # to the device in one transfer into dst's own storage.
        full = np.ascontiguousarray(np.broadcast_to(arr, dst.shape))
        dst._upload(full.reshape(-1).view(np.uint8))
        return
    # A view of dst's own bytes; NumPy copies contiguous data with memcpy
    # and strided or broadcast data element by element, without a temporary.
    view = dst._writable_bytes().view(dst.dtype).reshape(dst.shape)
    np.copyto(view, arr, casting="no")


def _check(dst, dtype, shape):
    if np.dtype(dtype) != dst.dtype:
        raise ValueError(f"copyto: src is {np.dtype(dtype).name} but dst is {dst.dtype.name}; "
                         f"convert it first (src.astype(...)), copyto does not cast")
    try:
        broadcast = np.broadcast_shapes(tuple(shape), tuple(dst.shape))
    except ValueError:
        broadcast = None
    if broadcast != tuple(dst.shape):
        raise ValueError(f"copyto: src of shape {tuple(shape)} does not broadcast to dst's shape {tuple(dst.shape)}")


def write_out(result, out, op, casting="unsafe"):
    """NumPy's ``out=``: ``result`` written into the braze tensor ``out``
    (or a 1-tuple of one, as ufuncs pass it) with ``copyto``, cast to its
    dtype as NumPy casts into an ``out``: any cast for a reduction, only a
    ``same_kind`` one for a ufunc (``casting``), else a ``TypeError`` as
    NumPy's; returns ``out``, or ``result`` where ``out`` is None. A lazy
    ``out`` is realized first, to have storage to write into."""
    if out is None:
        return result
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if isinstance(target, np.ndarray):
        # A NumPy array as out (ndarray += tensor, np.add(a, t, out=a)):
        # NumPy's memory, so the values are computed now and written there,
        # cast as a ufunc casts into its out (same_kind); NumPy's own error
        # where it would refuse (a read-only array, a shape it cannot take).
        try:
            np.copyto(target, result.numpy(), casting="same_kind")
        except (TypeError, ValueError) as e:
            raise type(e)(f"{op}: writing into the NumPy array given as out=: {e}") from None
        return target
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: out= must be a braze tensor or a NumPy array (it is written in place), not "
                        f"{type(target).__name__}")
    if casting == "same_kind" and not np.can_cast(result.dtype, target.dtype, casting="same_kind"):
        raise TypeError(f"{op}: cannot cast the output from {result.dtype!r} to {target.dtype!r} with casting "
                        "rule 'same_kind' (NumPy's rule for an out=)")
    if not target.is_realized:
        target.realize()
    copyto(target, result if result.dtype == target.dtype else _core.astype(result, target.dtype.name))
    _views.after_update(target)  # an out= that is a view writes its base, as in NumPy
    return target
