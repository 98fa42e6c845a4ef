"""NumPy's protocols for braze tensors: ``__array_ufunc__`` (NEP 13) and
``__array_function__`` (NEP 18).

A NumPy function called on a braze tensor runs braze's own op and returns
a lazy braze tensor, so NumPy-written code (``np.exp(t)``, ``np.mean(t,
axis=0)``, ``ndarray + t``) stays lazy and fuses. A function braze has no
equivalent of is a ``TypeError`` naming it, never a silent conversion to
NumPy (issue 22: ``np.where``/``np.split`` realized the tensor and returned
ndarrays). ``np.asarray(t)`` and ``.numpy()`` still convert: they go
through ``__array__``, which these protocols leave alone.

The ufuncs come from the op table (``bz.ops()``: each row names its NumPy
function), so a new element-wise row is reachable from NumPy with no edit
here; the other functions are the table ``_FUNCTIONS`` below.
"""

import builtins

import numpy as np

from ._copyto import write_out


def _unsupported(what, detail=""):
    return TypeError(f"{what}: braze has no equivalent{detail}; convert with np.asarray(t) or t.numpy() first "
                     "if a NumPy result is meant")


def _built(bz):
    """The modules of NumPy functions and ufuncs built from braze's ops, each
    with its FUNCTIONS and UFUNCS lists."""
    return (bz._ufunc_math, bz._quantiles, bz._statistics, bz._grids, bz._selection, bz._differences,
            bz._more_numpy, bz._rearranging, bz._math_extras, bz._on_host, bz._numpy_names)


def _ufuncs(bz):
    """NumPy ufunc -> braze function, from the op table."""
    table = {}
    for row in bz.ops():
        fn = getattr(np, row["numpy"], None) if row["numpy"] else None
        if isinstance(fn, np.ufunc) and hasattr(bz, row["api"]):
            table[fn] = getattr(bz, row["api"])
    table[np.matmul] = bz.matmul
    composites = bz._numpy_functions.UFUNCS + ["arctan", "arctan2", "arcsin", "arccos"]
    composites += [name for module in _built(bz) for name in module.UFUNCS]
    for name in composites:  # composites of braze's ops
        table[getattr(np, name)] = getattr(bz, name)
    return table


# ufunc.reduce -> the braze reduction that is the same fold.
_REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min"}
# logical_and.reduce is all, logical_or.reduce any (bool results, as NumPy's).
_LOGICAL_REDUCE = {np.logical_and: "all", np.logical_or: "any"}
# Which ufunc each reduction folds with (for initial=).
_FOLD = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def masked_reduction(bz, name, a, axis, keepdims, where=True, initial=np._NoValue):
    """NumPy's reduction ``name`` (sum, prod, max, min) with its where= and
    initial=: the elements where ``where`` is False are replaced by the
    fold's identity (or by ``initial``, which NumPy requires for max and
    min), and ``initial`` joins the fold as one more element, so an empty
    reduction gives it. Lazy: a select and the reduction, one kernel."""
    fold = _FOLD[name]
    if where is not True:
        if name in ("max", "min") and initial is np._NoValue:
            raise ValueError(f"numpy.{name}: reduction with where= needs an initial value (as in NumPy)")
        fill = {"sum": 0, "prod": 1}.get(name, initial)  # the identity; max/min: initial, folded in anyway
        a = bz.where(bz.asarray(where), a, bz.astype(bz.asarray(fill), a.dtype.name))
    if initial is np._NoValue:
        return getattr(bz, name)(a, axis=axis, keepdims=keepdims)
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    if any(a.shape[d] == 0 for d in axes):  # an empty fold is initial alone (max/min have no identity)
        shape = bz.sum(a, axis=axis, keepdims=keepdims).shape
        return bz.full(shape, initial, a.dtype)
    return bz.asarray(fold(getattr(bz, name)(a, axis=axis, keepdims=keepdims), initial)).astype(a.dtype)


def _dtype(bz, op, dtype):
    """NumPy's dtype argument as braze's (None stays None). One braze lacks
    (structured, complex, object) is a TypeError naming the op, as NumPy's
    protocols answer what they cannot do (Dask's arg reductions then keep
    their pairs in a dict)."""
    try:
        return bz._as_dtype(dtype)
    except ValueError as e:
        raise TypeError(f"numpy.{op}: {e}") from None


def array_ufunc(bz, ufuncs):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        out = kwargs.pop("out", None)
        dtype = kwargs.pop("dtype", None)
        where = kwargs.pop("where", True)
        if where is not True and (method != "__call__" or out is None):
            # Without out=, NumPy leaves the masked-out elements uninitialised.
            raise _unsupported(f"numpy.{name}(where=...)", " without out=")
        if kwargs.get("casting", "same_kind") != "same_kind" or kwargs.get("order", "K") != "K":
            raise _unsupported(f"numpy.{name} with casting= or order=")
        kwargs.pop("casting", None), kwargs.pop("order", None), kwargs.pop("subok", None)
        if method == "at":  # in place, before the operands become tensors: the index may be a tuple
            return bz._more_numpy.at(ufunc, *inputs)
        if method == "reduceat":  # the indices stay integers whatever dtype= says
            if kwargs.keys() - {"axis"}:
                raise _unsupported(f"numpy.{name}.reduceat", f" for the keyword(s) {', '.join(kwargs)}")
            return write_out(bz._more_numpy.reduceat(ufunc, *inputs, axis=kwargs.get("axis", 0), dtype=dtype), out,
                             f"numpy.{name}.reduceat")
        args = [x if isinstance(x, bz.Tensor) or np.isscalar(x) and not isinstance(x, np.generic)
                else bz.asarray(x) for x in inputs]
        if dtype is not None:
            args = [bz.astype(x, dtype) if isinstance(x, bz.Tensor) else x for x in args]
        if method == "__call__":
            fn = ufuncs.get(ufunc)
            if fn is None:
                raise _unsupported(f"numpy.{name}")
            if kwargs:
                raise _unsupported(f"numpy.{name}", f" for the keyword(s) {', '.join(kwargs)}")
            result = fn(*args)
            if where is not True:  # out keeps its values where the mask is False
                if isinstance(result, tuple):
                    raise _unsupported(f"numpy.{name}(where=...)", " for a ufunc of several outputs")
                target = out[0] if isinstance(out, tuple) else out
                result = bz.where(bz.asarray(where), result, bz.asarray(target))
            if isinstance(result, tuple):  # frexp, modf, divmod: an out per output, as NumPy passes them
                outs = (None,) * len(result) if out is None else out
                return tuple(write_out(r, o, f"numpy.{name}", "same_kind") for r, o in zip(result, outs))
            return write_out(result, out, f"numpy.{name}", "same_kind")
        if method == "reduce" and ufunc in _REDUCE:
            axis = kwargs.pop("axis", 0)
            keepdims = kwargs.pop("keepdims", False)
            initial = kwargs.pop("initial", np._NoValue)
            if kwargs:
                raise _unsupported(f"numpy.{name}.reduce", f" for the keyword(s) {', '.join(kwargs)}")
            result = masked_reduction(bz, _REDUCE[ufunc], bz.asarray(args[0]), axis, keepdims, initial=initial)
            return write_out(result, out, f"numpy.{name}")
        if method == "reduce" and ufunc in _LOGICAL_REDUCE and not kwargs.keys() - {"axis", "keepdims"}:
            result = getattr(bz, _LOGICAL_REDUCE[ufunc])(bz.asarray(args[0]), axis=kwargs.get("axis", 0),
                                                         keepdims=kwargs.get("keepdims", False))
            return write_out(result, out, f"numpy.{name}")
        if method == "accumulate" and not kwargs.keys() - {"axis"}:  # add, multiply, maximum, ...
            return write_out(bz._more_numpy.accumulate(ufunc, args[0], axis=kwargs.get("axis", 0)), out,
                             f"numpy.{name}")
        if method == "outer" and ufunc.nin == 2 and ufunc in ufuncs and not kwargs:
            # a[i, j, ...] op b[k, ...]: a gains b's axes at the end, and broadcasting does the rest.
            a, b = (bz.asarray(x) for x in args)
            return write_out(ufuncs[ufunc](bz.reshape(a, list(a.shape) + [1] * b.ndim), b), out,
                             f"numpy.{name}")
        raise _unsupported(f"numpy.{name}.{method}")
    return __array_ufunc__


# NumPy's parameters after the array, in its positional order.
_REDUCTION_PARAMETERS = {"max": ("axis", "out", "keepdims"), "min": ("axis", "out", "keepdims"),
                         "var": ("axis", "dtype", "out", "ddof", "keepdims"),
                         "std": ("axis", "dtype", "out", "ddof", "keepdims")}


def _reduction(bz, name):
    parameters = _REDUCTION_PARAMETERS.get(name, ("axis", "dtype", "out", "keepdims"))

    def call(a, *args, **kw):
        kw.update(zip(parameters, args))
        where, initial = kw.pop("where", True), kw.pop("initial", np._NoValue)
        if where is not True or initial is not np._NoValue:
            if name not in _FOLD or kw.get("dtype") is not None or set(kw) - {"axis", "out", "keepdims"}:
                raise _unsupported(f"numpy.{name}(where=/initial=)")
            result = masked_reduction(bz, name, bz.asarray(a), kw.get("axis"), kw.get("keepdims", False), where,
                                      initial)
            return write_out(result, kw.get("out"), f"numpy.{name}")
        if name in ("std", "var"):
            kw["correction"] = kw.pop("ddof", kw.pop("correction", 0))
        extra = set(kw) - {*parameters, "correction"}
        if extra:
            raise _unsupported(f"numpy.{name}", f" for the keyword(s) {', '.join(sorted(extra))}")
        return getattr(bz, name)(bz.asarray(a), **kw)
    return call


def _functions(bz):
    """NumPy function -> braze implementation, keywords as NumPy takes them."""
    def arg(name):
        def call(a, axis=None, out=None, *, keepdims=False):
            return write_out(getattr(bz, name)(bz.asarray(a), axis=axis, keepdims=keepdims), out, f"numpy.{name}")
        return call

    def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
        if order not in ("C", "F"):
            raise _unsupported("numpy.reshape(order=...)", f" for order={order!r}")
        shape = newshape if shape is None else shape
        a = bz.asarray(a)
        result = bz._views.reshape(a, shape, order)
        if copy is False and result is not a and not bz._views.tracked(result):
            raise ValueError("numpy.reshape: unable to avoid creating a copy while reshaping (copy=False), as in "
                             "NumPy: the tensor's strides do not allow a view of this shape")
        return bz.copy(result) if copy else result

    def where(condition, *xy):
        if not xy:
            return bz.nonzero(condition)  # NumPy's one-argument form (realizes: python/braze/_gather.py)
        if len(xy) != 2:
            raise TypeError("where: takes a condition alone, or a condition and two values")
        return bz.where(condition, *xy)

    def round_(a, decimals=0, out=None):
        """NumPy's: scaled by 10^decimals, rounded half to even, scaled back
        (for integers, decimals >= 0 keeps them, fewer round in the type)."""
        a = bz.asarray(a)
        if decimals == 0:
            result = bz.round(a)
        elif a.dtype.kind in "iub":
            result = a if decimals > 0 else bz.astype(bz.round(a / 10.0 ** -decimals) * 10 ** -decimals, a.dtype.name)
        elif decimals > 0:
            result = bz.round(a * 10.0 ** decimals) / 10.0 ** decimals
        else:
            result = bz.round(a / 10.0 ** -decimals) * 10.0 ** -decimals
        return write_out(bz.astype(result, a.dtype.name) if result.dtype != a.dtype else result, out, "numpy.round")

    def like(op, make):  # zeros_like, ones_like, empty_like; NumPy's order= does not change values
        def call(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
            return make(bz.asarray(a), dtype=_dtype(bz, op, dtype), device=device, shape=shape)
        return call

    def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
        return bz.full_like(bz.asarray(a), fill_value, _dtype(bz, "full_like", dtype), device, shape=shape)

    # NEP 35: np.zeros(..., like=t) and the other creation functions make
    # braze tensors, with braze's function (and its defaults: float32, as
    # bz.zeros); NumPy's order= only lays out memory, so it is ignored.
    def asarray(a, dtype=None, order=None, *, device=None, copy=None):
        return bz.asarray(a, _dtype(bz, "asarray", dtype), device, copy)

    def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0):
        t = bz.asarray(object, _dtype(bz, "array", dtype), copy=copy)
        return bz.reshape(t, [1] * (ndmin - t.ndim) + list(t.shape)) if t.ndim < ndmin else t

    def created(op, make):
        def call(shape, dtype=None, order="C", *, device=None):
            return make(shape, _dtype(bz, op, dtype), device)
        return call

    def full(shape, fill_value, dtype=None, order="C", *, device=None):
        return bz.full(shape, fill_value, _dtype(bz, "full", dtype), device)

    def arange(start, stop=None, step=None, dtype=None, *, device=None):
        return bz.arange(start, stop, 1 if step is None else step, _dtype(bz, "arange", dtype), device)

    def flat_or(a, axis):
        a = bz.asarray(a)
        return (bz.reshape(a, [-1]), 0) if axis is None else (a, axis)

    def sort(a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise _unsupported("numpy.sort(order=...)")
        x, ax = flat_or(a, axis)
        return bz.sort(x, axis=ax)

    def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise _unsupported("numpy.argsort(order=...)")
        x, ax = flat_or(a, axis)
        return bz.argsort(x, axis=ax)

    def scan(name):
        def call(a, axis=None, dtype=None, out=None):
            if out is not None:
                raise _unsupported(f"numpy.{name}(out=...)")
            x, ax = flat_or(a, axis)
            return getattr(bz, "cumulative_" + name[3:])(x, axis=ax, dtype=dtype)
        return call

    def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True):
        # NumPy's own, on the realized values: sorted (the array API's
        # unique_values need not be, and NumPy 2's is not), rows with axis=,
        # and the shape depends on the values anyway.
        r = bz._array_api._numpy_call("unique", np.unique, ar, return_index=return_index,
                                      return_inverse=return_inverse, return_counts=return_counts, axis=axis,
                                      equal_nan=equal_nan)
        return tuple(bz.asarray(part) for part in r) if isinstance(r, tuple) else bz.asarray(r)

    def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kw):
        if kw:
            raise _unsupported("numpy.clip", " with ufunc keywords")
        lo = None if a_min is np._NoValue else a_min
        hi = None if a_max is np._NoValue else a_max
        result = bz.clip(a, lo if min is np._NoValue else min, hi if max is np._NoValue else max)
        return write_out(result, out, "numpy.clip", "same_kind")  # np.clip(g, -5, 5, out=g): in place

    def dot(a, b, out=None):
        a, b = bz.asarray(a), bz.asarray(b)
        if a.ndim == 0 or b.ndim == 0:
            result = a * b
        elif a.ndim > 2 or b.ndim > 2:  # a's last axis with b's second-to-last (its only one when 1-D)
            result = bz.tensordot(a, b, axes=([a.ndim - 1], [builtins.max(b.ndim - 2, 0)]))
        else:
            result = bz.matmul(a, b)
        return write_out(result, out, "numpy.dot")

    def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
        # NumPy's dtype when none is given: its result type of the endpoints
        # and a float (float32 endpoints stay float32), not braze's float32.
        if dtype is None:
            dtype = np.result_type(*(x.dtype if isinstance(x, bz.Tensor) else x for x in (start, stop)), float(num))
        return bz.linspace(start, stop, num, endpoint, retstep, dtype, axis, device=device)

    table = {
        np.linspace: linspace,
        # dtype questions about tensors: NumPy's answers for their dtypes
        np.result_type: lambda *xs: np.result_type(*(x.dtype if isinstance(x, bz.Tensor) else x for x in xs)),
        np.sum: _reduction(bz, "sum"), np.prod: _reduction(bz, "prod"), np.mean: _reduction(bz, "mean"),
        np.max: _reduction(bz, "max"), np.min: _reduction(bz, "min"), np.amax: _reduction(bz, "max"),
        np.amin: _reduction(bz, "min"), np.std: _reduction(bz, "std"), np.var: _reduction(bz, "var"),
        np.argmax: arg("argmax"), np.argmin: arg("argmin"),
        np.transpose: lambda a, axes=None: bz.transpose(bz.asarray(a), None if axes is None else list(axes)),
        np.permute_dims: lambda a, axes=None: bz.transpose(bz.asarray(a), None if axes is None else list(axes)),
        np.matrix_transpose: lambda x: bz.matrix_transpose(bz.asarray(x)),
        np.reshape: reshape, np.where: where, np.round: round_, np.around: round_,
        np.squeeze: lambda a, axis=None: bz.squeeze(bz.asarray(a), axis),
        np.expand_dims: lambda a, axis: bz.expand_dims(bz.asarray(a), axis),
        np.broadcast_to: lambda array, shape, subok=False: bz.broadcast_to(
            bz.asarray(array), [shape] if isinstance(shape, int) else list(shape)),
        np.zeros_like: like("zeros_like", bz.zeros_like), np.ones_like: like("ones_like", bz.ones_like),
        np.empty_like: like("empty_like", bz.empty_like), np.full_like: full_like,
        np.asarray: asarray, np.asanyarray: asarray,
        np.ascontiguousarray: lambda a, dtype=None: array(a, dtype, copy=None, ndmin=1),
        np.array: array, np.empty: created("empty", bz.zeros), np.zeros: created("zeros", bz.zeros),
        np.ones: created("ones", bz.ones), np.full: full, np.arange: arange,
        np.copy: lambda a, order="K", subok=False: bz.copy(bz.asarray(a)),
        np.astype: lambda x, dtype, /, *, copy=True, device=None: bz.astype(x, dtype),
        np.clip: clip, np.dot: dot, np.sort: sort, np.argsort: argsort, np.cumsum: scan("cumsum"), np.cumprod: scan("cumprod"),
        np.unique: unique,
        np.pad: bz.pad, np.copyto: bz._copyto.numpy_copyto,
        np.searchsorted: lambda a, v, side="left", sorter=None: bz.searchsorted(a, v, side=side, sorter=sorter),
        # Facts about the array, not computations: answered without realizing.
        np.shape: lambda a: tuple(a.shape) if isinstance(a, bz.Tensor) else np.shape(a),
        np.ndim: lambda a: a.ndim if isinstance(a, bz.Tensor) else np.ndim(a),
        np.size: lambda a, axis=None: (a.size if axis is None else a.shape[axis]) if isinstance(a, bz.Tensor)
        else np.size(a, axis),
    }
    # Joining and splitting (python/braze/_join.py): NumPy's own names and
    # signatures, so a tensor among the arrays takes the whole call.
    for name in ("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "atleast_1d",
                 "atleast_2d", "atleast_3d", "split", "array_split", "hsplit", "vsplit", "dsplit"):
        table[getattr(np, name)] = getattr(bz, name)
    for name in bz._array_api.FUNCTIONS:
        if hasattr(np, name):
            table[getattr(np, name)] = getattr(bz, name)
    for name in bz.linalg.NUMPY_FUNCTIONS:
        table[getattr(np.linalg, name)] = getattr(bz.linalg, name)
    table[np.linalg.svd] = bz.linalg.numpy_svd  # positional keywords, where the array API's are keyword-only
    for name in bz._gather.__all__:
        table[getattr(np, name)] = getattr(bz, name)
    for name in bz._numpy_functions.FUNCTIONS:
        table[getattr(np, name)] = getattr(bz, name)
    for name in bz._einsum.FUNCTIONS:
        table[getattr(np, name)] = getattr(bz, name)
    for module in _built(bz):
        for name in module.FUNCTIONS:
            table[getattr(np, name)] = getattr(bz, name)
    # Functions whose result is a file or a string: NumPy's own on the
    # tensors' realized values.
    for name in ("save", "savez", "savez_compressed", "savetxt", "array2string", "array_repr", "array_str"):
        table[getattr(np, name)] = _on_values(getattr(np, name))
    for name in bz._rearranging.STRIDE_TRICKS:
        table[getattr(np.lib.stride_tricks, name)] = getattr(bz, name)
    return table


def _on_values(function):
    """function with every tensor among its arguments (in lists, tuples and
    dicts too: savez's arrays) replaced by its realized values."""
    def values(a):
        from ._core import Tensor
        if isinstance(a, Tensor):
            return a.numpy()
        if isinstance(a, (list, tuple)):
            return type(a)(values(x) for x in a)
        if isinstance(a, dict):
            return {k: values(x) for k, x in a.items()}
        return a

    def on_values(*args, **kwargs):
        return function(*values(args), **values(kwargs))
    return on_values


def array_function(bz, functions):
    def __array_function__(self, func, types, args, kwargs):
        impl = functions.get(func)
        if impl is None:
            raise _unsupported(f"{func.__module__}.{func.__name__}", " yet")
        return impl(*args, **kwargs)
    return __array_function__


def install(bz):
    ufuncs = _ufuncs(bz)
    bz.Tensor.__array_ufunc__ = array_ufunc(bz, ufuncs)
    functions = _functions(bz)
    bz.Tensor.__array_function__ = array_function(bz, functions)
    # What np.<name>(t) answers is bz.<name> too, where the namespace has
    # no function of that name (bz.dot, bz.cumsum, bz.unique, bz.around):
    # code written against numpy runs with braze in its place.
    for function, implementation in functions.items():
        name = getattr(function, "__name__", "")
        if getattr(np, name, None) is function and not hasattr(bz, name):
            setattr(bz, name, implementation)
    # bz.add.at, bz.minimum.outer: braze's ufuncs carry NumPy's methods.
    bz._numpy_names.install_ufuncs(bz, ufuncs)
