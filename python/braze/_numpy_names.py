"""NumPy's names that braze's namespace answers as NumPy does, so that code
written against ``numpy`` runs with ``braze`` in its place:

- the dtype spellings NumPy code uses beside ``float32`` (``double``,
  ``single``, ``int_``, ``intp``, ...): NumPy's scalar types, as
  ``bz.float32`` is (Note [Dtype names]), where braze has the dtype they
  name;
  NumPy's ``dtype`` and its abstract classes (``floating``, ``integer``,
  ...) for ``issubdtype``;
- questions about dtypes and shapes, and NumPy's own error and print
  state, which compute nothing on array values (``promote_types``,
  ``broadcast_shapes``, ``errstate``, ``printoptions``, ...): NumPy's
  functions themselves;
- arrays NumPy makes from no array values (windows such as ``hanning``,
  index pairs such as ``tril_indices``, readers such as ``loadtxt`` and
  ``fromiter``): NumPy's answer as tensors (python/braze/_on_host.py's
  rule);
- ``fromfunction``, whose function is called on braze's index grids, so
  what it computes is recorded lazily; ``angle`` of real values and
  ``asarray_chkfinite``, built from braze's ops;
- ``lib.stride_tricks``' views that braze has (``sliding_window_view``);
- NumPy's keywords on braze's ufuncs (``bz.exp(x, out=x)``, ``bz.add(a,
  b, where=m, out=c)``) and NumPy's ufunc methods (``bz.add.at``).

The NumPy functions braze answers through NumPy's protocols (``np.dot(t,
u)``, ``np.cumsum(t)``) are ``bz.dot`` and ``bz.cumsum`` too:
_numpy_protocols.install exports its table under NumPy's names where the
namespace has none.
"""

import functools
import math
import types

import numpy as np

from ._core import Tensor
from ._on_host import _on_host

# NumPy's other names for the dtypes braze has (on Linux int_, intp and
# long are int64); uint, ulong and ulonglong name uint64, which braze lacks.
DTYPE_ALIASES = ["double", "single", "half", "int_", "intp", "intc", "long", "longlong", "byte", "ubyte", "short",
                 "ushort", "uintc"]

# Passed through: they read dtypes, shapes or NumPy's own settings.
NUMPY_OWN = ["dtype", "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
             "complexfloating", "promote_types", "issubdtype", "min_scalar_type", "mintypecode", "isscalar",
             "broadcast_shapes", "iterable", "typename", "errstate", "seterr", "geterr", "seterrcall", "geterrcall",
             "printoptions", "set_printoptions", "get_printoptions", "getbufsize", "setbufsize",
             "format_float_positional", "format_float_scientific", "base_repr", "binary_repr", "ndindex",
             # index expressions, constants, NumPy's exceptions and testing (which reads tensors as arrays)
             "s_", "index_exp", "little_endian", "typecodes", "True_", "False_", "exceptions", "testing"]

# NumPy's answer, as tensors.
MADE_BY_NUMPY = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "tril_indices", "triu_indices",
                 "diag_indices", "fromiter", "frombuffer", "fromstring", "fromfile", "fromregex", "loadtxt",
                 "genfromtxt", "load", "poly"]


def _bz():
    import braze
    return braze


def _made_by_numpy(name):
    fn = getattr(np, name)

    def call(*args, **kwargs):
        return _on_host(name, fn, *args, **kwargs)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"NumPy's {name}, its arrays as tensors."
    return call


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """NumPy's fromfunction: function called once on the index grids of
    shape (bz.indices, of dtype: NumPy's default float64), lazily."""
    return function(*_bz().indices(shape, dtype=dtype), **kwargs)


def angle(z, deg=False):
    """NumPy's angle of real values: arctan2(+0, z), so pi for negative
    values and -0.0, 0 for positive ones and +0.0, NaN for NaN; in degrees
    with deg. braze has no complex dtype."""
    bz = _bz()
    z = bz.asarray(z)
    result = bz.arctan2(bz.zeros_like(z), z)
    return result * (180 / math.pi) if deg else result


def asarray_chkfinite(a, dtype=None, order=None):
    """NumPy's asarray_chkfinite: a tensor of a, or a ValueError where a
    value is an infinity or a NaN (which realizes one bool)."""
    bz = _bz()
    t = bz.asarray(a, dtype)
    if t.dtype.kind == "f" and not bool(bz.all(bz.isfinite(t))):
        raise ValueError("asarray_chkfinite: array must not contain infs or NaNs")
    return t


def asfortranarray(a, dtype=None, *, like=None):
    """NumPy's asfortranarray: a tensor of a's values. braze lays out
    memory itself, so the order NumPy would choose changes nothing."""
    return _bz().asarray(a, dtype)


def require(a, dtype=None, requirements=None, *, like=None):
    """NumPy's require: a tensor of a's values in dtype. Its requirements
    (contiguous, aligned, writeable, owning its data) are about memory
    braze lays out itself; an unknown one is a KeyError, as in NumPy."""
    known = set("CFAWOE") | {"C_CONTIGUOUS", "CONTIGUOUS", "F_CONTIGUOUS", "FORTRAN", "ALIGNED", "WRITEABLE",
                             "OWNDATA", "ENSUREARRAY"}
    for r in [requirements] if isinstance(requirements, str) else requirements or []:
        if r.upper() not in known:
            raise KeyError(f"require: unknown requirement {r!r}")
    return _bz().asarray(a, dtype)


class _NdarrayType(type):
    def __instancecheck__(cls, x):
        return isinstance(x, _bz().Tensor)

    def __subclasscheck__(cls, c):
        return issubclass(c, _bz().Tensor)


class ndarray(metaclass=_NdarrayType):
    """NumPy's ndarray as code written against numpy uses it: tensors are
    instances (``isinstance(t, bz.ndarray)``), and ``ndarray(shape,
    dtype=float)`` makes an array of that shape, zeros where NumPy leaves
    the memory uninitialised. NumPy's buffer=, offset= and strides= (a view
    of memory) are a TypeError."""

    def __new__(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
        if buffer is not None or offset or strides is not None:
            raise TypeError("ndarray: buffer=, offset= and strides= are not supported (braze lays out memory itself)")
        return _bz().zeros(shape, dtype)


class _UfuncLike(functools.partial):
    """A braze element-wise function as NumPy's ufunc objects are used:
    calling it is calling braze's function (a partial without arguments:
    C's call, no Python frame); its methods are the NumPy ufunc's, on
    tensors, which braze's ``__array_ufunc__`` answers (``bz.add.at(t, i,
    1)``, ``bz.minimum.outer(x, y)``, ``bz.add.reduce(t, axis=0)``,
    ``bz.maximum.accumulate(t)``). Pickles by name. A call with NumPy's
    keywords (``out=``, ``where=``, ``dtype=``) or its positional out is
    numpy_style_call's (an op row's second overload, python/
    bind_tensor.cpp; _ComposedUfunc's __call__)."""

    def outer(self, a, b, **kwargs):
        return self._ufunc.outer(_tensor(a), _tensor(b), **kwargs)

    def reduce(self, array, *args, **kwargs):
        return self._ufunc.reduce(_tensor(array), *args, **kwargs)

    def accumulate(self, array, *args, **kwargs):
        return self._ufunc.accumulate(_tensor(array), *args, **kwargs)

    def reduceat(self, array, indices, *args, **kwargs):
        return self._ufunc.reduceat(_tensor(array), indices, *args, **kwargs)

    def at(self, a, indices, b=None):
        """In place on a (a tensor, or a NumPy array NumPy writes)."""
        return self._ufunc.at(a, indices) if b is None else self._ufunc.at(a, indices, b)

    def __getattr__(self, name):  # nin, nout, nargs, identity, types, signature: NumPy's
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["_ufunc"], name)

    def __repr__(self):
        return f"<braze ufunc '{self.__name__}'>"

    def __reduce__(self):
        return self.__name__  # a global name of the braze module


class _ComposedUfunc(_UfuncLike):
    """The same for a NumPy ufunc braze builds in Python (sinh, hypot, ...):
    its call is a Python frame anyway, so this one takes NumPy's keywords."""

    def __call__(self, *args, **kwargs):
        if not kwargs and len(args) == self._ufunc.nin:
            return self.func(*args)
        return _as_numpy_ufunc(self._ufunc, args, kwargs)


def numpy_style_call(name, *args, **kwargs):
    """braze's element-wise function `name` called as NumPy's ufunc of the
    same name is (keywords, a positional out): that ufunc on the tensors,
    which braze's __array_ufunc__ answers. A row without a NumPy ufunc
    takes its tensors only."""
    row = _op_rows()[name]
    ufunc = getattr(np, row["numpy"], None) if row["numpy"] else None
    if not isinstance(ufunc, np.ufunc):
        keywords = f", keywords {', '.join(kwargs)}" if kwargs else ""
        raise TypeError(f"{name}: takes {row['arity']} tensor argument(s) and no keywords (got {len(args)} "
                        f"argument(s){keywords})")
    return _as_numpy_ufunc(ufunc, args, kwargs)


@functools.cache
def _op_rows():
    from . import _core
    return {row["api"]: row for row in _core.ops()}


def _as_numpy_ufunc(ufunc, args, kwargs):
    scalars = (int, float, np.generic, Tensor)  # bool is an int
    return ufunc(*[a if isinstance(a, scalars) else _bz().asarray(a) for a in args], **kwargs)


def _tensor(x):
    return x if isinstance(x, np.ndarray) else _bz().asarray(x)


def install_ufuncs(bz, ufuncs):
    """Each braze function that is a NumPy ufunc (``ufuncs``: NumPy ufunc
    -> braze function), under NumPy's name and braze's, as a _UfuncLike."""
    for ufunc, function in ufuncs.items():
        if ufunc.signature is not None:  # matmul: a generalised ufunc without these methods
            continue
        names = [n for n in {ufunc.__name__, getattr(function, "__name__", "")} if getattr(bz, n, None) is function]
        for name in sorted(names):
            u = (_ComposedUfunc if isinstance(function, types.FunctionType) else _UfuncLike)(function)
            u.__dict__.update(_ufunc=ufunc, __name__=name, __qualname__=name, __doc__=function.__doc__,
                              __module__="braze")
            setattr(bz, name, u)


class vectorize:
    """NumPy's vectorize: pyfunc called on each element by NumPy, on the
    realized values of the tensors among the arguments; its results as
    tensors. Also the decorator form, ``@bz.vectorize(otypes=[float])``."""

    def __init__(self, pyfunc=np._NoValue, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        self._options = dict(otypes=otypes, doc=doc, excluded=excluded, cache=cache, signature=signature)
        self._numpy = None if pyfunc is np._NoValue else np.vectorize(pyfunc, **self._options)

    def __call__(self, *args, **kwargs):
        if self._numpy is None:  # the decorator form: called with the function
            self._numpy = np.vectorize(args[0], **self._options)
            return self
        return _on_host("vectorize", self._numpy, *args, **kwargs)


class _Concatenator:
    """NumPy's r_ (rows: axis 0) and c_ (columns: the last axis, 1-D
    values as columns) as lazy concatenations: tensors, arrays, lists,
    scalars (of the arrays' dtype where it holds them, as NumPy's weak
    scalars) and slices (``0:5`` as arange, ``0:1:5j`` as five points of
    linspace, float64). NumPy's string directives are a TypeError."""

    def __init__(self, name, columns):
        self._name, self._columns = name, columns

    def __getitem__(self, key):
        bz = _bz()
        items = key if isinstance(key, tuple) else (key,)
        parts, scalars = [], []
        for item in items:
            if isinstance(item, str):
                raise TypeError(f"{self._name}: string directives ({item!r}) are not supported; use bz.concatenate")
            if isinstance(item, slice):
                parts.append(self._range(bz, item))
            elif isinstance(item, (bool, int, float, np.generic)):
                parts.append(item)
                scalars.append(item)
            else:
                parts.append(bz.asarray(item))
        arrays = [p for p in parts if isinstance(p, bz.Tensor)]
        dtype = np.result_type(*(a.dtype for a in arrays), *scalars) if arrays else None
        tensors = []
        for p in parts:
            t = p if isinstance(p, bz.Tensor) else bz.asarray(p, dtype)
            if self._columns:
                t = bz.reshape(t, [1, 1] if t.ndim == 0 else [t.shape[0], 1]) if t.ndim < 2 else t
            elif t.ndim == 0:
                t = bz.reshape(t, [1])
            tensors.append(t)
        return bz.concatenate(tensors, axis=-1 if self._columns else 0)

    def _range(self, bz, s):
        start = 0 if s.start is None else s.start
        if isinstance(s.step, complex):
            return bz.linspace(start, s.stop, int(abs(s.step)), dtype=np.float64)
        return bz.arange(start, s.stop, 1 if s.step is None else s.step)


r_ = _Concatenator("r_", columns=False)
c_ = _Concatenator("c_", columns=True)


FUNCTIONS = ["fromfunction", "angle", "asarray_chkfinite", "asfortranarray", "require"]
UFUNCS = []


def install(bz):
    """The names above, on the braze module."""
    for name in DTYPE_ALIASES:
        if np.dtype(getattr(np, name)).name in bz._DTYPES:
            setattr(bz, name, getattr(np, name))
    for name in NUMPY_OWN:
        setattr(bz, name, getattr(np, name))
    for name in MADE_BY_NUMPY:
        setattr(bz, name, _made_by_numpy(name))
    for name in FUNCTIONS + ["vectorize", "r_", "c_", "ndarray"]:
        setattr(bz, name, globals()[name])
    # np.lib.stride_tricks' views that braze has (as_strided it has not).
    bz.lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(
        sliding_window_view=bz.sliding_window_view, broadcast_to=bz.broadcast_to,
        broadcast_arrays=bz.broadcast_arrays))
