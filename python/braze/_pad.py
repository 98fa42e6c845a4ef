"""NumPy's ``pad``, lazily: padding is a view (Note [Windows] in
graph/shape.h), so ``np.pad(u, 1)`` copies nothing and a stencil over it
(``p[:-2, 1:-1] + p[2:, 1:-1] + ...``) is one kernel that loads ``u``
under a mask.

- ``constant``: zeros are the view itself (``_core._pad``); another value
  is a select on each axis's index (``where(i < before, value, ...)``),
  axis after axis as NumPy fills them, so a corner takes the last axis's
  value as in NumPy.
- ``edge``, ``reflect``, ``symmetric``, ``wrap``: per axis, the pieces
  (slices, flips and broadcasts of the array: views) placed side by side
  along it, each padded to the whole length, and chosen by index: a lazy
  concatenation, one kernel with the array's reads masked.
"""

import operator

import numpy as np

from . import _core


def _bz():
    import braze
    return braze


def _pairs(width, rank, what):
    """NumPy's forms of pad_width (and of constant_values): a number, a
    (before, after) pair, or one pair per axis."""
    a = np.asarray(width, dtype=object)
    if a.ndim == 0:
        return [(width, width)] * rank
    if a.shape == (1,):
        return [(width[0], width[0])] * rank
    if a.shape in ((2,), (1, 2)):
        pair = tuple(a.reshape(2))
        return [pair] * rank
    if a.shape == (rank, 1):
        return [(row[0], row[0]) for row in width]
    if a.shape == (rank, 2):
        return [tuple(row) for row in width]
    raise ValueError(f"pad: {what} {width!r} cannot broadcast to ({rank}, 2) for an array of rank {rank}")


def _widths(pad_width, rank):
    out = []
    for before, after in _pairs(pad_width, rank, "pad_width"):
        try:
            b, a = operator.index(before), operator.index(after)
        except TypeError:
            raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}") from None
        if b < 0 or a < 0:
            raise ValueError(f"pad: index can't contain negative values, got {pad_width!r}")
        out.append((b, a))
    return out


def _index(t, axis):
    """The index along `axis`, broadcastable against t (an arange view)."""
    shape = [1] * t.ndim
    shape[axis] = t.shape[axis]
    return _core.reshape(_bz().arange(0, t.shape[axis], 1, "int64" if t.shape[axis] >= 2**31 else "int32",
                                      device=t.device), shape)


def _along(t, axis, start, stop, step=1):
    items = [slice(None)] * t.ndim
    items[axis] = slice(start, stop, step)
    return t[tuple(items)]


def _broadcast_along(t, axis, start, length):
    """t's slice [start, start + 1) along `axis`, repeated `length` times."""
    shape = list(t.shape)
    shape[axis] = length
    return _core.broadcast_to(_along(t, axis, start, start + 1), shape)


def _pieces(n, before, after, mode):
    """Along one axis of length n: the pieces of the padded axis, in order,
    each (a view of the array along that axis, its length), or None where
    the mode mirrors the padded array itself (a reflection wider than the
    array: NumPy's repeated mirroring, done axis by axis instead)."""
    whole = (lambda t, ax: t, n)
    if mode == "edge":
        return [(lambda t, ax: _broadcast_along(t, ax, 0, before), before), whole,
                (lambda t, ax: _broadcast_along(t, ax, n - 1, after), after)]
    if mode == "wrap":  # the array's tail before it, its head after it, repeated as often as the width asks
        left, need = [], before
        while need > 0:
            k = min(need, n)
            left.insert(0, ((lambda k: lambda t, ax: _along(t, ax, n - k, n))(k), k))
            need -= k
        right, need = [], after
        while need > 0:
            k = min(need, n)
            right.append(((lambda k: lambda t, ax: _along(t, ax, 0, k))(k), k))
            need -= k
        return left + [whole] + right
    edge = 0 if mode == "symmetric" else 1  # reflect leaves the edge element out of the mirror
    if before > n - edge or after > n - edge:
        return None
    return [(lambda t, ax: _along(_along(t, ax, edge, edge + before), ax, None, None, -1), before), whole,
            (lambda t, ax: _along(_along(t, ax, n - edge - after, n - edge), ax, None, None, -1), after)]


# Blocks one kernel selects among: 3 per axis (before, the array, after)
# for up to three axes. Past it (wraps repeated many times, four padded
# axes) each block's masks and loads stop fitting the vector registers, so
# the axes are padded one after another instead, each written out.
_MAX_BLOCKS = 27


def _tiled(t, per_axis):
    """The padded array as blocks: one per combination of the axes' pieces,
    each a view of t padded with zeros to the whole shape (so a view of
    t's buffer, Note [Windows]), chosen by selects on each axis's index.
    Every block reads t itself, so the result is one kernel."""
    lengths = [[k for _, k in pieces] for pieces in per_axis]
    starts = [np.concatenate([[0], np.cumsum(ls)[:-1]]).astype(int).tolist() for ls in lengths]
    totals = [sum(ls) for ls in lengths]

    def block(combo):
        v = t
        for ax, k in enumerate(combo):
            v = per_axis[ax][k][0](v, ax)
        before = [starts[ax][k] for ax, k in enumerate(combo)]
        after = [totals[ax] - starts[ax][k] - lengths[ax][k] for ax, k in enumerate(combo)]
        return _core._pad(v, before, after)

    return _select((), t.ndim, lengths, starts, block)


def _select(prefix, ndim, lengths, starts, block):
    """The blocks under `prefix` (a piece per leading axis) joined by
    selects along the next axis. A module function, not a closure that
    calls itself: that reference cycle would hold t until Python's cyclic
    collector ran, and a held lazy tensor is kept by the next realize
    (Note [Held values are kept])."""
    ax = len(prefix)
    if ax == ndim:
        return block(prefix)
    result = None
    for k, length in enumerate(lengths[ax]):
        if length == 0:
            continue
        part = _select(prefix + (k,), ndim, lengths, starts, block)
        result = part if result is None else _core.where(_index(part, ax) < starts[ax][k], result, part)
    return result


def _mirror(t, axis, before, after, symmetric):
    """reflect and symmetric wider than the array: NumPy mirrors the padded
    array again, chunk by chunk; so here, each chunk placed beside it."""
    edge = 0 if symmetric else 1
    while before > 0 or after > 0:
        n = t.shape[axis]
        room = n - edge  # how much one mirroring can give
        if room <= 0:  # a single element reflected: NumPy repeats it
            return _tiled(t, [_pieces(n, before, after, "edge") if ax == axis else [(lambda t, ax: t, t.shape[ax])]
                              for ax in range(t.ndim)])
        b, a = min(before, room), min(after, room)
        pieces = [_along(_along(t, axis, edge, edge + b), axis, None, None, -1) if b else None, t,
                  _along(_along(t, axis, n - edge - a, n - edge), axis, None, None, -1) if a else None]
        t = _bz().concatenate([p for p in pieces if p is not None], axis=axis)  # lazy: Note [Lazy concatenation]
        before, after = before - b, after - a
    return t


def pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's ``pad`` for modes ``constant`` (``constant_values``),
    ``edge``, ``reflect`` and ``symmetric`` (``reflect_type="even"``),
    ``wrap`` and ``empty`` (zeros); lazy (see the module's docstring).
    Another mode, a callable, or ``reflect_type="odd"`` is a TypeError."""
    bz = _bz()
    t = bz.asarray(array)
    if t.ndim == 0:
        raise ValueError("pad: a 0-d array has no axis to pad")
    widths = _widths(pad_width, t.ndim)
    if callable(mode) or mode not in ("constant", "edge", "reflect", "symmetric", "wrap", "empty"):
        raise TypeError(f"pad: mode {mode!r} is not supported by braze (constant, edge, reflect, symmetric, wrap, "
                        "empty)")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}
    extra = set(kwargs) - allowed.get(mode, set())
    if extra:
        raise ValueError(f"pad: unsupported keyword arguments for mode '{mode}': {sorted(extra)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise TypeError("pad: reflect_type='odd' is not supported by braze")
    if mode in ("constant", "empty"):
        zeros = _core._pad(t, [b for b, _ in widths], [a for _, a in widths])
        values = _pairs(kwargs.get("constant_values", 0), t.ndim, "constant_values")
        if all(not isinstance(v, _core.Tensor) and v == 0 and not np.signbit(v) for pair in values for v in pair):
            return zeros
        out = zeros
        for axis, ((b, a), (vb, va)) in enumerate(zip(widths, values)):
            i = _index(out, axis)
            n = t.shape[axis]
            fill_b = bz.full([], vb, t.dtype, device=t.device) if not isinstance(vb, _core.Tensor) else bz.astype(vb, t.dtype)
            fill_a = bz.full([], va, t.dtype, device=t.device) if not isinstance(va, _core.Tensor) else bz.astype(va, t.dtype)
            if b:
                out = _core.where(i < b, fill_b, out)
            if a:
                out = _core.where(i >= b + n, fill_a, out)
        return out
    for ax, (b, a) in enumerate(widths):
        if (b or a) and t.shape[ax] == 0:
            raise ValueError(f"pad: can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
    per_axis = [_pieces(t.shape[ax], b, a, mode) if (b or a) else [(lambda t, ax: t, t.shape[ax])]
                for ax, (b, a) in enumerate(widths)]
    if all(p is not None for p in per_axis) and np.prod([len(p) for p in per_axis]) <= _MAX_BLOCKS:
        return _tiled(t, per_axis)
    out = t  # a mirror wider than the array: axis by axis, each axis's result written out for the next
    for ax, (b, a) in enumerate(widths):
        if b or a:
            pieces = _pieces(out.shape[ax], b, a, mode)
            if pieces is None:
                out = _mirror(out, ax, b, a, symmetric=mode == "symmetric")
            else:
                out = _tiled(out, [pieces if d == ax else [(lambda t, d: t, out.shape[d])] for d in range(out.ndim)])
    return out


__all__ = ["pad"]
