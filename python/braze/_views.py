"""Views that write through to their base, as NumPy's.

In NumPy, ``c = a[1:-1]`` shares a's memory: ``c[:] = v`` (and ``c += 1``,
``np.add(x, y, out=c)``) changes ``a``, and every other view of ``a``
sees the change; ``a[i][j] = v`` works for the same reason. A braze
tensor is a handle on a node of the lazy graph, and an in-place update
gives the handle a new node (Note [In-place updates], bind_tensor.cpp), so
sharing memory cannot carry the change by itself. This module carries it
explicitly: a view made by basic indexing remembers its base and its key;
when the view is written, its new values are written into the base at
that key (through the base's own in-place update, so a view of a view
reaches the first base), and when a base gets a new value, each of its
live views is made again from it (``base[key]``, a lazy view), and theirs
in turn. So every name sees what NumPy would show.

Basic indexing makes views (integers, slices, ``None``, ``...``), as in
NumPy; an index array or a mask gives a copy, and indexing every axis with
an integer gives a scalar in NumPy, which writes to nothing. So do the
movement functions NumPy makes views with: transposes (``.T``, ``.mT``,
``transpose``, ``permute_dims``, ``swapaxes``, ``moveaxis``, ...),
``squeeze``, ``expand_dims``, and ``reshape``/``ravel`` where NumPy's is a
view (always of a contiguous tensor; of a view, where its strides allow:
layout() asks NumPy). A view made by a movement function writes back
through the positions it reads: the same function applied to the base's
flat indices. What NumPy returns as a new array (``flatten``, ``tile``,
``repeat``, ``pad``, a reshape that copies, ...) is a tensor of its own,
even where braze computes it as a view, and a write changes it alone.
``broadcast_to`` and ``broadcast_arrays`` give read-only views, as
NumPy's: a write raises ValueError.
"""

import builtins
import numbers
import weakref

import numpy as np

from . import _core
from ._core import Tensor

# Note [Views hold realized bases]
# id(view) -> (weak reference to the view, a call that gives its base, how
# it was made: the key of basic indexing, or a _Movement). A view holds a
# realized base, as a NumPy view holds ``.base``, so that a write through
# it reaches the base's other views even once no name is bound to the
# base; and a base that is itself a view (``a.T[1:]``), which is lazy but
# never stored. A lazy base that is a computed value it does not hold: a
# lazy value something holds is stored beside what a realize computes
# (Note [Held values are kept] in runtime/lower.h), and
# ``(x @ w).reshape(b, t, h, d)`` must not keep the product as a result,
# which would take the epilogue out of the library call. Once such a base
# is gone the view is a tensor of its own, and a sibling view no longer
# sees its writes (NumPy's would).
_base_of = {}
# id(base) -> {id(view): weak reference}: the base's live views.
_views_of = {}
# id(weak reference to a lazy base) -> id(base): what to forget when it goes.
_base_ids = {}


def _makes_view(t, key):
    """Whether t[key] is a view in NumPy: basic indexing (integers, slices,
    None, ...) that does not take every axis with an integer (a scalar)."""
    kind = type(key)
    if kind is slice or key is None or key is Ellipsis:
        return True
    items = key if kind is tuple else (key,)
    integers = 0
    for k in items:
        if type(k) is slice or k is None or k is Ellipsis:
            continue
        if type(k) is int or (isinstance(k, numbers.Integral) and not isinstance(k, bool)):
            integers += 1
        else:
            return False  # an index array, a mask, a tensor: a copy in NumPy
    return integers != len(items) or integers != t.ndim


# id(weak reference) -> (id(view), id(base)): what to forget when the view goes.
_ref_ids = {}


def _forget(ref):
    vid, bid = _ref_ids.pop(id(ref))
    _base_of.pop(vid, None)
    views = _views_of.get(bid)
    if views is not None:
        views.pop(vid, None)
        if not views:
            del _views_of[bid]


def _base_gone(ref):
    _views_of.pop(_base_ids.pop(id(ref)), None)


def _track(view, base, key):
    vid, bid = id(view), id(base)
    if vid in _base_of:
        return  # a movement function made of another (swapaxes of permute_dims): the inner one tracked it
    ref = weakref.ref(view, _forget)
    _ref_ids[id(ref)] = (vid, bid)
    if base.is_realized or bid in _base_of:  # stored values, or a view (never kept)
        base_ref = (lambda: base)
    else:
        base_ref = weakref.ref(base, _base_gone)
        _base_ids[id(base_ref)] = bid
    _base_of[vid] = (ref, base_ref, key)
    if bid in _read_only:  # a view of a read-only tensor is read-only, as in NumPy
        set_read_only(view, True, _read_only[bid][1])
    views = _views_of.get(bid)
    if views is None:
        views = _views_of[bid] = {}
    views[vid] = ref


def base_of(t):
    """(base, key) of a view that writes through to a live base, else None."""
    link = _base_of.get(id(t))
    if link is None:
        return None
    base = link[1]()
    return None if base is None else (base, link[2])


def has_views(t):
    """Whether views made of t are alive."""
    return builtins.any(ref() is not None for ref in _views_of.get(id(t), {}).values())


def tracked(t):
    """Whether t is a view that writes through to its base."""
    return base_of(t) is not None


def after_update(t):
    """t has a new value (an in-place update): a view passes it to its
    base, whose update makes its views again; a base makes its views again."""
    link = base_of(t)
    if link is not None:
        base, key = link
        # The base's own update, which then makes t (and its siblings) again.
        if isinstance(key, _Movement):
            key.write_back(base, t)
        else:
            base[key] = t
        return
    _remake_views(t)


def _remake_views(base):
    for vid, ref in list(_views_of.get(id(base), {}).items()):
        view = ref()
        if view is None:
            continue
        key = _base_of[vid][2]
        view._rebind(key.make(base) if isinstance(key, _Movement) else _plain_getitem(base, key))
        _remake_views(view)


_plain_getitem = None  # Tensor.__getitem__ as installed before this module


def _getitem(self, key):
    result = _plain_getitem(self, key)
    if isinstance(result, Tensor) and result is not self and _makes_view(self, key):
        _track(result, self, key)
    return result


class _Movement:
    """How a movement view was made: fn(base, *args) in braze (fn
    unwrapped), and the same call on a NumPy array."""

    def __init__(self, fn, on_numpy, args, kwargs):
        self.fn, self.on_numpy, self.args, self.kwargs = fn, on_numpy, args, kwargs

    def make(self, base):
        return self.fn(base, *self.args, **self.kwargs)

    def numpy(self, array):
        return self.on_numpy(array, *self.args, **self.kwargs)

    def write_back(self, base, view):
        """base's elements that `view` reads take its values: the positions
        are this movement applied to base's flat indices."""
        if base.ndim == 0:
            base[...] = _core.reshape(view, [])
            return
        positions = self.numpy(np.arange(base.size, dtype=np.int64).reshape(base.shape)).reshape(-1)
        base[np.unravel_index(positions, base.shape)] = _core.reshape(view, [-1])


class _Reinterpret(_Movement):
    """x.view(dtype): x's bytes read as dtype (fn, realized: bits are not an
    op of the graph). Written back the same way, the view's bytes read as
    the base's dtype."""

    def write_back(self, base, view):
        base[...] = _plain_reshape(self.fn(view, base.dtype), list(base.shape))


def reinterpreted(x, dtype):
    """ndarray.view(dtype): x's memory read as dtype, a view that writes
    through both ways, as NumPy's."""
    result = _reinterpret(x, dtype)
    _track(result, x, _Reinterpret(_reinterpret, lambda a, d: a.view(d), (dtype,), {}))
    return result


def _reinterpret(x, dtype):
    from . import _as_dtype, asarray  # a cycle: braze imports this module
    return asarray(x.numpy().view(_as_dtype(dtype)), device=x.device)


def numpy_view(array, key):
    """The view the key of a tracked view makes of a NumPy array of its
    base's shape (python/braze/_rearranging.py's overlap tests)."""
    return key.numpy(array) if isinstance(key, _Movement) else array[key]


def root_of(t):
    """The first base of t's chain of write-through views, and the keys
    from it to t."""
    keys = []
    while (link := base_of(t)) is not None:
        t, key = link
        keys.append(key)
    return t, keys[::-1]


def c_layout(t):
    """A NumPy array of t's shape and dtype in C order over no memory of its
    own (strides over one element): NumPy's answers about memory (overlaps,
    strides, whether a reshape can be a view) read only bounds and strides.
    Never read its values."""
    strides, step = [], t.dtype.itemsize
    for d in reversed(t.shape):
        strides.append(step)
        step *= d
    return np.lib.stride_tricks.as_strided(np.zeros(1, t.dtype), tuple(t.shape), tuple(reversed(strides)),
                                           writeable=False)


def viewed(memory, keys):
    for key in keys:
        memory = numpy_view(memory, key)
    return memory


def layout(t):
    """t's shape and strides as NumPy's, were t's first base an ndarray in C
    order (a view's own strides): c_layout's kind of array."""
    root, keys = root_of(t)
    return viewed(c_layout(root), keys)


_plain_reshape = _plain_transpose = None  # _core's, as installed before this module


def _reshaped(x, shape, order):
    if order == "F":  # NumPy's F order: the reversed axes in C order
        return _plain_transpose(_plain_reshape(_plain_transpose(x, None), list(shape)[::-1]), None)
    return _plain_reshape(x, list(shape))


def reshape(x, shape, order="C"):
    """NumPy's reshape: a view where NumPy's is one (its strides allow,
    layout() asks NumPy without reading memory), else a tensor of its own."""
    if order not in ("C", "F"):
        raise TypeError(f"reshape: order={order!r} is not supported (only 'C' and 'F')")
    shape = [shape] if isinstance(shape, numbers.Integral) else list(shape)
    result = _reshaped(x, shape, order)
    if isinstance(x, Tensor) and result is not x:
        if order == "F" or id(x) in _base_of:  # else C order of C order: a view
            try:
                np.reshape(layout(x), shape, order=order, copy=False)  # raises where NumPy's would copy
            except ValueError:
                return result
        _track(result, x, _Movement(_reshaped, lambda a, s, o: np.reshape(a, s, order=o), (shape, order), {}))
    return result


def reshape_plain(x, shape):
    """_core's reshape: a value, not a view that writes through."""
    return _plain_reshape(x, shape)


def _reshape_method(self, *shape, order="C"):
    return reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], numbers.Integral) else shape,
                   order)


def _wrapping(wrapper, fn):
    """wrapper with fn's name, doc and signature (inspect follows
    __wrapped__; the array API's tests read the signatures). Not
    functools.wraps: a nanobind function's __qualname__ is no string."""
    wrapper.__name__, wrapper.__doc__, wrapper.__wrapped__ = fn.__name__, fn.__doc__, fn
    return wrapper


# id(tensor) -> (weak reference, whether a broadcast made it): read-only
# tensors, as NumPy's broadcast views and arrays whose flags.writeable was
# turned off (and the views made of them).
_read_only = {}


def read_only(t):
    return id(t) in _read_only


def set_read_only(t, on, broadcast=False):
    if not on:
        if _read_only.get(id(t), (None, False))[1]:
            raise ValueError("cannot set WRITEABLE flag to True of this array (a broadcast view, as NumPy's)")
        _read_only.pop(id(t), None)
    elif id(t) not in _read_only:
        _read_only[id(t)] = (weakref.ref(t, lambda _, tid=id(t): _read_only.pop(tid, None)), broadcast)


def read_only_results(fn):
    """fn, whose results (a tensor or a list of them) are read-only views."""
    def broadcast(*args, **kwargs):
        result = fn(*args, **kwargs)
        views = result if isinstance(result, (list, tuple)) else [result]
        for v in views:
            if isinstance(v, Tensor):
                set_read_only(v, True, broadcast=True)
        return result

    return _wrapping(broadcast, fn)


# The movement functions whose results are views in NumPy, as users call
# them: the tensor's methods and properties, and braze's functions (which
# NumPy's __array_function__ also hands to). braze's own code calls
# _core's, untracked: its intermediates are nobody's views.
_METHODS = ("transpose", "squeeze")
_PROPERTIES = ("T", "mT")
FUNCTIONS = ("transpose", "permute_dims", "matrix_transpose", "squeeze", "expand_dims", "swapaxes", "moveaxis",
             "rollaxis", "rot90")


def tracking(fn, on_numpy):
    """fn (braze's movement function: fn(x, ...)), whose result is a view of x
    that writes through to it, as on_numpy's (the same call in NumPy)."""
    def movement(x, *args, **kwargs):
        result = fn(x, *args, **kwargs)
        if isinstance(x, Tensor) and result is not x and isinstance(result, Tensor):
            _track(result, x, _Movement(fn, on_numpy, args, kwargs))
        return result

    return _wrapping(movement, fn)


def install():
    global _plain_getitem, _plain_reshape, _plain_transpose
    _plain_getitem = Tensor.__getitem__
    Tensor.__getitem__ = _getitem
    _plain_reshape, _plain_transpose = _core.reshape, _core.transpose
    Tensor.reshape = _reshape_method
    flatten = Tensor.flatten  # a tensor of its own, as NumPy's copy
    Tensor.flatten = lambda self, order="C": flatten(_plain_transpose(self, None) if order == "F" else self)
    for name in _METHODS:
        setattr(Tensor, name, tracking(getattr(Tensor, name),
                                        lambda a, *args, name=name, **kw: getattr(a, name)(*args, **kw)))
    for name in _PROPERTIES:
        setattr(Tensor, name, property(tracking(getattr(Tensor, name).fget, lambda a, name=name: getattr(a, name))))
    Tensor.base = property(lambda self: (base_of(self) or (None,))[0],
                           doc="the tensor this view writes through to, as ndarray.base (None: not a view)")
