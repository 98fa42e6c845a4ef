"""The ndarray methods NumPy programs call on arrays (``x.dot(w)``,
``x.cumsum(axis)``, ``x.sort()``, ``x.real``), on braze tensors.

ndarray's own methods are NumPy's functions applied to the array, so here
each is the NumPy function called on the tensor: it dispatches through
``__array_function__`` (or ``__array_ufunc__``) to braze's implementation
and stays lazy where that one is, or raises the TypeError that names a
function braze does not have. ``sort``, ``partition`` and ``fill`` change
the tensor as ``x[...] = v`` does (Note [In-place updates]); the
byte-level methods (``tobytes``, ``tofile``, ``dump``) go through the
realized values.
"""

import builtins
import numbers
import os
import pickle

import numpy as np

from . import _views
from ._core import Tensor

# Methods whose NumPy function takes the array first and then the method's
# own arguments, in the method's order.
_FUNCTIONS = ["argpartition", "argsort", "choose", "cumprod", "cumsum", "diagonal", "dot", "nonzero", "put", "repeat",
              "searchsorted", "swapaxes", "take", "trace"]


def _delegate(name):
    function = getattr(np, name)

    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"numpy.{name}(self, ...) (ndarray.{name})"
    return method


def _compress(self, condition, axis=None, out=None):
    """ndarray.compress: numpy.compress takes the condition first."""
    return np.compress(condition, self, axis=axis, out=out)


def _sort(self, axis=-1, kind=None, order=None):
    """In place, as ndarray.sort: the tensor takes the sorted values."""
    self[...] = np.sort(self, axis=axis, kind=kind, order=order)


def _partition(self, kth, axis=-1, kind="introselect", order=None):
    """In place, as ndarray.partition: the tensor takes the partitioned values."""
    self[...] = np.partition(self, kth, axis=axis, kind=kind, order=order)


def _round(self, decimals=0, out=None):
    """ndarray.round: numpy.round of the tensor (decimals as NumPy's)."""
    return np.round(self, decimals, out)


def _fill(self, value):
    """In place, as ndarray.fill: every element becomes ``value``."""
    self[...] = value


# braze has no complex dtypes: a tensor is its own real part and its own
# conjugate (as ndarray.real of a real array is the array), and its
# imaginary part is zeros (NumPy's: a read-only array of zeros).
def _real(self):
    return self


def _imag(self):
    return np.zeros_like(self)


def _strides(self):
    """NumPy's strides in bytes: a write-through view's own over its first
    base (as an ndarray in C order), else those of C order, as .numpy()
    gives the values."""
    return _views.layout(self).strides


class _Flags:
    """ndarray.flags of a tensor: NumPy's answers for its layout (a view's
    own: python/braze/_views.py), and WRITEABLE, which a program may turn
    off (then index assignment and in-place operators raise ValueError, in
    the views made of it too) and on again, but for broadcast views."""

    _NAMES = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
              "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "f_contiguous", "OWNDATA": "owndata",
              "O": "owndata", "WRITEABLE": "writeable", "W": "writeable", "ALIGNED": "aligned", "A": "aligned",
              "WRITEBACKIFCOPY": "writebackifcopy", "X": "writebackifcopy"}

    def __init__(self, t):
        object.__setattr__(self, "_t", t)

    c_contiguous = property(lambda self: bool(_views.layout(self._t).flags.c_contiguous))
    f_contiguous = property(lambda self: bool(_views.layout(self._t).flags.f_contiguous))
    owndata = property(lambda self: self._t.base is None)
    aligned = True
    writebackifcopy = False

    @property
    def writeable(self):
        return not _views.read_only(self._t)

    @writeable.setter
    def writeable(self, on):
        _views.set_read_only(self._t, not on)

    def __setattr__(self, name, value):
        if name != "writeable":
            raise AttributeError(f"flags: {name} cannot be set (only writeable)")
        object.__setattr__(self, name, value)

    def __getitem__(self, key):
        return getattr(self, self._NAMES[key.upper()])

    def __setitem__(self, key, value):
        setattr(self, self._NAMES[key.upper()], value)

    def __repr__(self):
        return "\n".join(f"  {name} : {getattr(self, attr)}" for name, attr in
                         (("C_CONTIGUOUS", "c_contiguous"), ("F_CONTIGUOUS", "f_contiguous"), ("OWNDATA", "owndata"),
                          ("WRITEABLE", "writeable"), ("ALIGNED", "aligned"), ("WRITEBACKIFCOPY", "writebackifcopy")))


def _view(self, dtype=None, type=None):
    """ndarray.view: the same memory as another dtype (``x.view(np.int32)``
    of float32 x: its bits), a view that writes through both ways; with no
    dtype, ``x[...]``. The bytes are x's realized values: a dtype view
    realizes x. The last axis must be contiguous, and its bytes divide
    evenly, as NumPy requires."""
    if type is not None or (isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray)):
        raise TypeError("view: braze tensors have no ndarray subclasses (type=...)")
    if dtype is None:
        return self[...]
    return _views.reinterpreted(self, dtype)


def _iter(self):
    """Iteration as NumPy's: the rows, views that write through (0-d tensors
    of a 1-D tensor). Not NumPy scalars, though min(t) would be 100x faster
    with them (Python compares 0-d tensors one by one): NumPy's dispatch
    iterates the argument of np.roots(t), np.poly(t), ... to find the
    tensors among them, and with scalars it would silently leave braze."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


def _set_shape(self, shape):
    """x.shape = s: NumPy's in-place reshape. The tensor takes the reshaped
    value (a C-order tensor's reshape is a view: nothing is copied)."""
    if _views.tracked(self) or _views.has_views(self):
        raise AttributeError("shape: braze sets the shape of a tensor that is not a view and has no live views "
                             "(a view's key would no longer fit it); use x = x.reshape(...)")
    self._rebind(_views.reshape_plain(self, [shape] if isinstance(shape, numbers.Integral) else list(shape)))


def _str(self):
    """print(x) and str(x): the values as NumPy prints them (realizing x,
    as .numpy() does; a tensor that requires a gradient prints its value).
    repr(x) stays braze's summary of shape, dtype, device and whether x is
    realized, which runs nothing: a debugger or a log line that shows a
    lazy tensor does not compute it."""
    return str((self.detach() if self.requires_grad else self).numpy())


def _format(self, spec):
    """format(x, spec), f"{x:.3f}": a 0-d tensor formats as its value (a
    loss printed each step), as NumPy's 0-d arrays do; any other tensor
    takes only the empty spec (str(x)), as NumPy's arrays."""
    if not spec:
        return str(self)
    if self.ndim != 0:
        raise TypeError(f"unsupported format string {spec!r} passed to Tensor.__format__ for a tensor of shape "
                        f"{list(self.shape)}: only a 0-d tensor formats as its value")
    return format(self.item(), spec)


def _dump(self, file):
    """ndarray.dump: the pickle (realized values, never the lazy graph) into a path or a file."""
    if isinstance(file, (str, bytes, os.PathLike)):
        with open(file, "wb") as f:
            pickle.dump(self, f)
    else:
        pickle.dump(self, file)


def install():
    for name in _FUNCTIONS:
        setattr(Tensor, name, _delegate(name))
    Tensor.conj = Tensor.conjugate = _real
    Tensor.compress = _compress
    Tensor.sort = _sort
    Tensor.partition = _partition
    Tensor.fill = _fill
    Tensor.round = _round
    Tensor.__divmod__ = lambda self, other: np.divmod(self, other)
    Tensor.__rdivmod__ = lambda self, other: np.divmod(other, self)
    Tensor.real = property(_real, doc="the real part (the tensor itself for real dtypes)")
    Tensor.imag = property(_imag, doc="the imaginary part (zeros for real dtypes)")
    Tensor.itemsize = property(lambda self: self.dtype.itemsize, doc="bytes per element")
    Tensor.nbytes = property(lambda self: self.dtype.itemsize * self.size, doc="bytes of all elements")
    Tensor.strides = property(_strides, doc=_strides.__doc__)
    Tensor.flags = property(_Flags, doc=_Flags.__doc__)
    Tensor.__iter__ = _iter
    Tensor.__contains__ = lambda self, value: bool((self == value).any())  # ndarray's: any element equal
    Tensor.view = _view
    Tensor.shape = property(Tensor.shape.fget, _set_shape, doc="the shape, a tuple; settable as ndarray.shape")
    Tensor.flat = property(lambda self: self.numpy().flat, doc="an iterator over the values (read-only)")
    Tensor.tobytes = lambda self, order="C": self.numpy().tobytes(order)
    Tensor.tofile = lambda self, fid, sep="", format="%s": self.numpy().tofile(fid, sep, format)
    Tensor.dumps = lambda self: pickle.dumps(self)
    Tensor.dump = _dump
    Tensor.__format__ = _format
    Tensor.__str__ = _str
