"""NumPy's in-place forms on braze tensors: ``x += y`` (and the other
augmented operators) and ``x[key] = value``.

Both give the tensor object a new value that every name bound to it sees,
without changing what was recorded on the old value (Note [In-place
updates], python/bind_tensor.cpp). ``x += y`` stays lazy: it is ``x + y``,
cast back to x's dtype, fusing like any op. ``x[key] = value`` writes
stored values: x and value are realized (one program), and NumPy writes
value into x's storage through x's own indexing rules (integers, slices,
masks, index arrays); into x's storage itself when nothing else sees it,
else into a copy that x then holds. Either way a view made by indexing
passes the update to its base, and a base's views see it
(python/braze/_views.py).
"""

import operator

import numpy as np

from . import _core, _views
from ._core import Tensor

_AUGMENTED = {
    "__iadd__": operator.add, "__isub__": operator.sub, "__imul__": operator.mul,
    "__itruediv__": operator.truediv, "__ifloordiv__": operator.floordiv, "__imod__": operator.mod,
    "__ipow__": operator.pow, "__imatmul__": operator.matmul, "__iand__": operator.and_,
    "__ior__": operator.or_, "__ixor__": operator.xor, "__ilshift__": operator.lshift,
    "__irshift__": operator.rshift,
}


def _augmented(name, op):
    symbol = {"__imatmul__": "@=", "__ipow__": "**=", "__ifloordiv__": "//=", "__ilshift__": "<<=",
              "__irshift__": ">>="}.get(name) or {"add": "+=", "sub": "-=", "mul": "*=", "truediv": "/=",
                                                   "mod": "%=", "and": "&=", "or": "|=", "xor": "^="}[name[3:-2]]

    def update(self, other):
        _not_read_only(self, symbol)
        result = op(self, other)
        if tuple(result.shape) != tuple(self.shape):
            raise ValueError(f"{symbol}: a result of shape {list(result.shape)} does not fit the tensor's "
                             f"{list(self.shape)} (the other operand must broadcast to it)")
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
                raise TypeError(f"{symbol}: the result is {result.dtype.name}, which cannot be stored back into "
                                f"{self.dtype.name} (NumPy's same_kind casting)")
            result = result.astype(self.dtype)
        if self.requires_grad and not _core.is_grad_enabled():
            # PyTorch's step on a variable (w -= lr * w.grad under no_grad):
            # w stays a variable, now with the new value and no history.
            grad = self.grad
            result.realize()
            self._rebind(result.requires_grad_())
            self.grad = grad
            return self
        self._rebind(result)
        _views.after_update(self)
        return self

    update.__name__ = name
    return update


def _not_read_only(t, op):
    if _views.read_only(t):
        raise ValueError(f"{op}: assignment destination is read-only (a broadcast view, or flags.writeable "
                         "turned off, as in NumPy: take a copy first, x = x.copy())")


def setitem(self, key, value):
    """``x[key] = value``, NumPy's semantics (see the module docstring)."""
    if self.device != "cpu":
        raise TypeError(f"setitem: tensors on {self.device} are not supported yet; index assignment writes host "
                        "memory (move with .to('cpu'), or build the value with bz.where)")
    if _core.is_grad_enabled() and (self.requires_grad or getattr(value, "requires_grad", False)):
        raise ValueError("setitem: writing into stored values is not recorded, so no gradient would see it; "
                         "build the new value with bz.where, or write under bz.no_grad() (docs/autodiff.md)")
    _not_read_only(self, "setitem")
    from . import realize
    pending = [t for t in (self, value) if isinstance(t, Tensor) and not t.is_realized]
    if pending:
        realize(*pending)  # one program for both
    if isinstance(key, Tensor):
        key = key.numpy()
    elif isinstance(key, tuple):
        key = tuple(k.numpy() if isinstance(k, Tensor) else k for k in key)
    data = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
    target = self if self._sole_owner() else _own_copy(self)
    view = target._writable_bytes().view(self.dtype).reshape(self.shape)
    try:
        view[key] = data
    except IndexError as e:
        raise IndexError(f"setitem: {e} (tensor of shape {list(self.shape)})") from None
    except (ValueError, TypeError) as e:
        raise type(e)(f"setitem: {e} (tensor of shape {list(self.shape)}, value of shape {list(data.shape)})") \
            from None
    if target is not self:
        self._rebind(target)
    _views.after_update(self)


def _own_copy(t):
    """A realized copy of t with storage nothing else holds."""
    c = _core.copy(t)
    c.realize()
    return c


def install():
    for name, op in _AUGMENTED.items():
        setattr(Tensor, name, _augmented(name, op))
    Tensor.__setitem__ = setitem
