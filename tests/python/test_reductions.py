"""Reductions against NumPy: every axis spec, keepdims, every dtype, NaN,
empty axes, and inputs that are views."""

import numpy as np
import pytest

import braze as bz
from conftest import (BOOL, DTYPE_IDS, DTYPES, F32, FLOATS, I64, INTS, assert_matches, is_float, logical_values,
                      make_layout, tolerance, values)

# NumPy warns on empty and NaN reductions; the values are what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SHAPE = (2, 3, 4)
AXES = [None, 0, 1, 2, -1, -3, (0, 1), (0, 2), (2, 1), (-1, 0), (0, 1, 2), ()]


def sum_dtype(dt):
    return dt if is_float(dt) else I64


def float_dtype(dt):
    return dt if is_float(dt) else F32


def scaled_atol(x, axis, dtype):
    """Reductions: tolerance scaled by the magnitude of what was summed."""
    rtol, _ = tolerance(dtype)
    with np.errstate(all="ignore"):
        mag = np.sum(np.abs(np.nan_to_num(x.astype(np.float64), posinf=0, neginf=0)), axis=axis)
    return 4 * rtol * (float(np.max(mag)) if np.size(mag) else 0.0) + 1e-30


def reduction_input(name, dtype, shape=SHAPE, seed=1):
    if name == "prod":
        if is_float(dtype):
            return values(dtype, shape, seed=seed, lo=0.5, hi=1.5)
        return values(dtype, shape, seed=seed, lo=0 if dtype == np.uint8 else -3, hi=3)
    return values(dtype, shape, seed=seed, specials=False)


def np_logsumexp(x, axis=None, keepdims=False):
    """Stable: m + log(sum(exp(x - m))), with m = 0 where the max is not finite."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis if axis is not None else tuple(range(x.ndim)))
    return out


# name: (braze function, NumPy reference in float64/int64, result dtype)
REDUCTIONS = {
    "sum": (bz.sum, np.sum, sum_dtype),
    "prod": (bz.prod, np.prod, sum_dtype),
    "max": (bz.max, np.max, lambda d: d),
    "min": (bz.min, np.min, lambda d: d),
    "mean": (bz.mean, np.mean, float_dtype),
    "logsumexp": (bz.logsumexp, np_logsumexp, float_dtype),
}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=repr)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_axes_float32(name, axis, keepdims):
    fn, ref, rd = REDUCTIONS[name]
    x = reduction_input(name, np.float32)
    want = ref(x.astype(np.float64), axis=axis, keepdims=keepdims)
    got = fn(bz.tensor(x), axis=axis, keepdims=keepdims)
    assert_matches(got, want, rd(x.dtype), atol=scaled_atol(x, axis, F32))
    # the method form
    assert_matches(getattr(bz.tensor(x), name)(axis=axis, keepdims=keepdims), want, rd(x.dtype),
                   atol=scaled_atol(x, axis, F32))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)], ids=repr)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_dtypes(name, dtype, axis):
    fn, ref, rd = REDUCTIONS[name]
    x = reduction_input(name, dtype)
    out = rd(np.dtype(dtype))
    want = ref(x.astype(np.float64 if is_float(out) else np.int64), axis=axis)
    got = fn(bz.tensor(x), axis=axis)
    assert got.dtype == out
    assert_matches(got, want, out, atol=scaled_atol(x, axis, out) if is_float(out) else None,
                   rtol=2 * tolerance(out)[0] if is_float(out) else None)


def test_reduce_over_no_axes():
    x = values(np.float32, (2, 3), seed=1, specials=False)
    for name in ("sum", "max", "min", "mean", "logsumexp"):
        got = REDUCTIONS[name][0](bz.tensor(x), axis=())
        assert_matches(got, x, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_argmax_argmin(dtype, name, axis, keepdims):
    x = values(dtype, SHAPE, seed=1, specials=False)
    got = getattr(bz, name)(bz.tensor(x), axis=axis, keepdims=keepdims)
    want = getattr(np, name)(x.astype(np.float64) if is_float(dtype) else x, axis=axis, keepdims=keepdims)
    assert_matches(got, want, I64)
    assert_matches(getattr(bz.tensor(x), name)(axis=axis, keepdims=keepdims), want, I64)


def test_argmax_ties_take_the_first():
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, -1, -1, 5]], dtype=np.int32)
    for name in ("argmax", "argmin"):
        for axis in (None, 0, 1):
            assert_matches(getattr(bz, name)(bz.tensor(x), axis=axis), getattr(np, name)(x, axis=axis), I64)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_propagation(dtype):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [np.inf, -np.inf, 0.0, -0.0], [2.0, 5.0, np.nan, -1.0]], dtype=dtype)
    x64 = x.astype(np.float64)
    for axis in (None, 0, 1):
        for name in ("max", "min", "argmax", "argmin", "sum", "prod"):
            got = getattr(bz, name)(bz.tensor(x), axis=axis)
            want = getattr(np, name)(x64, axis=axis)
            assert_matches(got, want, I64 if name.startswith("arg") else dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_max_min_of_infinities(dtype):
    x = np.array([-np.inf, -np.inf, 1.0, np.inf], dtype=dtype)
    assert_matches(bz.max(bz.tensor(x)), np.array(np.inf, dtype))
    assert_matches(bz.min(bz.tensor(x)), np.array(-np.inf, dtype))
    assert_matches(bz.argmax(bz.tensor(x)), np.array(3))
    assert_matches(bz.argmin(bz.tensor(x)), np.array(0))


# --- var / std -----------------------------------------------------------------


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("correction", [0, 1, 1.5])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)], ids=repr)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std(name, axis, correction, keepdims):
    x = values(np.float32, SHAPE, seed=1, specials=False)
    got = getattr(bz, name)(bz.tensor(x), axis=axis, correction=correction, keepdims=keepdims)
    want = getattr(np, name)(x.astype(np.float64), axis=axis, ddof=correction, keepdims=keepdims)
    assert_matches(got, want, np.float32, rtol=1e-5, atol=1e-6)
    got = getattr(bz.tensor(x), name)(axis=axis, correction=correction, keepdims=keepdims)
    assert_matches(got, want, np.float32, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_dtypes(name, dtype):
    x = values(dtype, SHAPE, seed=1, specials=False)
    out = np.dtype(dtype) if is_float(dtype) else F32
    got = getattr(bz, name)(bz.tensor(x), axis=1, correction=1)
    want = getattr(np, name)(x.astype(np.float64), axis=1, ddof=1)
    # float16/bfloat16 round each intermediate (mean, x - mean, square, sum).
    rtol = {"float16": 1e-2, "bfloat16": 6e-2}.get(out.name, 1e-5)
    assert_matches(got, want, out, rtol=rtol, atol=rtol * float(np.max(np.abs(want))))


def test_var_with_correction_past_the_count():
    x = np.array([1.0, 2.0], np.float32)
    with np.errstate(all="ignore"):
        assert_matches(bz.var(bz.tensor(x), correction=2), np.var(x.astype(np.float64), ddof=2), np.float32)
        assert_matches(bz.var(bz.tensor(np.ones(1, np.float32)), correction=1),
                       np.var(np.ones(1), ddof=1), np.float32)


# --- empty and 0-d ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_empty_reductions(dtype):
    x = np.zeros((0, 3), dtype=dtype)
    t = bz.tensor(x)
    assert_matches(bz.sum(t), np.zeros((), sum_dtype(np.dtype(dtype))))
    assert_matches(bz.sum(t, axis=0), np.zeros(3, sum_dtype(np.dtype(dtype))))
    assert_matches(bz.prod(t, axis=0), np.ones(3, sum_dtype(np.dtype(dtype))))
    assert_matches(bz.sum(t, axis=1), np.zeros(0, sum_dtype(np.dtype(dtype))))
    assert_matches(bz.max(t, axis=1), np.zeros(0, dtype))  # reduces over a non-empty axis
    assert_matches(bz.mean(t, axis=0), np.full(3, np.nan, float_dtype(np.dtype(dtype))))
    assert_matches(bz.logsumexp(t, axis=0), np.full(3, -np.inf, float_dtype(np.dtype(dtype))))
    for name in ("max", "min", "argmax", "argmin"):
        with pytest.raises(ValueError, match=rf"{name}: cannot reduce over axis 0 of size 0 in shape \[0, 3\]"):
            getattr(bz, name)(t, axis=0)
        with pytest.raises(ValueError, match=rf"{name}: cannot reduce over axis 0 of size 0"):
            getattr(bz, name)(t)


def test_scalar_reductions():
    s = np.array(2.5, np.float32)
    t = bz.tensor(s)
    for name in ("sum", "prod", "max", "min", "mean"):
        assert_matches(getattr(bz, name)(t), s)
    assert_matches(bz.argmax(t), np.array(0))
    assert_matches(bz.var(t), np.array(0.0, np.float32))
    assert_matches(bz.logsumexp(t), s, rtol=1e-6)


# --- inputs that are views -----------------------------------------------------------


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "sliced_reversed", "broadcast",
                                    "zero_size", "scalar"])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "argmax", "argmin", "var", "logsumexp"])
def test_reductions_of_layouts(name, layout):
    x = logical_values(np.float32, layout, seed=2, specials=False,
                       **({"lo": 0.5, "hi": 1.5} if name == "prod" else {}))
    t = make_layout(layout, x)
    axes = [None, 0, -1] if x.ndim else [None]
    for axis in axes:
        empty = x.ndim and (x.size == 0 and (axis is None or x.shape[axis] == 0))
        if empty and name in ("max", "min", "argmax", "argmin"):
            with pytest.raises(ValueError, match=name):
                getattr(bz, name)(t, axis=axis)
            continue
        with np.errstate(all="ignore"):
            if name == "logsumexp":
                want = np_logsumexp(x, axis=axis)
            else:
                want = getattr(np, name)(x.astype(np.float64), axis=axis)
        out = I64 if name.startswith("arg") else F32
        assert_matches(getattr(bz, name)(t, axis=axis), want, out, atol=scaled_atol(x, axis, F32))


def _axis_subsets(n):
    import itertools
    return [c for k in range(1, n + 1) for c in itertools.combinations(range(n), k)]


# Note [Loops in memory order] and [Reductions in memory order]: reductions
# of permuted views run over memory's axis order (kept axes reordered, the
# result viewed back; reduced axes sorted by the generators), over every
# axis subset of every permutation of 3-D, and of some 4-D ones, with a
# step, with values over or under the rest of a kernel (x - mean).
@pytest.mark.parametrize("perm", [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0),
                                  (3, 1, 0, 2), (2, 3, 1, 0), (1, 3, 0, 2)])
@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "var", "argmax", "argmin", "prod"])
def test_reductions_of_permuted_views(name, perm):
    n = len(perm)
    x = values(np.float32, (5, 6, 7, 3)[:n], seed=3, specials=False,
               **({"lo": 0.5, "hi": 1.5} if name == "prod" else {}))
    t = bz.tensor(x)
    for step in (1, 2):
        xv, tv = x.transpose(perm)[..., ::step], t.transpose(perm)[..., ::step]
        sets = [(a,) for a in range(n)] + [None] if name.startswith("arg") else _axis_subsets(n)
        for axes in sets:
            axis = axes[0] if axes is not None and name.startswith("arg") else axes
            out = I64 if name.startswith("arg") else F32
            want = getattr(np, name)(xv.astype(np.float64), axis=axis)
            assert_matches(getattr(bz, name)(tv, axis=axis), want, out, atol=scaled_atol(xv, axis, F32))
    # A reduction read back over its rows: one kernel or two, the same values.
    xv, tv = x.transpose(perm), t.transpose(perm)
    for axes in _axis_subsets(n)[:-1]:
        want = xv - xv.mean(axis=axes, keepdims=True)
        assert_matches(tv - bz.mean(tv, axis=axes, keepdims=True), want, F32, atol=1e-5)


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "logsumexp"])
def test_axis_errors(name):
    t = bz.zeros((2, 3))
    with pytest.raises(IndexError, match=rf"{name}: axis 2 is out of range for a tensor of rank 2"):
        getattr(bz, name)(t, axis=2)
    with pytest.raises(IndexError, match=rf"{name}: axis -3 is out of range"):
        getattr(bz, name)(t, axis=(0, -3))
    with pytest.raises(ValueError, match=rf"{name}: repeated axis in \[1, -1\]"):
        getattr(bz, name)(t, axis=(1, -1))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_axis_errors(name):
    with pytest.raises(IndexError, match=rf"{name}: axis 5 is out of range"):
        getattr(bz, name)(bz.zeros((2, 3)), axis=5)
    with pytest.raises(TypeError):
        getattr(bz, name)(bz.zeros((2, 3)), axis=(0, 1))  # one axis or None, as NumPy


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("layout", ["row", "column", "sliced"])
def test_a_float_product_does_not_underflow_where_the_reference_does_not(dtype, layout):
    # Note [Float products]: accumulated in float32, 1e-40 * 1e-40 underflowed
    # to 0 and the inf after it made NaN; the reference (double) gives -inf.
    import ml_dtypes
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
    row = np.array([1e-40, -4.9, 1e-40, np.inf, 3e38, 3e38]).astype(dt)
    a = np.stack([row, row[::-1], np.ones(6, dt)])
    if layout == "row":
        got, want = bz.tensor(a).prod(axis=1), [-np.inf, -np.inf, 1.0]
    elif layout == "column":
        got, want = bz.tensor(np.ascontiguousarray(a.T)).prod(axis=0), [-np.inf, -np.inf, 1.0]
    else:
        got, want = bz.tensor(np.repeat(a, 2, axis=1))[:, ::2].prod(axis=1), [-np.inf, -np.inf, 1.0]
    np.testing.assert_array_equal(got.numpy().astype(np.float64), want)
    # A product that passes float32's range and comes back rounds once.
    b = np.array([3e38, 3e38, 1e-38, 1e-38]).astype(np.float32)
    assert float(bz.tensor(b).prod()) == pytest.approx(float(np.prod(b.astype(np.float64))), rel=1e-6)


# --- NumPy's dtype= and out= (python/braze/_reductions.py) ------------------------------


@pytest.mark.parametrize("name,dtype", [(n, d) for n in ("sum", "prod", "mean", "var", "std")
                                        for d in (np.float64, "f8", np.float16, "float32", np.int8, "i8")
                                        if n in ("sum", "prod", "mean") or d not in (np.int8, "i8")], ids=repr)
def test_dtype_is_what_numpy_computes_in(name, dtype):
    x = values(np.int8, (3, 4), seed=3, lo=-3, hi=3)
    want = getattr(np, name)(x, axis=0, dtype=dtype)  # NumPy accumulates in dtype (int8 sums wrap)
    for got in (getattr(bz, name)(bz.tensor(x), 0, dtype=dtype), getattr(bz.tensor(x), name)(axis=0, dtype=dtype)):
        assert_matches(got, want)


def test_dtype_keeps_the_positional_order():
    x = values(np.float32, (2, 3), seed=4, specials=False)
    assert_matches(bz.sum(bz.tensor(x), 1, True, dtype=np.float64), x.astype(np.float64).sum(1, keepdims=True))
    assert_matches(bz.tensor(x).var(0, 1, True, dtype="f8"), x.astype(np.float64).var(0, ddof=1, keepdims=True))
    with pytest.raises(TypeError):
        bz.max(bz.tensor(x), dtype=np.float64)  # as np.max: no dtype


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "var", "std"])
def test_out_is_written_in_place_and_returned(name):
    x = values(np.float32, (3, 4), seed=5, specials=False, lo=0.5, hi=2.5)
    for out_dtype in (np.float32, np.float64) + ((np.int64,) if name != "std" else ()):  # NumPy: no sqrt into ints
        out = bz.zeros(4, out_dtype)  # lazy: realized to be written into
        got = getattr(bz.tensor(x), name)(axis=0, out=out)
        want = np.zeros(4, out_dtype)
        getattr(np, name)(x, axis=0, out=want)
        assert got is out
        assert_matches(out, want, rtol=1e-6)
    host = np.zeros(4, np.float32)  # NumPy memory: written at once (braze/_copyto.py, write_out)
    assert getattr(bz, name)(bz.tensor(x), 0, out=host) is host
    np.testing.assert_allclose(host, getattr(np, name)(x, axis=0), rtol=1e-6)
    with pytest.raises(TypeError, match=f"{name}: out= must be a braze tensor or a NumPy array"):
        getattr(bz, name)(bz.tensor(x), 0, out=[0.0] * 4)
