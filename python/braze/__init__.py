"""braze: a graph-fusing JIT runtime for tensors, with a NumPy-style API.

Operations on braze tensors are recorded lazily; ``.numpy()`` or
``braze.realize(...)`` evaluates them. See the README for the tour.
"""

import builtins as _builtins
import contextlib
import copyreg as _copyreg
import importlib as _importlib
import os as _os
import sys as _sys
import operator as _operator

# oneDNN runs matmul/conv2d on OpenMP threads, which by default spin after
# each parallel region; between library calls braze's own kernels then
# compete with spinning threads for the cores (measured on a busy 2-core
# machine: a transformer block took 300 ms instead of 24). Passive OpenMP
# threads sleep at once. Read by libgomp when _core loads it, so set before
# that import; a value the user set wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# One knob for both pools: BRAZE_NUM_THREADS also sizes oneDNN's team.
if "BRAZE_NUM_THREADS" in _os.environ:
    _os.environ.setdefault("OMP_NUM_THREADS", _os.environ["BRAZE_NUM_THREADS"])

import ml_dtypes as _ml_dtypes
import numpy as _np

from . import _core
from ._core import Tensor
from ._copyto import copyto
from ._jit import jit
from ._join import *  # noqa: F401,F403 (the names in _join.__all__)
from ._numpy_functions import *  # noqa: F401,F403
from . import _numpy_functions
from ._inverse_trig import *  # noqa: F401,F403
from ._pad import pad  # noqa: F401 (NumPy's pad, lazily: Note [Windows])
from ._ufunc_math import *  # noqa: F401,F403
from ._quantiles import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._grids import *  # noqa: F401,F403
from ._selection import *  # noqa: F401,F403
from ._differences import *  # noqa: F401,F403
from . import _ufunc_math, _quantiles, _statistics, _grids, _selection, _differences
from ._more_numpy import *  # noqa: F401,F403 (isin, delete, insert, fill_diagonal, ...)
from . import _more_numpy
from ._rearranging import *  # noqa: F401,F403
from ._math_extras import *  # noqa: F401,F403
from ._on_host import *  # noqa: F401,F403
from . import _rearranging, _math_extras, _on_host
from ._einsum import *  # noqa: F401,F403
from . import _einsum
from . import linalg  # noqa: E402 (bz.linalg)
from . import _inplace, _views
from . import _ndarray_methods
from . import _gather
from ._gather import *  # noqa: F401,F403
from . import _array_api
from ._array_api import *  # noqa: F401,F403 (the array API's names NumPy's do not cover)
from . import _reductions
from ._reductions import *  # noqa: F401,F403 (sum, mean, ...: the core's, with dtype= and out=)
from . import _numpy_protocols
from . import autodiff
from . import optim  # noqa: E402 (bz.optim)
from . import random  # noqa: E402 (bz.random)
from . import quant  # noqa: E402 (bz.quant)
from .quant import quantize, dequantize  # noqa: F401
from .autodiff import grad, value_and_grad, vjp, checkpoint, no_grad, enable_grad, is_grad_enabled  # noqa: F401

# Note [Dtype names]
# As in NumPy: a tensor's .dtype is a NumPy dtype object, and the names
# bz.float32, bz.int64, ... are NumPy's scalar types (ml_dtypes' for
# bfloat16), so x.dtype == bz.float32 reads as in NumPy and
# bz.float32(0.5), bz.float64(x.sum()) make NumPy scalars. Every dtype
# argument is read by _as_dtype, which takes either. Code here that needs the
# dtype object (.kind, .name, a dict key) takes it from _DTYPES: a dtype and
# its scalar type are equal but hash apart.
_DTYPES = {d.name: d for d in map(_np.dtype, ("bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "int64",
                                               "float16", _ml_dtypes.bfloat16, "float32", "float64"))}
bool_ = _np.bool_
bool = bool_  # the array API's name  # noqa: A001
uint8 = _np.uint8
int8 = _np.int8
uint16 = _np.uint16
int16 = _np.int16
uint32 = _np.uint32
int32 = _np.int32
int64 = _np.int64
float16 = _np.float16
bfloat16 = _ml_dtypes.bfloat16
float32 = _np.float32
float64 = _np.float64


# Note [Dtype spellings]
# A dtype argument means what NumPy means by it, wherever braze takes one:
# np.dtype reads it first ("i8" and "<i8" are int64, "f8" float64, "float"
# float64, np.float32, float, np.dtype objects), so NumPy-written code
# (Dask's "f8") gets what it asks for. braze's own short names are read
# only where NumPy reads nothing: "f32", "bf16", "i32", ... ("i8", "u8" and
# "f16" are NumPy's int64, uint64 and float128). The core is handed the
# canonical name only.
_SHORT = {short: _DTYPES[name] for short, name in (("bf16", "bfloat16"), ("bfloat16", "bfloat16"), ("f32", "float32"),
                                                ("f64", "float64"), ("i16", "int16"), ("u16", "uint16"),
                                                ("i32", "int32"), ("u32", "uint32"), ("i64", "int64"))}


# Dtype arguments met before, by value (np.dtype's .name is Python code in
# NumPy: 3 us a call, and np.float64(0.3) - t asked for it three times).
_AS_DTYPE = {}


def _as_dtype(dtype):
    """A dtype argument (anything np.dtype reads, or one of braze's short
    names) as braze's dtype, a NumPy dtype object; None stays None. A
    dtype braze lacks is a ValueError (Note [Dtype spellings])."""
    if dtype is None:
        return None
    try:
        return _AS_DTYPE[dtype]
    except (KeyError, TypeError):  # TypeError: an unhashable argument
        pass
    result = _read_dtype(dtype)
    try:
        _AS_DTYPE[dtype] = result
    except TypeError:
        pass
    return result


def _read_dtype(dtype):
    try:
        d = _np.dtype(dtype)
    except TypeError:
        if isinstance(dtype, str) and dtype in _SHORT:
            return _SHORT[dtype]
        raise ValueError(f"unknown dtype {dtype!r}; braze supports {', '.join(_DTYPES)}") from None
    if d.name not in _DTYPES:
        read = f" (NumPy reads {dtype!r} as {d.name})" if isinstance(dtype, str) and dtype != d.name else ""
        raise ValueError(f"unsupported dtype {d.name!r}{read}; braze supports {', '.join(_DTYPES)}")
    return _DTYPES[d.name]  # native byte order: ">f4" is float32


_NAMES = {d: name for name, d in _DTYPES.items()}


def _dtype_name(dtype):
    """The canonical name of a dtype argument, as the core reads it; None stays None."""
    d = _as_dtype(dtype)
    return None if d is None else _NAMES[d]


def asarray(obj, dtype=None, device=None, copy=None):
    """A tensor holding a copy of ``obj`` (an array, a nested list, a scalar).

    NumPy arrays and NumPy scalars keep their dtype; Python lists and
    numbers take braze's defaults (float32, int64, bool). ``copy`` as in
    the array API: True always copies, False never does (a ValueError
    where it would have to: data from outside braze is always copied in),
    None copies only where needed.
    """
    if isinstance(obj, Tensor):
        out = obj if dtype is None or _as_dtype(dtype) == obj.dtype else obj.astype(dtype)
        out = out if device is None else out.to(device)
        if copy is False and out is not obj:
            raise ValueError("asarray: copy=False, but a new dtype or device needs a copy")
        return _core.copy(out) if copy and out is obj else out
    if copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} is always copied into braze's memory")
    keeps_dtype = isinstance(obj, (_np.ndarray, _np.generic)) or hasattr(obj, "__array__")
    arr = _np.asarray(obj)
    if dtype is None and not keeps_dtype and arr.dtype == _np.float64:
        dtype = float32
    d = _as_dtype(arr.dtype if dtype is None else dtype)
    arr = arr.astype(d, copy=False)  # native byte order too
    raw = _np.ascontiguousarray(arr).reshape(-1).view(_np.uint8)
    return _core._from_bytes(raw, _NAMES[d], list(arr.shape), device)


tensor = asarray


def zeros(shape, dtype=None, device=None):
    # dtype=None is the default float, as in NumPy (braze's is float32), not
    # the int64 that the fill value 0 alone would give.
    return _core.full(_shape(shape), 0, _dtype_name(float32 if dtype is None else dtype), device)


def ones(shape, dtype=None, device=None):
    return _core.full(_shape(shape), 1, _dtype_name(float32 if dtype is None else dtype), device)


def full(shape, fill_value, dtype=None, device=None):
    return _core.full(_shape(shape), fill_value, _dtype_name(dtype), device)


def zeros_like(x, dtype=None, device=None, *, shape=None):
    return full_like(x, 0, dtype, device, shape=shape)


def ones_like(x, dtype=None, device=None, *, shape=None):
    return full_like(x, 1, dtype, device, shape=shape)


def full_like(x, fill_value, dtype=None, device=None, *, shape=None):
    """A tensor like ``x`` (its shape, dtype and device) filled with
    ``fill_value``; ``shape`` (NumPy's keyword) gives it another shape."""
    return full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype,
                device or x.device)


def arange(start, stop=None, step=1, dtype=None, device=None):
    if stop is None:
        start, stop = 0, start
    return _core._arange(start, stop, step, _dtype_name(dtype), device)


def _shape(shape):
    return [shape] if isinstance(shape, int) else [_operator.index(d) for d in shape]


def realize(*tensors):
    """Realize several tensors as one graph (``realize(a, b)`` or
    ``realize([a, b])``); returns them."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        _core.realize(list(tensors[0]))
        return tensors[0]
    _core.realize(list(tensors))
    return tensors[0] if len(tensors) == 1 else tensors


def explain(*tensors, file=None):
    """Print (to ``file``, default stdout) how the graph that computes
    ``tensors`` is fused: each kernel with its ops, inputs and strides, its
    outputs, and for every edge that was not fused, why; then the memory
    plan: each intermediate buffer's live interval (in steps), size and
    offset in the arena, the arena's size (the peak), the lower bound and
    the total without reuse. Realizes nothing. Returns the text."""
    text = _core.explain(list(tensors))
    print(text, end="", file=file if file is not None else _sys.stdout)
    return text


def stats():
    """braze's counters (docs/stats.md) as a dict."""
    return dict(_core.stats())


def reset_stats():
    _core.reset_stats()


def save_graph(tensors, path, with_data=True):
    """Save the graph that computes ``tensors`` (one or a list) as JSON."""
    ts = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    _core.save_graph(ts, str(path), with_data)


def load_graph(path):
    """The tensors saved by save_graph, lazy, as a list."""
    return _core.load_graph(str(path))


def synchronize(device=None):
    """Waits until every kernel launched on ``device`` (default: the current
    default device, see ``bz.device``) has finished. Realizing on a CUDA
    device returns once its kernels are launched, before they end; copies
    to the host (``.numpy()``) wait by themselves, so only timing needs
    this. On the CPU it returns at once."""
    _core._synchronize(_core._default_device() if device is None else device)


@contextlib.contextmanager
def device(name):
    """Tensors created inside the block default to ``name`` ("cpu", "cuda")."""
    previous = _core._default_device()
    _core._set_default_device(name)
    try:
        yield
    finally:
        _core._set_default_device(previous)


def ops():
    """The op table, one dict per row: name, api, arity, kind, rule (the dtype
    rule), commutative, numpy, auto."""
    return _core.ops()


# --- Tensor methods written in Python ------------------------------------


def _numpy(self):
    """The value as a read-only NumPy array (realizes if needed; a CUDA
    tensor's value is copied to the host)."""
    if self.requires_grad:
        # What NumPy computes from it would carry no gradient: a silent zero
        # (bz.sort, linalg, index arrays all compute on the host through here).
        raise ValueError(f"numpy(): this tensor (shape {list(self.shape)}) requires a gradient, which cannot "
                         "flow through NumPy; use x.detach().numpy() for its value (docs/autodiff.md)")
    arr = self._raw_bytes().view(_DTYPES[self._dtype_name]).reshape(self.shape)
    return arr


def _array(self, dtype=None, copy=None):
    arr = _numpy(self)
    if dtype is not None:
        arr = arr.astype(dtype)
    return arr.copy() if copy else arr


def _to(self, dev):
    """The tensor on device ``dev`` ("cpu", "cuda", "cuda:1"): realized
    where it is and copied; ``self`` when it is there already. Transfers
    happen only where asked (here, ``.numpy()`` and ``.item()``)."""
    if _core._device_name(str(dev)) == self.device:
        return self
    return _core._to(self, str(dev))


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack export of the realized tensor, without a copy (CPU and CUDA
    tensors; not host-emulated CUDA memory). The device's work is finished
    first, so any consumer stream may read it."""
    if copy:
        fresh = _core.copy(self)  # a copy of its own, realized: the consumer owns what it gets
        fresh.realize()
        return _dlpack(fresh, stream=stream, max_version=max_version, dl_device=dl_device)
    if dl_device is not None and tuple(dl_device) != _dlpack_device(self):
        raise BufferError(f"__dlpack__: the tensor is on {self.device}, not on DLPack device {tuple(dl_device)}")
    try:
        return self._dlpack_view()  # a "dltensor" capsule (DLPack 0.x, which every consumer reads)
    except RuntimeError as e:  # DLPack's error for "cannot export this"
        raise BufferError(str(e)) from None


def _dlpack_device(self):
    """(device type, index) as DLPack numbers them: (1, 0) CPU, (2, N) CUDA."""
    kind, _, index = self.device.partition(":")
    return (2, int(index)) if kind == "cuda" else (1, 0)


def _cuda_array_interface(self):
    """Version 3 of Numba's CUDA array interface, for a realized CUDA tensor."""
    # AttributeError where there is no such interface, so that hasattr()
    # probes (CuPy's, Numba's) answer False instead of failing.
    if not self.device.startswith("cuda"):
        raise AttributeError(f"__cuda_array_interface__: the tensor is on {self.device}, not a CUDA device")
    if self.dtype == bfloat16:
        raise AttributeError("__cuda_array_interface__ has no bfloat16; use DLPack (__dlpack__)")
    try:
        ptr = self._cuda_pointer()
    except RuntimeError as e:
        raise AttributeError(str(e)) from None
    # stream None: _cuda_pointer synchronized, so the memory is ready on every stream.
    return {"shape": tuple(self.shape), "typestr": self.dtype.str, "data": (ptr, False), "version": 3,
            "strides": None, "stream": None}


def _scalar(convert):
    def method(self):
        if self.size != 1:
            raise ValueError(
                f"only a one-element tensor converts to a Python scalar; this one has shape {self.shape}")
        return convert(self.item())
    return method


def _bool(self):
    if self.size != 1:
        raise ValueError("the truth value of a tensor with more than one element is ambiguous; "
                         "use bz.any-style reductions or .item()")
    return _builtins.bool(self.item())


def _reduce(self):
    """Pickling (and copy.copy): the realized values as an ndarray (passed
    out of band under pickle protocol 5) and the device; never the lazy
    graph, which would drag its inputs along and be computed again."""
    return asarray, (self.numpy(), None, self.device)


def astype(x, dtype, copy=True, device=None):
    """``x`` converted to ``dtype`` (a NumPy dtype, a braze dtype or a name);
    ``copy=False`` returns x itself when it has that dtype already."""
    out = x if not copy and x.dtype == _as_dtype(dtype) else _core.astype(x, _dtype_name(dtype))
    return out if device is None else out.to(device)


Tensor.astype = astype
Tensor.dtype = property(lambda self: _DTYPES[self._dtype_name], doc="the element type, a NumPy dtype")
Tensor.numpy = _numpy
Tensor.__array__ = _array
Tensor.__array_priority__ = 1000
Tensor.to = _to
Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
Tensor.__cuda_array_interface__ = property(_cuda_array_interface)
Tensor.__float__ = _scalar(float)
Tensor.__int__ = _scalar(int)
Tensor.__bool__ = _bool
Tensor.__complex__ = _scalar(complex)
Tensor.__hash__ = None
Tensor.__floordiv__ = lambda self, other: floor_divide(self, other)  # noqa: F405
Tensor.__rfloordiv__ = lambda self, other: floor_divide(other, self)  # noqa: F405
Tensor.__pos__ = lambda self: positive(self)  # noqa: F405
Tensor.any = lambda self, axis=None, keepdims=False: any(self, axis, keepdims=keepdims)  # noqa: F405
Tensor.all = lambda self, axis=None, keepdims=False: all(self, axis, keepdims=keepdims)  # noqa: F405
Tensor.clip = lambda self, min=None, max=None: clip(self, min, max)  # noqa: F405
Tensor.ravel = lambda self, order="C": ravel(self, order)  # noqa: F405
Tensor.tolist = lambda self: self.numpy().tolist()
Tensor.__reduce__ = _reduce
_inplace.install()  # x += y, x[key] = value (Note [In-place updates])
_reductions.install()  # t.sum(..., dtype=, out=) and the other reductions
_gather.install()  # x[index_array], x[mask]
_views.install()  # views made by indexing write through to their base (after _gather: it wraps __getitem__)
_array_api.install()  # x.__array_namespace__() is this module
_ndarray_methods.install()  # x.dot(w), x.cumsum(), x.sort(), x.real: ndarray's methods


def _export_core_functions():
    for name in dir(_core):
        if not name.startswith("_") and name not in globals():
            globals()[name] = getattr(_core, name)


_export_core_functions()


# NumPy's signatures where they are wider than the op row's (braze in
# numpy's place: the core's functions take tensors only).
def where(condition, x=None, y=None, /):
    """A select of x and y by condition, lazy; with the condition alone,
    NumPy's one-argument form: its nonzero (which realizes: _gather.py)."""
    if x is None and y is None:
        return nonzero(condition)  # noqa: F405
    if x is None or y is None:
        raise TypeError("where: takes a condition alone, or a condition and two values")
    return _core.where(condition, x, y)


def round(x, decimals=0, out=None):  # noqa: A001
    """Round half to even; to `decimals` places as NumPy's round does."""
    if decimals == 0 and out is None:
        return _core.round(x)
    return around(x, decimals, out)  # noqa: F821 (NumPy's, from _numpy_protocols)


# Views that write through, and read-only views, as NumPy's
# (python/braze/_views.py); braze's own code calls _core's.
for _name in _views.FUNCTIONS:
    globals()[_name] = _views.tracking(globals()[_name], getattr(_np, _name))
linalg.matrix_transpose = _views.tracking(linalg.matrix_transpose, _np.linalg.matrix_transpose)
broadcast_to = _views.read_only_results(broadcast_to)  # noqa: F821 (exported from _core above)
broadcast_arrays = _views.read_only_results(broadcast_arrays)  # noqa: F405

# NumPy's names for the array API's bitwise_invert and shifts.
bitwise_not = invert = bitwise_invert  # noqa: F821 (exported from _core above)
left_shift = bitwise_left_shift  # noqa: F821
right_shift = bitwise_right_shift  # noqa: F821

# NumPy's dtype aliases, dtype questions and state (python/braze/_numpy_names.py).
from . import _numpy_names  # noqa: E402
_numpy_names.install(_sys.modules[__name__])

# NumPy functions on tensors stay lazy (np.exp(t), np.mean(t), ndarray + t).
_numpy_protocols.install(_sys.modules[__name__])


# braze's compiled functions (bz.exp, bz.relu: nanobind's nb_func) pickle
# by name, as Python functions do, so they can be the tasks of a process
# pool or of Dask (``client.submit(bz.exp, t)``). nb_func is one immutable
# type shared by every nanobind module, so it cannot take a __reduce__ of
# braze's (in Python or in C++): copyreg's table is the only hook. Another
# module's nb_func goes to the reducer registered before, or pickle's error.
_nb_func = type(_core.exp)
_nb_func_reducer = _copyreg.dispatch_table.get(_nb_func)


def _reduce_core_function(f):
    name = getattr(f, "__name__", "")
    if getattr(f, "__module__", None) == _core.__name__ and getattr(_core, name, None) is f:
        return name  # a global name: pickle stores braze._core.<name>
    if _nb_func_reducer is not None:
        return _nb_func_reducer(f)
    raise TypeError(f"cannot pickle {_nb_func.__module__}.{_nb_func.__name__} objects")


_copyreg.pickle(_nb_func, _reduce_core_function)


def __getattr__(name):
    """``bz.dask`` imports braze.dask on first use: ``import braze`` never imports Dask."""
    if name == "dask":
        return _importlib.import_module("braze.dask")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
