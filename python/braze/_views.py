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


def _basic(key):
    """The items of key if it is basic indexing (a view in NumPy), else None."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if not (k is None or k is Ellipsis or isinstance(k, slice) or
                (isinstance(k, numbers.Integral) and not isinstance(k, bool))):
            return None
    return items


def _makes_view(t, key):
    items = _basic(key)
    if items is None:
        return False
    # Every axis taken by an integer: NumPy gives a scalar, not a view.
    return not (len(items) == t.ndim and all(isinstance(k, numbers.Integral) for k in items))


def _track(view, base, key):
    vid, bid = id(view), id(base)

    def forget(_ref):
        _base_of.pop(vid, None)
        views = _views_of.get(bid)
        if views is not None:
            views.pop(vid, None)
            if not views:
                _views_of.pop(bid, None)

    ref = weakref.ref(view, forget)
    _base_of[vid] = (ref, base, key)
    _views_of.setdefault(bid, {})[vid] = ref


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
