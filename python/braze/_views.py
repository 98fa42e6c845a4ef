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

Only basic indexing makes views here, as in NumPy (integers, slices,
``None``, ``...``); an index array or a mask gives a copy, and indexing
every axis with an integer gives a scalar in NumPy, which writes to
nothing. Views made by ``reshape``, ``transpose`` and the other movement
functions stay read-only (a write raises, naming the way around it).
"""

import numbers
import weakref

from ._core import Tensor

# id(view) -> (weak reference to the view, its base, the key that made it).
# The view holds its base, as a NumPy view holds ``.base``.
_base_of = {}
# id(base) -> {id(view): weak reference}: the base's live views.
_views_of = {}


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


def _track(view, base, key):
    vid, bid = id(view), id(base)
    ref = weakref.ref(view, _forget)
    _ref_ids[id(ref)] = (vid, bid)
    _base_of[vid] = (ref, base, key)
    views = _views_of.get(bid)
    if views is None:
        views = _views_of[bid] = {}
    views[vid] = ref


def tracked(t):
    """Whether t is a view that writes through to its base."""
    return id(t) in _base_of


def after_update(t):
    """t has a new value (an in-place update): a view passes it to its
    base, whose update makes its views again; a base makes its views again."""
    link = _base_of.get(id(t))
    if link is not None:
        _, base, key = link
        base[key] = t  # the base's own update, which then makes t (and its siblings) again
        return
    _remake_views(t)


def _remake_views(base):
    for vid, ref in list(_views_of.get(id(base), {}).items()):
        view = ref()
        if view is None:
            continue
        view._rebind(_plain_getitem(base, _base_of[vid][2]))
        _remake_views(view)


_plain_getitem = None  # Tensor.__getitem__ as installed before this module


def _getitem(self, key):
    result = _plain_getitem(self, key)
    if isinstance(result, Tensor) and result is not self and _makes_view(self, key):
        _track(result, self, key)
    return result


def install():
    global _plain_getitem
    _plain_getitem = Tensor.__getitem__
    Tensor.__getitem__ = _getitem
