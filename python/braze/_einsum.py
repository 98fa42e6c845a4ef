"""NumPy's ``einsum``, ``kron`` and ``cross``, built from braze's lazy ops.

``einsum`` is lowered, once its subscripts are read, to ops braze already
has, so it stays lazy and fuses with what surrounds it:

- an index repeated within one operand (``'ii->i'``, ``'ii'``) is a
  diagonal: ``bz.diagonal``, a view;
- an index of one operand that is neither in the output nor in another
  operand is summed there first (``bz.sum``), before any product is formed;
- each pairwise contraction is a transpose, a reshape and one ``matmul``:
  the indices both operands keep are its batch axes, the ones each keeps
  alone its M and N, the contracted ones folded into K; a library call
  (oneDNN, cuBLAS), as ``tensordot``. A pair with nothing to contract
  (``'i,j->ij'``, ``'i,i->i'``) is a broadcast multiply, one fused kernel;
  dot products (``'i,i'``, ``'bij,bij->b'``) and batched matrix-vector
  products (``'bij,bj->bi'``) are a multiply and a sum, one fused
  reduction, which measured 4 to 18 times faster than the library's
  matmul of those shapes.

Operands are contracted greedily, deterministically: among the pairs that
share an index (all pairs where none does) the one whose result is
smallest, ties to the leftmost. Integers, bools and float16 (which the
matmul library does not run here: it would take the reference interpreter,
with a warning) contract as a broadcast multiply and a sum in their own
dtype, as NumPy accumulates in it.

Broadcasting is NumPy's: ``...`` stands for the same trailing axes in every
operand (right-aligned, size 1 broadcasting), and an index of size 1 in one
operand broadcasts against its size in the others (that operand is read
with the axis dropped).
"""

import math
import operator
import warnings

import numpy as np

from . import _core
from ._copyto import write_out
from ._numpy_functions import _pair, _t, diagonal, moveaxis, normalized_axis

__all__ = ["einsum", "kron", "cross"]
FUNCTIONS = __all__

# The dtypes whose matmul the library runs (the others take the reference
# interpreter): contractions in them are matmuls, the rest multiply and sum.
_MATMUL_DTYPES = ("float32", "float64", "bfloat16")


def _bz():
    import braze
    return braze


# --- subscripts ----------------------------------------------------------------------------


def _letter(c):
    return c.isascii() and c.isalpha()


def _read_term(term, subscripts, what):
    """One operand's (or the output's) subscripts: its letters and where its
    ellipsis stands among them (None without one)."""
    letters, ellipsis, i = [], None, 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "...":
                raise ValueError(f"einsum: subscripts {subscripts!r}: {what} has a '.' that is not part of an "
                                 "ellipsis ('...')")
            if ellipsis is not None:
                raise ValueError(f"einsum: subscripts {subscripts!r}: {what} has more than one ellipsis ('...')")
            ellipsis, i = len(letters), i + 3
            continue
        if not _letter(c):
            raise ValueError(f"einsum: subscripts {subscripts!r}: invalid subscript {c!r} in {what}; subscripts "
                             "must be letters (a-z, A-Z)")
        letters.append(c)
        i += 1
    return letters, ellipsis


def _label_name(label):
    return chr(label) if label >= 0 else f"... axis {label}"


def _parse(subscripts, shapes):
    """Labels for each operand's axes and for the output's. A letter is its
    code; the axes an ellipsis covers are -k, ..., -1 (right-aligned, so
    that they broadcast as NumPy's do)."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        inputs, output = s.split("->", 1)
        if "->" in output:
            raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    else:
        inputs, output = s, None
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s), but {len(shapes)} "
                         f"were given (shapes {[list(sh) for sh in shapes]})")
    labels, widest = [], 0
    for n, (term, shape) in enumerate(zip(terms, shapes)):
        letters, ell = _read_term(term, subscripts, f"operand {n}")
        spare = len(shape) - len(letters)
        if spare < 0 or (ell is None and spare != 0):
            raise ValueError(f"einsum: subscripts {subscripts!r}: operand {n} has {len(shape)} axes (shape "
                             f"{list(shape)}) but its subscripts {term!r} name {len(letters)}"
                             + ("" if ell is not None else " and no '...' for the rest"))
        codes = [ord(c) for c in letters]
        if ell is not None:
            codes[ell:ell] = list(range(-spare, 0))
            widest = max(widest, spare)
        labels.append(codes)
    if output is None:  # implicit: the broadcast axes, then every letter seen once, in character order
        counts = {}
        for codes in labels:
            for c in codes:
                counts[c] = counts.get(c, 0) + 1
        out = list(range(-widest, 0)) + sorted(c for c, k in counts.items() if c >= 0 and k == 1)
        return labels, out
    letters, ell = _read_term(output, subscripts, "the output")
    seen = {c for codes in labels for c in codes}
    for i, c in enumerate(letters):
        if c in letters[:i]:
            raise ValueError(f"einsum: subscripts {subscripts!r}: the output names {c!r} more than once")
        if ord(c) not in seen:
            raise ValueError(f"einsum: subscripts {subscripts!r}: the output names {c!r}, which no operand has")
    out = [ord(c) for c in letters]
    if ell is not None:
        out[ell:ell] = list(range(-widest, 0))
    elif widest:
        raise ValueError(f"einsum: subscripts {subscripts!r}: the operands have axes under '...' (shapes "
                         f"{[list(sh) for sh in shapes]}) but the output has no '...' to keep them")
    return labels, out


def _sublist_subscripts(args):
    """NumPy's interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2]) as a
    subscripts string and the operands."""
    def term(sub):
        chars = []
        for s in sub:
            if s is Ellipsis:
                chars.append("...")
                continue
            s = operator.index(s)
            if not 0 <= s < 52:
                raise ValueError(f"einsum: subscript {s} in a sublist is out of range (0 to 51)")
            chars.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
        return "".join(chars)
    operands, terms = list(args[0::2]), [term(sub) for sub in args[1::2]]
    output = None
    if len(args) % 2:
        output = term(operands.pop())
    return ",".join(terms) + ("" if output is None else "->" + output), operands


# --- lowering ------------------------------------------------------------------------------


def _sizes(subscripts, labels, shapes):
    """Each label's size, broadcast as NumPy broadcasts: 1 against n is n."""
    sizes = {}
    for codes, shape in zip(labels, shapes):
        for c, n in zip(codes, shape):
            m = sizes.setdefault(c, n)
            if m != n and m != 1 and n != 1:
                raise ValueError(f"einsum: subscripts {subscripts!r}: index {_label_name(c)!r} has sizes {m} and "
                                 f"{n} in operands of shapes {[list(sh) for sh in shapes]}")
            if m == 1:
                sizes[c] = n
    return sizes


def _permute(x, labels, order):
    perm = [labels.index(c) for c in order]
    return x if perm == list(range(len(perm))) else _core.permute_dims(x, perm)


def _reshape(x, shape):
    return x if list(x.shape) == list(shape) else _core.reshape(x, list(shape))


def _sum_out(x, labels, drop, dtype):
    """x with the axes of the labels in ``drop`` summed away, in ``dtype``."""
    axes = [i for i, c in enumerate(labels) if c in drop]
    if not axes:
        return x, labels
    return _bz().sum(x, axes, dtype=dtype), [c for c in labels if c not in drop]


def _contract(a, b, keep, sizes, dtype):
    """The pairwise contraction of two operands: the labels both have and
    ``keep`` holds are batch axes, the ones both have and it does not are
    summed; the result's labels are batch, a's own, b's own. An operand is
    (tensor, labels, whether it is a diagonal view)."""
    (a, la, diag_a), (b, lb, diag_b) = a, b
    a0, b0 = a, b
    a, la = _sum_out(a, la, set(la) - set(lb) - keep, dtype)
    b, lb = _sum_out(b, lb, set(lb) - set(la) - keep, dtype)
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    own_a = [c for c in la if c not in lb]
    own_b = [c for c in lb if c not in la]
    size = lambda cs: [sizes[c] for c in cs]  # noqa: E731
    m, k, n = math.prod(size(own_a)), math.prod(size(summed)), math.prod(size(own_b))
    # Dot products (m = n = 1) and batched matrix-vector products are a
    # multiply and a sum: one fused kernel, 4 to 18 times faster than the
    # library's matmul measured here (32 x 256 x 256 float32).
    vectors = (m == 1 and n == 1) or (batch and (m == 1 or n == 1))
    if summed and dtype.name in _MATMUL_DTYPES and not vectors:
        # A diagonal view's strides (n + 1 apart, overlapping the next
        # axis's) are a layout oneDNN's memory descriptors can refuse ("could
        # not construct a memory descriptor using strides", with batch or
        # unit axes): such an operand is copied first, which reads only the
        # diagonal (one summed above was computed, so it is dense already).
        a = _core.copy(a) if diag_a and a is a0 else a
        b = _core.copy(b) if diag_b and b is b0 else b
        am = _reshape(_permute(a, la, batch + own_a + summed), size(batch) + [m, k])
        bm = _reshape(_permute(b, lb, batch + summed + own_b), size(batch) + [k, n])
        r = _reshape(_core.matmul(am, bm), size(batch + own_a + own_b))
        return r, batch + own_a + own_b
    # A broadcast multiply over batch, a's own, b's own and the summed axes, then the sum.
    ab = _reshape(_permute(a, la, batch + own_a + summed), size(batch + own_a) + [1] * len(own_b) + size(summed))
    bb = _reshape(_permute(b, lb, batch + own_b + summed), size(batch) + [1] * len(own_a) + size(own_b + summed))
    r = _core.multiply(ab, bb)
    if summed:
        r = _bz().sum(r, list(range(r.ndim - len(summed), r.ndim)), dtype=dtype)
    return r, batch + own_a + own_b


def _pick_pair(operands, out, sizes):
    """The next pair to contract: greedy and deterministic (see the module's
    docstring)."""
    best = None
    for i in range(len(operands)):
        for j in range(i + 1, len(operands)):
            la, lb = set(operands[i][1]), set(operands[j][1])
            keep = set(out).union(*(operands[k][1] for k in range(len(operands)) if k not in (i, j)))
            size = math.prod(sizes[c] for c in (la | lb) & keep)
            key = (not (la & lb), size, i, j)
            best = key if best is None or key < best else best
    return best[2], best[3]


def einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """NumPy's ``einsum``: the subscripts string (explicit ``->`` or implicit
    output, ``...``, repeated indices), or the interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. Lazy: diagonals are views,
    contractions matmuls (the module's docstring). ``dtype=`` casts the
    operands first (under ``casting``, as NumPy); ``out=`` writes into a
    braze tensor; ``optimize=`` and ``order=`` are accepted and change
    nothing (the contraction order is braze's own)."""
    bz = _bz()
    if not operands:
        raise ValueError("einsum: no subscripts and no operands given")
    if isinstance(operands[0], str):
        subscripts, operands = operands[0], list(operands[1:])
    else:
        subscripts, operands = _sublist_subscripts(operands)
    if not operands:
        raise ValueError(f"einsum: subscripts {subscripts!r} but no operands")
    tensors = [_t(x) for x in operands]
    if dtype is not None:
        target = bz._as_dtype(dtype)
        for n, x in enumerate(tensors):
            if not np.can_cast(x.dtype, target, casting):
                raise TypeError(f"einsum: operand {n} of dtype {x.dtype.name} cannot be cast to {target.name} "
                                f"under casting={casting!r}")
    else:
        target = tensors[0].dtype if len(tensors) == 1 else bz.result_type(*tensors)
    tensors = [x if x.dtype == target else _core.astype(x, target.name) for x in tensors]
    shapes = [tuple(x.shape) for x in tensors]
    labels, output = _parse(subscripts, shapes)
    sizes = _sizes(subscripts, labels, shapes)

    ops = []  # (tensor, its labels, whether it is a diagonal view)
    for n, (x, codes) in enumerate(zip(tensors, labels)):
        codes, took_diagonal = list(codes), False
        while len(set(codes)) != len(codes):  # a repeated index: its diagonal, the axis moved last
            c = next(c for i, c in enumerate(codes) if c in codes[:i])
            i, j = codes.index(c), codes.index(c, codes.index(c) + 1)
            if x.shape[i] != x.shape[j]:
                raise ValueError(f"einsum: subscripts {subscripts!r}: index {_label_name(c)!r} repeats in operand "
                                 f"{n} (shape {list(shapes[n])}) over axes of sizes {x.shape[i]} and {x.shape[j]}")
            x, took_diagonal = diagonal(x, 0, i, j), True
            codes = [d for k, d in enumerate(codes) if k not in (i, j)] + [c]
        # An axis of size 1 that others broadcast: read without it.
        dropped = [k for k, c in enumerate(codes) if x.shape[k] == 1 and sizes[c] != 1]
        if dropped:
            x = _core.reshape(x, [s for k, s in enumerate(x.shape) if k not in dropped])
            codes = [c for k, c in enumerate(codes) if k not in dropped]
        ops.append((x, codes, took_diagonal))

    while len(ops) > 1:
        i, j = _pick_pair(ops, output, sizes)
        keep = set(output).union(*(ops[k][1] for k in range(len(ops)) if k not in (i, j)))
        r, lr = _contract(ops[i], ops[j], keep, sizes, target)
        ops[i] = (r, lr, False)
        del ops[j]
    x, codes, _ = ops[0]
    x, codes = _sum_out(x, codes, set(codes) - set(output), target)
    x = _permute(x, codes, [c for c in output if c in codes])
    shape = [sizes[c] for c in output]
    if len(codes) != len(output):  # an output axis every operand broadcast
        x = _core.broadcast_to(_reshape(x, [sizes[c] if c in codes else 1 for c in output]), shape)
    return write_out(x, out, "einsum")


# --- kron and cross ------------------------------------------------------------------------


def kron(a, b):
    """NumPy's ``kron``: the operands interleaved with unit axes and
    multiplied (one broadcast multiply, fused with what computes a and b),
    the pairs of axes then merged by a reshape; the one of fewer axes is
    given leading unit axes first. Realizing the merged result copies it
    once more (the reshape of a computed value is a view, which realizes
    into a buffer of its own), so it is two kernels."""
    a, b = _pair(a, b)
    nd = max(a.ndim, b.ndim)
    sa = [1] * (nd - a.ndim) + list(a.shape)
    sb = [1] * (nd - b.ndim) + list(b.shape)
    wide_a = _core.reshape(a, [v for s in sa for v in (s, 1)])
    wide_b = _core.reshape(b, [v for s in sb for v in (1, s)])
    return _core.reshape(_core.multiply(wide_a, wide_b), [x * y for x, y in zip(sa, sb)])


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's ``cross`` of 2- and 3-vectors along ``axisa``/``axisb``
    (``axis`` sets all three), broadcasting the rest; a 2-vector beside a
    3-vector has z = 0, two 2-vectors give the z-component alone (NumPy
    2's DeprecationWarning too). The components are assembled with a
    select, so the result is one fused kernel."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _t(a), _t(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError(f"cross: the operands need a vector axis (shapes {list(a.shape)} and {list(b.shape)})")
    a = moveaxis(a, normalized_axis(axisa, a.ndim, "cross"), -1)
    b = moveaxis(b, normalized_axis(axisb, b.ndim, "cross"), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must be 2 or 3): vectors "
                         f"of {na} and {nb} (shapes {list(a.shape)} and {list(b.shape)} with the vector axis last)")
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors "
                      "instead. (deprecated in NumPy 2.0)", DeprecationWarning, stacklevel=2)
        return z
    if na == 3 and nb == 3:
        a2, b2 = a[..., 2], b[..., 2]
        x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    elif na == 2:  # a2 = 0
        b2 = b[..., 2]
        x, y = a1 * b2, _core.negative(a0 * b2)
    else:  # b2 = 0
        a2 = a[..., 2]
        x, y = _core.negative(a2 * b1), a2 * b0
    component = _core._arange(0, 3, 1, "int64", x.device)
    parts = [_core.expand_dims(p, -1) for p in (x, y, z)]
    c = _core.where(component == 0, parts[0], _core.where(component == 1, parts[1], parts[2]))
    return moveaxis(c, -1, normalized_axis(axisc, c.ndim, "cross"))
