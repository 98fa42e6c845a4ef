"""Gradients, JAX-style and PyTorch-style (docs/autodiff.md).

The rules and the backward walk are C++ (Note [Reverse mode],
runtime/autodiff.h): a gradient is more lazy tensors, realized together
with the loss and whatever is built from it, as one program. This module
adds the function transformations over nested dicts, lists and tuples of
tensors (a model is a dict of parameters) and the grad-mode contexts.
"""

import contextlib
import functools
import threading

from . import _core
from ._core import Tensor

__all__ = ["grad", "value_and_grad", "vjp", "checkpoint", "stop_gradient", "no_grad", "enable_grad",
           "is_grad_enabled", "tree_flatten", "tree_unflatten", "tree_map"]

stop_gradient = _core.stop_gradient


def _bz():
    import braze  # the package imports this module first
    return braze
is_grad_enabled = _core.is_grad_enabled


# --- trees: nested dicts, lists and tuples with tensors (or anything) at the leaves ---

# The walks recurse through module-level functions, not nested closures:
# a closure that calls itself is a reference cycle (function and cell), and
# the leaves it holds (tensors) would stay alive until Python's cyclic
# collector ran. A lazy tensor held so counts as held by the user, and the
# next realize keeps its value too (Note [Held values are kept]): a
# training step's program then changed with the collector's timing.
def tree_flatten(tree):
    """(leaves, structure): the leaves of nested dicts (in key order),
    lists and tuples, left to right; ``tree_unflatten(structure, leaves)``
    rebuilds the tree."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(t, leaves):
    if isinstance(t, dict):
        keys = sorted(t)
        return (dict, keys, [_flatten(t[k], leaves) for k in keys])
    if isinstance(t, (list, tuple)):
        return (type(t), None, [_flatten(x, leaves) for x in t])
    leaves.append(t)
    return None


def tree_unflatten(structure, leaves):
    return _build(structure, iter(leaves))


def _build(s, it):
    if s is None:
        return next(it)
    kind, keys, children = s
    built = [_build(c, it) for c in children]
    if kind is dict:
        return dict(zip(keys, built))
    return kind(built) if kind in (list, tuple) else kind(*built)  # namedtuples take fields


def tree_map(f, tree, *rest):
    """f applied to each leaf of tree (and the same leaves of ``rest``)."""
    leaves, s = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten(s, [f(x, *xs) for x, *xs in zip(leaves, *others)])


# --- grad mode ---------------------------------------------------------------------

@contextlib.contextmanager
def _grad_mode(on):
    was = _core._set_grad_enabled(on)
    try:
        yield
    finally:
        _core._set_grad_enabled(was)


def no_grad():
    """Ops recorded inside do not carry gradients (an optimizer's update)."""
    return _grad_mode(False)


def enable_grad():
    return _grad_mode(True)


# --- the transformations -------------------------------------------------------------

_tracing = threading.local()  # how many bz.grad/vjp calls are running on this thread


@contextlib.contextmanager
def _trace():
    _tracing.depth = getattr(_tracing, "depth", 0) + 1
    _core._enter_trace()  # Note [Traced functions add no depth] (runtime/autodiff.h)
    try:
        with _grad_mode(True):
            yield _tracing.depth == 1
    finally:
        _core._exit_trace()
        _tracing.depth -= 1


def _detach_outer(tree, outermost):
    """The results of the outermost transformation carry no gradient: they
    are values, and an update built from them must not keep the step's
    graph alive (Note [Reverse mode]). Inside another bz.grad they keep
    theirs, so it can differentiate them again."""
    if not outermost:
        return tree
    return tree_map(lambda t: _core.stop_gradient(t) if isinstance(t, Tensor) else t, tree)


def _as_variables(tree, what):
    def make(t):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: can only differentiate with respect to braze tensors, got {type(t).__name__}")
        return _core._variable(t)
    return tree_map(make, tree)


def vjp(f, *primals, has_aux=False):
    """``(f(*primals), vjp_fn)`` as in JAX: ``vjp_fn(cotangent)`` gives the
    gradient of ``<cotangent, f(*primals)>`` for each primal, as a tuple of
    trees shaped like the primals."""
    with _trace() as outermost:
        variables = _as_variables(primals, "vjp")
        out = f(*variables)
        aux = None
        if has_aux:
            out, aux = out
        outs, out_structure = tree_flatten(out)
        wrt, _ = tree_flatten(variables)

    def vjp_fn(cotangent):
        cots, _ = tree_flatten(cotangent)
        if len(cots) != len(outs):
            raise ValueError(f"vjp: {len(cots)} cotangents for {len(outs)} outputs")
        with _trace() as outer:
            grads = _core._vjp(outs, [_bz().asarray(c) if not isinstance(c, Tensor) else c for c in cots], wrt)
            return _detach_outer(tree_unflatten(tree_flatten(variables)[1], grads), outer and outermost)

    result = _detach_outer(out, outermost)
    if has_aux:
        return result, vjp_fn, _detach_outer(aux, outermost)
    return result, vjp_fn


def value_and_grad(f, argnums=0, has_aux=False):
    """A function returning ``(f(*args), gradient)`` (``((value, aux),
    gradient)`` with has_aux), the gradient of the scalar ``f`` with
    respect to argument ``argnums`` (an int or a tuple of ints; each a
    tensor or a tree of them)."""
    many = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if many else (argnums,)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"value_and_grad: argnums {i} but the function got {len(args)} positional arguments")
        with _trace() as outermost:
            args = list(args)
            for i in nums:
                args[i] = _as_variables(args[i], "grad")
            out = f(*args, **kwargs)
            value, aux = out if has_aux else (out, None)
            if not isinstance(value, Tensor) or value.size != 1:
                shape = getattr(value, "shape", type(value).__name__)
                raise TypeError(f"grad: the function must return a one-element tensor, got {shape}")
            wrt, structures = [], []
            for i in nums:
                leaves, s = tree_flatten(args[i])
                wrt += leaves
                structures.append((s, len(leaves)))
            flat = _core._vjp([value], [_bz().ones_like(value)], wrt)
            grads, at = [], 0
            for s, count in structures:
                grads.append(tree_unflatten(s, flat[at:at + count]))
                at += count
            g = tuple(grads) if many else grads[0]
            result = (value, aux) if has_aux else value
            return _detach_outer(result, outermost), _detach_outer(g, outermost)

    return wrapped


def grad(f, argnums=0, has_aux=False):
    """The gradient of the scalar function ``f`` with respect to argument
    ``argnums``, as a function (``(gradient, aux)`` with has_aux), as in JAX."""
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapped


_POLICIES = ("nothing_saveable", "dots_saveable", "dots_and_reductions_saveable")


def checkpoint(f, policy="nothing_saveable"):
    """``f`` whose gradient recomputes it instead of keeping what it
    computed (JAX's ``jax.checkpoint``, PyTorch's ``torch.utils.checkpoint``):
    the backward computes ``f`` again from its arguments, so the training
    step's memory plan keeps the arguments from the forward to the
    backward, not ``f``'s activations (Note [Checkpoints],
    runtime/autodiff.h). ``f`` takes and returns trees of tensors; other
    leaves of its arguments are passed through unchanged. Gradients reach
    its tensor arguments and the variables it reads from its closure.
    ``f`` is called once: the backward copies the ops it recorded.

    ``policy`` says what is kept after all, as JAX's checkpoint policies:
    ``"nothing_saveable"`` (recompute everything), ``"dots_saveable"``
    (keep the results of matmuls and convolutions) or
    ``"dots_and_reductions_saveable"`` (and of reductions): the
    element-wise work between them is recomputed inside the backward's
    kernels and no library call runs twice."""
    if policy not in _POLICIES:
        raise ValueError(f"checkpoint: unknown policy {policy!r}; expected one of {', '.join(map(repr, _POLICIES))}")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        leaves, structure = tree_flatten((args, kwargs))
        at = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor)]
        out_structure = []  # set by the one call of flat

        def flat(tensors):
            filled = list(leaves)
            for i, t in zip(at, tensors):
                filled[i] = t
            a, kw = tree_unflatten(structure, filled)
            outs, s = tree_flatten(f(*a, **kw))
            if any(not isinstance(o, Tensor) for o in outs):
                kinds = sorted({type(o).__name__ for o in outs if not isinstance(o, Tensor)})
                raise TypeError(f"checkpoint: the function must return tensors (or trees of them), got {', '.join(kinds)}")
            out_structure.append(s)
            return outs

        outs = _core._checkpoint(flat, [leaves[i] for i in at], policy)
        return tree_unflatten(out_structure[0], outs)

    return wrapped
