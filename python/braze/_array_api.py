"""braze as an array API namespace (the 2023.12 standard).

``x.__array_namespace__()`` is the braze module itself, as NumPy 2's is
numpy: the standard's names that NumPy's names do not already cover are
here. The dtype functions answer with braze's promotion (docs/semantics.md),
read off a lazy op on 0-d tensors, so they can never disagree with what an
op does. Sorting, scans, searching and the unique family have data-
dependent results or no braze op yet: they realize and let NumPy compute
(python/braze/_gather.py's rule), returning realized tensors. braze has no
int16, uint16/32/64 or complex dtypes: the namespace leaves them out,
which the standard's test suite reads as "not supported".
"""

import builtins

import numpy as np

from . import _core
from ._core import Tensor
from ._gather import _as_tensor, _host, _realized
from ._numpy_functions import normalized_axis
from ._views import reshape as _numpy_reshape

__array_api_version__ = "2023.12"

_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f" or d.name == "bfloat16",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d.name == "bfloat16",
}


def isdtype(dtype, kind):
    dtype = np.dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {', '.join(_KINDS)}")
        return _KINDS[kind](dtype)
    return dtype == np.dtype(kind)


def _operand(x):
    """A 0-d stand-in with x's dtype, or x itself (a Python scalar stays weak)."""
    if isinstance(x, Tensor):
        return _core.full([], 0, x.dtype.name, None)
    if isinstance(x, (builtins.bool, int, float)):
        return x
    return _core.full([], 0, np.dtype(x).name, None)


def result_type(*arrays_and_dtypes):
    """braze's promotion of the operands: the dtype a lazy add of them has."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    ops = [_operand(x) for x in arrays_and_dtypes]
    if not builtins.any(isinstance(o, Tensor) for o in ops):
        raise ValueError("result_type: at least one array or dtype is required besides Python scalars")
    acc = next(o for o in ops if isinstance(o, Tensor))
    for o in ops:
        if not (isinstance(o, Tensor) and o.dtype == np.bool_ and acc.dtype == np.bool_):
            acc = _core.add(acc, o)
    return acc.dtype


def can_cast(from_, to, /):
    """Whether promotion keeps ``to``: the standard's "safe" casts."""
    src = from_.dtype if isinstance(from_, Tensor) else np.dtype(from_)
    dst = np.dtype(to)
    if src == dst:
        return True
    if src == np.bool_:
        return True
    if dst == np.bool_:
        return False
    return result_type(src, dst) == dst and not (src.kind == "f" and dst.kind in "iu")


class _Info:
    """``__array_namespace_info__()``: what this namespace offers."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"] + (["cuda"] if _core._cuda_absent() is None else [])

    def default_dtypes(self, *, device=None):
        return {"real floating": np.dtype("float32"), "complex floating": None, "integral": np.dtype("int64"),
                "indexing": np.dtype("int64")}

    def dtypes(self, *, device=None, kind=None):
        from . import _DTYPES
        names = [n for n in _DTYPES if n not in ("float16", "bfloat16")]  # the standard's dtypes braze has
        return {n: _DTYPES[n] for n in names if kind is None or isdtype(_DTYPES[n], kind)}


def __array_namespace_info__():
    return _Info()


def from_dlpack(x, /, *, device=None, copy=None):
    """A tensor holding the values of any DLPack exporter on the host."""
    from . import asarray
    return asarray(np.from_dlpack(x), device=device)


def broadcast_arrays(*arrays):
    from . import asarray
    ts = [asarray(a) for a in arrays]
    shape = list(np.broadcast_shapes(*[tuple(t.shape) for t in ts]))
    return [t if list(t.shape) == shape else _core.broadcast_to(t, shape) for t in ts]


def unstack(x, /, *, axis=0):
    if x.ndim == 0:
        raise ValueError("unstack: a zero-dimensional tensor cannot be unstacked")
    axis = normalized_axis(axis, x.ndim, "unstack")
    lead = (slice(None),) * axis
    return tuple(x[(*lead, i)] for i in range(x.shape[axis]))


def vecdot(x1, x2, /, *, axis=-1):
    """The standard's vecdot: the axis is not broadcast, the dtype is the
    operands' promotion (braze sums integers in int64 and casts back)."""
    from . import asarray
    a, b = asarray(x1), asarray(x2)
    for t in (a, b):
        if not -t.ndim <= axis < 0:
            raise IndexError(f"vecdot: axis {axis} must be negative and within both ranks ({a.ndim}, {b.ndim})")
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: the contracted axes differ: {list(a.shape)} and {list(b.shape)} along {axis}")
    prod = a * b
    r = _core.sum(prod, [axis], False)
    return r if r.dtype == prod.dtype else r.astype(prod.dtype)


def real(x, /):
    return _core.copy(x)


def imag(x, /):
    return _core.multiply(x, 0)


def _numpy_call(op, fn, x, **kwargs):
    """op computed by NumPy on x's realized values (see the module docstring)."""
    from . import asarray
    x = asarray(x)
    _realized(x)
    return fn(_host(x, op), **kwargs)


def _no_order(op, order):
    if order is not None:
        raise TypeError(f"{op}: order= (fields of a structured dtype) is not supported: braze has no structured dtypes")


# NumPy's positional axis, kind and order beside the standard's keywords:
# every kind gives the stable order, which is one of the orders NumPy's
# quicksort may give.
def sort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    _no_order("sort", order)
    r = _numpy_call("sort", lambda a: np.sort(a, axis=axis, kind="stable"), x)
    return _as_tensor(np.flip(r, axis) if descending else r)


def argsort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    _no_order("argsort", order)

    def ranks(a):
        if not descending:
            return np.argsort(a, axis=axis, kind="stable")
        # Stable and descending: ties keep their order, so sort the reversed
        # array ascending and map back.
        n = a.shape[axis]
        return n - 1 - np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
    return _as_tensor(_numpy_call("argsort", ranks, x))


def _scan(op, fn, x, axis, dtype, include_initial, initial):
    from . import _as_dtype, asarray
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{op}: axis is required for a tensor of rank {x.ndim}")
        axis = 0

    if dtype is None and x.dtype.kind in "biu":
        dtype = "int64"  # braze's default integer (it has no uint64 for unsigned inputs)
    dtype = _as_dtype(dtype)

    def run(a):
        out = fn(a, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(out.shape)
            shape[axis] = 1
            out = np.concatenate([np.full(shape, initial, out.dtype), out], axis=axis)
        return out
    return _as_tensor(_numpy_call(op, run, x))


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _scan("cumulative_sum", np.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _scan("cumulative_prod", np.cumprod, x, axis, dtype, include_initial, 1)


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    from . import asarray
    a, v = asarray(x1), asarray(x2)
    _realized(a, v, *([sorter] if isinstance(sorter, Tensor) else []))
    s = _host(sorter, "searchsorted") if isinstance(sorter, Tensor) else sorter
    return _as_tensor(np.searchsorted(_host(a, "searchsorted"), _host(v, "searchsorted"), side=side, sorter=s))


def unique_values(x, /):
    return _as_tensor(_numpy_call("unique_values", np.unique_values, x))


def unique_counts(x, /):
    r = _numpy_call("unique_counts", np.unique_counts, x)
    return type(r)(*[_as_tensor(a) for a in r])


def _inverse_shaped(r, shape):
    """The standard's inverse_indices have x's shape (NumPy's of a 0-d x is 1-d)."""
    return r._replace(inverse_indices=r.inverse_indices.reshape(shape))


def unique_inverse(x, /):
    r = _inverse_shaped(_numpy_call("unique_inverse", np.unique_inverse, x), tuple(x.shape))
    return type(r)(*[_as_tensor(a) for a in r])


def unique_all(x, /):
    r = _inverse_shaped(_numpy_call("unique_all", np.unique_all, x), tuple(x.shape))
    return type(r)(*[_as_tensor(a) for a in r])


def reshape(x, shape, copy=None):
    if copy is False:
        raise ValueError("reshape: copy=False cannot be promised: braze's reshape is a view where strides allow, "
                         "else a lazy copy")
    r = _numpy_reshape(x, shape)  # a view where NumPy's is one
    return _core.copy(r) if copy else r


def permute_dims(x, axes):
    return _core.permute_dims(x, [axes] if isinstance(axes, int) else list(axes))


def _array_namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12"):
        raise ValueError(f"__array_namespace__: api_version {api_version!r} is not supported (2023.12 and earlier)")
    import braze
    return braze


def _to_device(self, device, /, *, stream=None):
    return self.to(str(device))


def _index(self):
    if self.ndim != 0 or self.dtype.kind not in "iu":
        raise TypeError(f"only 0-d integer tensors can be used as an index, not a {self.dtype.name} tensor of "
                        f"shape {list(self.shape)}")
    return int(self.item())


def install():
    Tensor.__array_namespace__ = _array_namespace
    Tensor.to_device = _to_device
    Tensor.__index__ = _index


# Functions NumPy's __array_function__ hands to braze (the same names in NumPy).
FUNCTIONS = ["unique_values", "unique_counts", "unique_inverse", "unique_all",
             "broadcast_arrays", "real", "imag", "unstack", "vecdot", "cumulative_sum", "cumulative_prod"]

__all__ = FUNCTIONS + ["reshape", "permute_dims", "sort", "argsort", "searchsorted", "isdtype", "result_type", "can_cast", "from_dlpack", "__array_namespace_info__",
                       "__array_api_version__"]
