"""``bz.jit``: a function captured as one program (docs/programs.md)."""

import functools

from . import _core
from ._core import Tensor


def jit(fn=None):
    """Captures ``fn``: each call records it, and all the tensors it returns
    are realized as one program. Tensor arguments are the program's inputs
    (one still lazy is realized first, so the function's program does not
    depend on how the caller built it); Python numbers inside are scalar
    parameters, so a new value does not compile. A new shape or dtype of an
    argument makes a new program; the same ones replay the cached program.

    ``out=`` (a tensor, or a sequence matching the returned tensors) writes
    the results into existing, realized tensors instead of new ones: a
    replayed call then allocates nothing. An ``out`` that is also an
    argument is updated in place, reading its old values
    (``w = step(w, g, out=w)``). Returns what ``fn`` returns, or ``out``.
    """
    if fn is None:
        return jit

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        pending = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and not a.is_realized]
        if pending:
            _core.realize(pending)
        result = fn(*args, **kwargs)
        results = [result] if isinstance(result, Tensor) else list(result)
        for i, r in enumerate(results):
            if not isinstance(r, Tensor):
                raise TypeError(f"jit: {fn.__name__} returned a {type(r).__name__} as result {i}; "
                                "a jitted function returns tensors")
        if out is None:
            _core.realize(results)
            return result
        targets = [out] if isinstance(out, Tensor) else list(out)
        if len(targets) != len(results):
            raise ValueError(f"jit: {fn.__name__} returned {len(results)} tensor(s) but out= has {len(targets)}")
        _core.assign(targets, results)
        return out

    return wrapper
