"""The NumPy functions of python/braze/_rearranging.py and _math_extras.py
against NumPy: rot90,
rollaxis, block, choose, compress, extract, ediff1d, trim_zeros, isposinf,
isneginf, the nan- reductions and scans (nanprod, nanvar, nanstd,
nancumsum, nancumprod), unwrap, i0, bitwise_count, matvec, vecmat,
conjugate, real_if_close, the *_indices_from helpers, apply_along_axis,
apply_over_axes, may_share_memory and shares_memory, sliding_window_view. Each by bz.name and
through NumPy's protocols, over float32/float64 (and integers where NumPy
takes them), NaN, +-Inf and -0.0, empty and 0-d inputs, transposed and
sliced layouts, NumPy's error types; laziness where the module promises it."""

import os
import warnings

import numpy as np
import pytest

import braze as bz
from conftest import make_layout, values

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
F32, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
FLOATS = [F32, F64]


def numpy(fn, *args, **kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kw)


def same(got, want, exact=True, rtol=None, atol=0.0, dtype=True):
    """got (a braze tensor) holds want's values: its dtype (unless dtype is
    False), shape, NaN and signed zeros; exact or within rtol."""
    assert isinstance(got, bz.Tensor), type(got)
    want = np.asarray(want)
    if dtype:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    arr = got.numpy()
    assert arr.shape == want.shape, (arr.shape, want.shape)
    if arr.dtype.kind == "f" or want.dtype.kind == "f":
        a, w = arr.astype(np.float64), want.astype(np.float64)
        if exact:
            np.testing.assert_array_equal(a, w)
            zero = (w == 0) & (a == 0)
            np.testing.assert_array_equal(np.signbit(a[zero]), np.signbit(w[zero]))
        else:
            tol = rtol or (1e-12 if got.dtype == F64 else 3e-6)
            np.testing.assert_allclose(a, w, rtol=tol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(arr, want)


def lazy(x):
    """A lazy tensor holding x's values (a graph, not a leaf)."""
    t = bz.copy(bz.tensor(x))
    assert not t.is_realized
    return t


def both(name):
    """The function by bz.name and through NumPy's protocol."""
    return [getattr(bz, name), getattr(np, name)]


# --- rot90 and rollaxis ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (-1, 0), (2, 1)])
def test_rot90_matches_numpy(k, axes, dtype):
    x = values(dtype, (2, 3, 4), seed=k + 3)
    for fn in both("rot90"):
        r = fn(lazy(x), k, axes)
        assert isinstance(r, bz.Tensor) and not r.is_realized
        same(r, np.rot90(x, k, axes))
    same(bz.rot90(bz.tensor(x), k=k, axes=axes), np.rot90(x, k=k, axes=axes))


@pytest.mark.parametrize("layout", ["transposed", "sliced", "sliced_reversed", "zero_size"])
def test_rot90_layouts(layout):
    x = values(F32, {"zero_size": (0, 5)}.get(layout, (3, 5)), seed=1)
    for k in range(4):
        same(np.rot90(make_layout(layout, x), k), np.rot90(x, k))


def test_rot90_errors():
    one = bz.tensor(np.ones(3, np.float32))
    two = bz.tensor(np.ones((2, 3), np.float32))
    for args, kw in [((one,), {}), ((two,), {"axes": (0, 0)}), ((two,), {"axes": (0, 1, 2)}),
                     ((two,), {"axes": (0, 2)}), ((two,), {"axes": (1, -1)})]:
        with pytest.raises(ValueError):
            np.rot90(np.ones(np.shape(args[0])), **kw)
        with pytest.raises(ValueError, match="rot90"):
            bz.rot90(*args, **kw)


@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
@pytest.mark.parametrize("start", [0, 1, 2, 4, -1, -4])
def test_rollaxis_matches_numpy(axis, start):
    x = values(F64, (2, 3, 4, 5), seed=2)
    for fn in both("rollaxis"):
        r = fn(lazy(x), axis, start)
        assert not r.is_realized
        same(r, np.rollaxis(x, axis, start))


def test_rollaxis_errors():
    x = np.ones((2, 3, 4))
    t = bz.tensor(x)
    for axis, start in [(3, 0), (-4, 0), (0, 4 + 1), (0, -4)]:
        with pytest.raises(np.exceptions.AxisError):
            np.rollaxis(x, axis, start)
        with pytest.raises(np.exceptions.AxisError, match="rollaxis"):
            bz.rollaxis(t, axis, start)
        with pytest.raises(np.exceptions.AxisError):
            np.rollaxis(t, axis, start)


# --- block -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
def test_block_matches_numpy(dtype):
    A, B = values(dtype, (2, 2), seed=1), values(dtype, (2, 3), seed=2)
    C, D = values(dtype, (1, 2), seed=3), values(dtype, (1, 3), seed=4)
    v, w = values(dtype, (3,), seed=5), values(dtype, (2,), seed=6)
    cases = [
        [[A, B], [C, D]],
        [A, B],
        [v, w],
        [[v], [v]],
        [[[A]], [[A]]],  # list depth 3 > the blocks' rank: a leading axis
        [[A, np.ones((2, 1), dtype)], [np.zeros((1, 3), dtype)]],
    ]
    for case in cases:
        want = np.block(case)
        as_tensors = [[bz.tensor(x) for x in row] if isinstance(row, list) else bz.tensor(row) for row in case] \
            if not isinstance(case[0], list) or not isinstance(case[0][0], list) else \
            [[[bz.tensor(x) for x in inner] for inner in row] for row in case]
        for fn in both("block"):
            r = fn(as_tensors)
            assert not r.is_realized
            same(r, want)
    # A NumPy array among the blocks: the tensor takes the call
    same(np.block([[bz.tensor(A), B], [C, bz.tensor(D)]]), np.block([[A, B], [C, D]]))


def test_block_of_one_array_and_layouts():
    x = values(F32, (3, 5), seed=7)
    r = bz.block(bz.tensor(x))
    same(r, np.block(x))
    t = make_layout("transposed", x)
    same(np.block([[t, t], [t, t]]), np.block([[x, x], [x, x]]))
    s = make_layout("sliced", x)
    same(np.block([s, s]), np.block([x, x]))
    e = np.zeros((0, 2), np.float32)
    same(bz.block([[bz.tensor(e), bz.tensor(e)]]), np.block([[e, e]]))


def test_block_errors():
    t = bz.tensor(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="block"):
        bz.block((t, t))
    with pytest.raises(TypeError):
        np.block([(t, t)])
    with pytest.raises(ValueError, match="block.*empty"):
        bz.block([])
    with pytest.raises(ValueError, match="empty"):
        np.block([[t], []])
    with pytest.raises(ValueError, match="depths are mismatched"):
        np.block([[t, t], t])


# --- choose ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy(mode, dtype):
    rng = np.random.default_rng(3)
    choices = [values(dtype, (4, 5), seed=s) for s in range(3)]
    lo, hi = (0, 2) if mode == "raise" else (-5, 7)
    a = rng.integers(lo, hi, size=(4, 5), endpoint=True)
    want = np.choose(a, choices, mode=mode)
    for fn in both("choose"):
        r = fn(lazy(a), [lazy(c) for c in choices], mode=mode)
        assert not r.is_realized
        same(r, want)
    same(bz.tensor(a).choose(choices, mode=mode), want)  # ndarray.choose
    stacked = np.stack(choices)
    same(bz.choose(bz.tensor(a), bz.tensor(stacked), mode), np.choose(a, stacked, mode=mode))


def test_choose_broadcasts_and_indexes():
    a = np.array([[0], [1], [2]])
    choices = [np.float32(-10.5), np.arange(4, dtype=np.float32), np.full((3, 1), 7.0, np.float32)]
    want = np.choose(a, choices)
    same(np.choose(bz.tensor(a), [bz.tensor(c) for c in choices]), want)
    same(np.choose(bz.tensor(np.array([True, False])), [bz.tensor(np.array([1.0, 2.0])), bz.tensor(np.array([3.0, 4.0]))]),
         np.choose(np.array([True, False]), [[1.0, 2.0], [3.0, 4.0]]))
    same(np.choose(bz.tensor(np.array(1)), [bz.tensor(np.array(2.0)), bz.tensor(np.array(-0.0))]),
         np.choose(1, [np.array(2.0), np.array(-0.0)]))
    empty = np.zeros((0, 3), np.int64)
    same(np.choose(bz.tensor(empty), [bz.tensor(np.ones(3))]), np.choose(empty, [np.ones(3)]))


def test_choose_errors():
    c = [bz.tensor(np.array([1.0, 2.0])), bz.tensor(np.array([3.0, 4.0]))]
    with pytest.raises(ValueError, match="choose.*invalid entry"):
        bz.choose(bz.tensor(np.array([0, 2])), c)
    with pytest.raises(ValueError):
        np.choose(bz.tensor(np.array([-1, 0])), c)
    with pytest.raises(ValueError, match="clipmode"):
        np.choose(bz.tensor(np.array([0, 1])), c, mode="bad")
    with pytest.raises(TypeError, match="choose"):
        bz.choose(bz.tensor(np.array([0.0, 1.0])), c)
    with pytest.raises(ValueError):
        bz.choose(bz.tensor(np.array([0, 1])), [])


# --- compress and extract --------------------------------------------------------------------------------

CONDITIONS = {
    "one_run": [0, 1, 1, 1, 0, 0, 0],
    "strided": [1, 0, 1, 0, 1, 0, 1],
    "mixed": [1, 1, 0, 1, 0, 0, 1],
    "none": [0] * 7,
    "all": [1] * 7,
    "short": [0, 1],
    "nonbool": [0, 2, -1, 0, 0, 0, 0],
}


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
@pytest.mark.parametrize("cond", list(CONDITIONS))
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_compress_matches_numpy(cond, axis, dtype):
    x = values(dtype, (7, 7), seed=4)
    c = np.array(CONDITIONS[cond])
    want = np.compress(c, x, axis=axis)
    xs = lazy(x)
    for fn in both("compress"):
        for condition in (c, bz.tensor(c), list(c)):
            r = fn(condition, xs, axis=axis)
            assert not r.is_realized and not xs.is_realized  # the condition alone is realized
            same(r, want)
    same(bz.tensor(x).compress(c, axis=axis), want)  # ndarray.compress


def test_compress_many_runs_and_layouts():
    x = values(F64, (40, 3), seed=5)
    c = np.arange(40) % 3 == 0
    c[[4, 10, 11, 25]] = True  # more than 8 runs: bz.take picks
    same(np.compress(c, bz.tensor(x), axis=0), np.compress(c, x, axis=0))
    for layout in ["transposed", "sliced", "sliced_reversed"]:
        v = values(F32, (3, 5), seed=6)
        t = make_layout(layout, v)
        for axis, cond in [(0, [1, 0, 1]), (1, [0, 1, 1, 0, 1]), (None, [1, 0, 0, 1, 1, 1, 0, 1])]:
            same(np.compress(cond, t, axis=axis), np.compress(cond, v, axis=axis))
    same(np.compress([True], bz.tensor(np.array(2.5)), axis=None), np.compress([True], np.array(2.5)))
    e = np.zeros((0, 3), np.float32)
    same(np.compress([], bz.tensor(e), axis=0), np.compress([], e, axis=0))
    same(np.compress([True, False, True], bz.tensor(e), axis=1), np.compress([True, False, True], e, axis=1))


def test_compress_errors():
    t = bz.tensor(np.arange(3.0))
    with pytest.raises(IndexError, match="compress"):
        bz.compress([0, 1, 0, 1], t)
    with pytest.raises(IndexError):
        np.compress([0, 0, 0, 1], t)
    with pytest.raises(ValueError, match="1-d"):
        np.compress([[1, 0]], t)
    with pytest.raises(np.exceptions.AxisError):
        np.compress([1], t, axis=1)


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
def test_extract_matches_numpy(dtype):
    x = values(dtype, (4, 5), seed=7)
    for cond in [x > 0, np.zeros((4, 5), bool), np.ones((4, 5), bool), np.eye(4, 5), (np.arange(20) % 4 == 1)]:
        want = np.extract(cond, x)
        for fn in both("extract"):
            for c in (cond, bz.tensor(cond)):
                same(fn(c, lazy(x)), want)
    for cond in [np.eye(4, 5), np.arange(20).reshape(4, 5) % 4 == 1, np.ones((4, 5))]:  # one strided run each
        xs = lazy(x)
        r = np.extract(bz.tensor(cond), xs)
        assert not r.is_realized and not xs.is_realized  # the condition alone was realized
        same(r, np.extract(cond, x))
    t = make_layout("transposed", x)
    same(np.extract(x.T.T > 0, t), np.extract(x > 0, x))
    with pytest.raises(IndexError, match="extract"):
        bz.extract([0, 0, 0, 1], bz.tensor(np.arange(3.0)))
    same(bz.extract(np.array(True), bz.tensor(np.array(3.0))), np.extract(np.array(True), np.array(3.0)))


# --- ediff1d ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [I32, I64], ids=lambda d: d.name)
def test_ediff1d_matches_numpy(dtype):
    x = values(dtype, (3, 4), seed=8)
    for kw in [{}, {"to_begin": 5}, {"to_end": [1, 2]}, {"to_begin": np.array([[-1, 3]]), "to_end": 7}]:
        want = numpy(np.ediff1d, x, **kw)
        for fn in both("ediff1d"):
            r = fn(lazy(x), **kw)
            assert not r.is_realized
            same(r, want)
        tensor_kw = {k: bz.tensor(np.asarray(v, dtype)) for k, v in kw.items()}
        same(bz.ediff1d(bz.tensor(x), **tensor_kw), want)
    for shape in [(), (0,), (1,)]:
        v = values(dtype, shape, seed=9)
        same(np.ediff1d(bz.tensor(v)), np.ediff1d(v))
        same(np.ediff1d(bz.tensor(v), to_begin=1), np.ediff1d(v, to_begin=1))
    t = make_layout("sliced_reversed", x[:3, :4])
    same(np.ediff1d(t), numpy(np.ediff1d, x))


def test_ediff1d_specials_and_errors():
    x = np.array([1.0, np.inf, np.inf, -0.0, 0.0, np.nan, 2.0], np.float32)
    same(np.ediff1d(bz.tensor(x)), numpy(np.ediff1d, x))
    with pytest.raises(TypeError, match="to_begin"):
        bz.ediff1d(bz.tensor(np.array([1, 2, 4])), to_begin=1.5)
    with pytest.raises(TypeError, match="to_end"):
        np.ediff1d(bz.tensor(np.array([1, 2, 4], np.int32)), to_end=bz.tensor(np.array([1.5])))
    with pytest.raises(TypeError, match="ediff1d"):
        bz.ediff1d(bz.tensor(np.array([True, False])))


# --- trim_zeros ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("trim", ["fb", "f", "b", "BF"])
def test_trim_zeros_matches_numpy(trim):
    for v in [np.array([0, 0, 3, 0, 5, 0], np.int32), np.array([-0.0, np.nan, 0.0, 2.5, -0.0], np.float32),
              np.zeros(4), np.array([1.0, 0.0]), np.zeros(0, np.float64)]:
        want = np.trim_zeros(v, trim)
        for fn in both("trim_zeros"):
            r = fn(lazy(v), trim)
            assert not r.is_realized  # a view of the input: only the nonzero mask was realized
            same(r, want)
    m = np.array([[0, 0, 2, 3, 0, 0], [0, 1, 0, 3, 0, 0], [0, 0, 0, 0, 0, 0]], np.float64)
    for axis in [None, 0, 1, -1, (0, 1)]:
        same(np.trim_zeros(bz.tensor(m), trim, axis=axis), np.trim_zeros(m, trim, axis=axis))
        same(np.trim_zeros(make_layout("transposed", m), trim, axis=axis), np.trim_zeros(m, trim, axis=axis))
    z = np.zeros((2, 3))
    same(np.trim_zeros(bz.tensor(z), trim), np.trim_zeros(z, trim))
    same(np.trim_zeros(bz.tensor(z), trim, axis=1), np.trim_zeros(z, trim, axis=1))
    t3 = values(F32, (3, 4, 2), seed=3, specials=False)
    t3[0], t3[:, :1] = 0, 0
    same(np.trim_zeros(bz.tensor(t3), trim), np.trim_zeros(t3, trim))


def test_trim_zeros_errors():
    with pytest.raises(ValueError, match="trim_zeros.*unexpected"):
        bz.trim_zeros(bz.tensor(np.array([0.0, 1.0])), "x")
    with pytest.raises(np.exceptions.AxisError):
        np.trim_zeros(bz.tensor(np.array([0.0, 1.0])), axis=1)


# --- isposinf and isneginf -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
@pytest.mark.parametrize("dtype", FLOATS + [I32, np.dtype(bool)], ids=lambda d: d.name)
def test_isposinf_isneginf(name, dtype):
    x = values(dtype, (4, 6), seed=10)
    if dtype.kind == "f":
        x[0, :4] = [np.inf, -np.inf, np.nan, -0.0]
    want = getattr(np, name)(x)
    for fn in both(name):
        r = fn(lazy(x))
        assert not r.is_realized
        same(r, want)
    for layout in ["transposed", "sliced", "zero_size", "scalar"]:
        v = values(F32, {"zero_size": (0, 5), "scalar": ()}.get(layout, (3, 5)), seed=11)
        same(getattr(np, name)(make_layout(layout, v)), getattr(np, name)(v))
    out = bz.zeros(list(x.shape), "bool")
    r = getattr(np, name)(bz.tensor(x), out=out)
    assert r is out
    same(out, want)


def test_isposinf_complex_is_a_type_error():
    z = np.array([1 + 1j])
    with pytest.raises(TypeError):
        np.isposinf(z)
    with pytest.raises(TypeError, match="isposinf.*ambiguous"):
        bz.isposinf(z)
    with pytest.raises(TypeError, match="isneginf"):
        bz.isneginf(z)


# --- nan- reductions -------------------------------------------------------------------------------------


def nan_values(dtype, shape, seed):
    x = values(dtype, shape, seed=seed, specials=False)
    if dtype.kind == "f":
        flat = x.reshape(-1)
        flat[np.random.default_rng(seed).permutation(flat.size)[:flat.size // 4]] = np.nan
        if x.ndim == 2:
            x[1, :] = np.nan  # an all-NaN slice
    return x


AXES = [None, 0, 1, -1, (0, 1)]


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_nanprod_matches_numpy(dtype, axis, keepdims):
    x = nan_values(dtype, (4, 5), seed=12)
    if dtype.kind == "f":
        x = np.where(np.isnan(x), x, np.clip(x, -1.6, 1.6))  # products in range
    else:
        x = np.clip(x, -3, 3)
    want = np.nanprod(x, axis=axis, keepdims=keepdims)
    for fn in both("nanprod"):
        r = fn(lazy(x), axis=axis, keepdims=keepdims)
        assert not r.is_realized
        same(r, want, exact=dtype.kind != "f")
    if dtype == F32:
        same(np.nanprod(bz.tensor(x), axis, F64, keepdims=keepdims), np.nanprod(x, axis, F64, keepdims=keepdims),
             exact=False)


def test_nanprod_where_initial_out():
    x = nan_values(F64, (3, 4), seed=13)
    mask = np.arange(12).reshape(3, 4) % 3 != 0
    same(np.nanprod(bz.tensor(x), axis=1, where=mask), np.nanprod(x, axis=1, where=mask), exact=False)
    same(np.nanprod(bz.tensor(x), axis=0, initial=2.0), np.nanprod(x, axis=0, initial=2.0), exact=False)
    out = bz.zeros([4], "float64")
    assert np.nanprod(bz.tensor(x), axis=0, out=out) is out
    same(out, np.nanprod(x, axis=0), exact=False)
    same(np.nanprod(bz.tensor(np.zeros((0, 3)))), np.nanprod(np.zeros((0, 3))))
    same(np.nanprod(bz.tensor(np.array(np.nan))), np.nanprod(np.array(np.nan)))


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("ddof", [0, 1, 3])
def test_nanvar_nanstd_match_numpy(name, dtype, axis, ddof):
    x = nan_values(dtype, (4, 5), seed=14)
    for keepdims in (False, True):
        want = numpy(getattr(np, name), x, axis=axis, ddof=ddof, keepdims=keepdims)
        for fn in both(name):
            r = fn(lazy(x), axis=axis, ddof=ddof, keepdims=keepdims)
            assert not r.is_realized
            same(r, want, exact=False, rtol=1e-11 if dtype == F64 else 2e-5)


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_nanvar_nanstd_keywords(name):
    x = nan_values(F32, (3, 6), seed=15)
    fn = getattr(np, name)
    close = dict(exact=False, rtol=2e-5)
    same(fn(bz.tensor(x), axis=1, dtype=np.float64), numpy(fn, x, axis=1, dtype=np.float64), **close)
    same(fn(bz.tensor(x), 0, None, None, 1), numpy(fn, x, 0, None, None, 1), **close)  # NumPy's positions
    same(fn(bz.tensor(x), axis=1, correction=1), numpy(fn, x, axis=1, correction=1), **close)
    mask = np.arange(18).reshape(3, 6) % 4 != 1
    same(fn(bz.tensor(x), axis=1, where=mask), numpy(fn, x, axis=1, where=mask), **close)
    m = numpy(np.nanmean, x, axis=1, keepdims=True)
    same(fn(bz.tensor(x), axis=1, mean=m), numpy(fn, x, axis=1, mean=m), **close)
    out = bz.zeros([6], "float32")
    assert fn(bz.tensor(x), axis=0, out=out) is out
    same(out, numpy(fn, x, axis=0), **close)
    ints = values(I32, (3, 4), seed=16)
    same(fn(bz.tensor(ints), axis=0), numpy(fn, ints, axis=0).astype(np.float32), **close)  # braze: float32
    same(fn(bz.tensor(np.zeros((0, 2), np.float32)), axis=0), numpy(fn, np.zeros((0, 2), np.float32), axis=0))
    same(fn(bz.tensor(np.float64(2.5))), numpy(fn, np.float64(2.5)))
    with pytest.raises(ValueError, match="correction"):
        fn(bz.tensor(x), ddof=1, correction=1)
    t = make_layout("transposed", x[:, :5][:3])
    same(fn(t, axis=0), numpy(fn, x[:, :5][:3], axis=0), **close)


def test_nanvar_is_one_kernel():
    if REFERENCE:
        pytest.skip("kernel counts are the compiled backend's")
    x = bz.tensor(nan_values(F32, (8, 16), seed=17))
    before = bz.stats()["kernels_launched"]
    bz.nanstd(x, axis=1).numpy()
    assert bz.stats()["kernels_launched"] - before <= 2


# --- nancumsum and nancumprod ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_nancumsum_nancumprod(name, dtype, axis):
    x = nan_values(dtype, (3, 5), seed=18)
    if name == "nancumprod":
        x = np.where(np.isnan(x), x, np.clip(x, -2, 2)) if dtype.kind == "f" else np.clip(x, -3, 3)
    want = getattr(np, name)(x, axis=axis)
    for fn in both(name):
        same(fn(bz.tensor(x), axis=axis), want, exact=dtype.kind != "f", rtol=1e-5 if dtype == F32 else None)
    same(getattr(np, name)(bz.tensor(x), axis, np.float64), getattr(np, name)(x, axis, np.float64), exact=False)
    same(getattr(np, name)(make_layout("transposed", x), axis=axis), want, exact=dtype.kind != "f",
         rtol=1e-5 if dtype == F32 else None)
    e = np.zeros((0, 4), dtype)
    same(getattr(np, name)(bz.tensor(e), axis=0), getattr(np, name)(e, axis=0))


# --- unwrap ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unwrap_matches_numpy(dtype, axis):
    rng = np.random.default_rng(19)
    phase = np.cumsum(rng.uniform(-2.5, 2.5, size=(6, 7)), axis=axis)
    x = np.angle(np.exp(1j * phase)).astype(dtype)
    x[2, 3] = -0.0
    rtol = 1e-11 if dtype == F64 else 1e-5
    for kw in [{}, {"discont": 4.0}, {"period": 5.0}, {"discont": 1.0, "period": 3.0}]:
        want = np.unwrap(x, axis=axis, **kw)
        for fn in both("unwrap"):
            same(fn(bz.tensor(x), axis=axis, **kw), want, exact=False, rtol=rtol, atol=1e-5 if dtype == F32 else 0)
    t = make_layout("transposed", x[:3, :5])
    same(np.unwrap(t, axis=axis), np.unwrap(x[:3, :5], axis=axis), exact=False, rtol=rtol, atol=1e-5)


def test_unwrap_integers_specials_and_edges():
    p = np.array([0, 1, 2, -1, 0])
    same(np.unwrap(bz.tensor(p), period=4), np.unwrap(p, period=4))
    p = np.array([2, 3, 4, 5, 2, 3, 4, 5], np.int32)
    same(bz.unwrap(bz.tensor(p), period=4), np.unwrap(p, period=4))
    same(bz.unwrap(bz.tensor(np.array([0, 7, 1]))), np.unwrap(np.array([0, 7, 1])).astype(np.float32),
         exact=False)  # braze's float32 for integers and a float period
    s = np.array([0.0, 7.0, np.nan, 1.0, np.inf, 2.0])
    same(np.unwrap(bz.tensor(s)), numpy(np.unwrap, s), exact=False)
    for v in [np.zeros(0), np.array([1.5])]:
        same(np.unwrap(bz.tensor(v)), np.unwrap(v))
    with pytest.raises(np.exceptions.AxisError):
        np.unwrap(bz.tensor(np.ones(3)), axis=1)


# --- i0 --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_i0_matches_numpy(dtype):
    x = np.concatenate([np.linspace(-30, 30, 241), [0.0, -0.0, 8.0, -8.0, 7.999, 8.001, np.nan, 80.0, 700.0]])
    x = x.astype(dtype)
    want = numpy(np.i0, x)
    for fn in both("i0"):
        r = fn(lazy(x))
        assert not r.is_realized
        same(r, want, exact=False, rtol=1e-13 if dtype == F64 else 2e-5)
    same(np.i0(make_layout("transposed", x[:15].reshape(3, 5))), numpy(np.i0, x[:15].reshape(3, 5)), exact=False,
         rtol=1e-13 if dtype == F64 else 2e-5)
    same(np.i0(bz.tensor(np.array(2.0, dtype))), np.i0(np.array(2.0, dtype)), exact=False)


def test_i0_integers_fusion_and_errors():
    k = np.arange(-5, 6, dtype=np.int32)
    same(bz.i0(bz.tensor(k)), np.i0(k).astype(np.float32), exact=False, rtol=2e-6)  # braze: float32
    with pytest.raises(TypeError, match="i0.*complex"):
        bz.i0(np.array([1 + 1j]))
    if not REFERENCE:
        x = bz.tensor(values(F32, (64,), seed=20))
        before = bz.stats()["kernels_launched"]
        (bz.i0(x) * 2.0).numpy()
        assert bz.stats()["kernels_launched"] - before == 1  # the series and its caller: one kernel (float32)


# --- bitwise_count ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool"])
def test_bitwise_count_matches_numpy(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        x = np.array([True, False, True, True, False, False])
    else:
        info = np.iinfo(dtype)
        rng = np.random.default_rng(21)
        x = np.concatenate([[info.min, info.max, 0, 1, -1 if info.min else 2, info.min + 1],
                            rng.integers(info.min, info.max, size=50, endpoint=True)]).astype(dtype)
    want = np.bitwise_count(x)
    for fn in both("bitwise_count"):
        r = fn(lazy(x))
        assert not r.is_realized
        same(r, want)
    t = make_layout("transposed", x[:6].reshape(2, 3))
    same(np.bitwise_count(t), np.bitwise_count(x[:6].reshape(2, 3)))
    same(np.bitwise_count(bz.tensor(x[:0])), np.bitwise_count(x[:0]))


def test_bitwise_count_errors_and_fusion():
    with pytest.raises(TypeError, match="bitwise_count"):
        np.bitwise_count(bz.tensor(np.array([1.5])))
    if not REFERENCE:
        x = bz.tensor(values(I64, (100,), seed=22))
        before = bz.stats()["kernels_launched"]
        bz.bitwise_count(x).numpy()
        assert bz.stats()["kernels_launched"] - before == 1


# --- matvec and vecmat -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (5, 4)), ((2, 1, 3, 4), (5, 4)),
                                    ((0, 3, 4), (4,)), ((3, 0), (0,))], ids=str)
def test_matvec_vecmat_match_numpy(dtype, shapes):
    m, v = values(dtype, shapes[0], seed=23, specials=False), values(dtype, shapes[1], seed=24, specials=False)
    tol = dict(exact=dtype.kind != "f", rtol=1e-12 if dtype == F64 else 1e-5, atol=1e-5)
    for fn in both("matvec"):
        r = fn(bz.tensor(m), bz.tensor(v))
        assert not r.is_realized
        same(r, np.matvec(m, v), **tol)
    mt = np.swapaxes(m, -1, -2).copy()
    for fn in both("vecmat"):
        same(fn(bz.tensor(v), bz.tensor(mt)), np.vecmat(v, mt), **tol)
    if len(shapes[0]) == 2 and 0 not in shapes[0]:
        same(np.matvec(make_layout("transposed", m), bz.tensor(v)), np.matvec(m, v), **tol)


def test_matvec_vecmat_errors():
    for fn, a, b in [(np.matvec, np.ones(3), np.ones(3)), (np.matvec, np.ones((2, 3)), np.ones(4)),
                     (np.vecmat, np.ones(3), np.ones(3)), (np.vecmat, np.ones(3), np.ones((4, 2))),
                     (np.matvec, np.ones((2, 3)), np.ones(())), (np.vecmat, np.ones(()), np.ones((3, 2)))]:
        with pytest.raises(ValueError):
            fn(a, b)
        with pytest.raises(ValueError, match=fn.__name__):
            fn(bz.tensor(a), bz.tensor(b))
        with pytest.raises(ValueError, match=fn.__name__):
            getattr(bz, fn.__name__)(bz.tensor(a), bz.tensor(b))


# --- conjugate and real_if_close -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=lambda d: d.name)
def test_conjugate_and_real_if_close(dtype):
    x = values(dtype, (3, 4), seed=25)
    for fn in (np.conjugate, np.conj, bz.conjugate, bz.conj):
        r = fn(lazy(x))
        assert isinstance(r, bz.Tensor) and not r.is_realized
        same(r, np.conjugate(x))
    t = bz.tensor(x)
    assert np.real_if_close(t) is t and bz.real_if_close(t, tol=10) is t
    same(bz.real_if_close(np.array([1.0 + 1e-16j, 2.0])), np.real_if_close(np.array([1.0 + 1e-16j, 2.0])))


# --- index helpers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (0, 0), (4, 4, 4)], ids=str)
def test_indices_from_match_numpy(shape):
    a = np.zeros(shape, np.float32)
    t = lazy(a)
    for name, kws in [("diag_indices_from", [{}]), ("tril_indices_from", [{}, {"k": 1}, {"k": -2}]),
                      ("triu_indices_from", [{}, {"k": 2}, {"k": -1}])]:
        for kw in kws:
            try:
                want = getattr(np, name)(a, **kw)
            except ValueError:
                with pytest.raises(ValueError, match=name):
                    getattr(bz, name)(t, **kw)
                with pytest.raises(ValueError):
                    getattr(np, name)(t, **kw)
                continue
            for fn in both(name):
                got = fn(t, **kw)
                assert isinstance(got, tuple) and len(got) == len(want)
                for g, w in zip(got, want):
                    assert isinstance(g, np.ndarray) and g.dtype == w.dtype
                    np.testing.assert_array_equal(g, w)
    assert not t.is_realized  # the shape alone was read


# --- apply_along_axis and apply_over_axes ----------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_apply_along_axis_matches_numpy(axis):
    x = values(F64, (2, 3, 4), seed=26, specials=False)
    for func, args, kw in [(np.sum, (), {}), (lambda v: v[::-1] * 2.0, (), {}), (np.diff, (), {"n": 2}),
                           (lambda v, s: np.outer(v, v) + s, (1.5,), {}), (lambda v: np.max(v) - v[0], (), {})]:
        want = np.apply_along_axis(func, axis, x, *args, **kw)
        for fn in both("apply_along_axis"):
            same(fn(func, axis, bz.tensor(x), *args, **kw), want, exact=False)


def test_apply_along_axis_laziness_layouts_and_errors():
    x = values(F32, (3, 5), seed=27)
    r = np.apply_along_axis(lambda v: v * 2.0, 0, lazy(x))
    assert not r.is_realized  # 5 slices: a lazy stack
    same(r, np.apply_along_axis(lambda v: v * 2.0, 0, x))
    t = make_layout("sliced_reversed", x)
    same(np.apply_along_axis(np.min, 1, t), np.apply_along_axis(np.min, 1, x))
    same(bz.apply_along_axis(np.sum, 0, bz.tensor(np.arange(4.0))), np.apply_along_axis(np.sum, 0, np.arange(4.0)))
    with pytest.raises(ValueError, match="iteration dimensions are 0"):
        np.apply_along_axis(np.sum, 1, bz.tensor(np.zeros((0, 3))))
    same(np.apply_along_axis(np.sum, 0, bz.tensor(np.zeros((0, 3)))), np.apply_along_axis(np.sum, 0, np.zeros((0, 3))))
    with pytest.raises(np.exceptions.AxisError):
        np.apply_along_axis(np.sum, 2, bz.tensor(x))


def test_apply_over_axes_matches_numpy():
    x = values(F64, (2, 3, 4), seed=28, specials=False)
    for axes in [0, [0, 2], (1, -1), []]:
        for func in (np.sum, np.mean, lambda a, axis: np.max(a, axis=axis, keepdims=True)):
            want = np.apply_over_axes(func, x, axes)
            for fn in both("apply_over_axes"):
                r = fn(func, lazy(x), axes)
                assert not r.is_realized
                same(r, want, exact=False)
    with pytest.raises(ValueError, match="correct shape"):
        np.apply_over_axes(lambda a, axis: np.sum(a), bz.tensor(x), [0])


# --- may_share_memory and shares_memory ------------------------------------------------------------------

KEYS = [(slice(None),), (slice(1, None),), (slice(None, 2),), (0,), (1,), (slice(None), slice(0, None, 2)),
        (slice(None), slice(1, None, 2)), (Ellipsis, 3), (slice(2, 0, -1), 1), (None, slice(0, 0))]


@pytest.mark.parametrize("name", ["may_share_memory", "shares_memory"])
def test_memory_sharing_of_views_matches_numpy(name):
    a = np.arange(12.0).reshape(3, 4)
    base = lazy(a)
    for k1 in KEYS:
        for k2 in KEYS:
            want = getattr(np, name)(a[k1], a[k2])
            for fn in both(name):
                assert fn(base[k1], base[k2]) == want, (k1, k2)
            assert getattr(bz, name)(base[k1][0:1], base[k2], max_work=None) == \
                getattr(np, name)(a[k1][0:1], a[k2]), (k1, k2)
    assert getattr(np, name)(base, base) and getattr(np, name)(base, base[1])
    assert not base.is_realized  # never realizes


MOVES = [lambda x: x.T, lambda x: x.reshape(4, 3), lambda x: np.swapaxes(x, 0, 1)[::2], lambda x: x.ravel()[3:7],
         lambda x: np.expand_dims(x, 1)[1:, 0], lambda x: np.rot90(x)[0]]


@pytest.mark.parametrize("name", ["may_share_memory", "shares_memory"])
def test_memory_sharing_of_movement_views_matches_numpy(name):
    a = np.arange(12.0).reshape(3, 4)
    base = lazy(a)
    views = [(m(a), m(base)) for m in MOVES] + [(a[k], base[k]) for k in KEYS[:5]]
    for v1, w1 in views:
        for v2, w2 in views:
            assert getattr(np, name)(w1, w2) == getattr(np, name)(v1, v2)
    assert not base.is_realized


@pytest.mark.parametrize("name", ["may_share_memory", "shares_memory"])
def test_memory_sharing_of_distinct_tensors(name):
    fn = getattr(np, name)
    x = bz.tensor(np.arange(6.0))
    y = x + 1.0
    assert not fn(x, y) and not fn(x, bz.tensor(np.arange(6.0)))
    assert not fn(x.reshape(2, 3), y) and not y.is_realized
    host = np.asarray(x)  # the realized values, viewed
    assert fn(x, host) and fn(host, x)
    assert not fn(x, np.arange(6.0)) and not fn(y, np.arange(6.0)) and not fn(x, [1.0, 2.0])
    assert getattr(bz, name)(host, host[1:]) == getattr(np, name)(host, host[1:])
    assert not fn(bz.tensor(np.zeros(0)), bz.tensor(np.zeros(0)))


# --- sliding_window_view ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [I64], ids=lambda d: d.name)
@pytest.mark.parametrize("window,axis", [((3, 3), None), ((2,), 1), (3, 0), ((2, 2), (1, 0)), ((0,), 1),
                                         ((2, 3), (1, 1)), ((5, 6), None), (1, -1)])
def test_sliding_window_view_matches_numpy(window, axis, dtype):
    x = values(dtype, (5, 6), seed=3)
    want = np.lib.stride_tricks.sliding_window_view(x, window, axis)
    for layout in ("contiguous", "transposed", "sliced_reversed"):
        same(np.lib.stride_tricks.sliding_window_view(make_layout(layout, x), window, axis), want)
    same(bz.sliding_window_view(lazy(x), window, axis), want)


def test_sliding_window_view_is_lazy_a_kernel_per_windowed_axis():
    x = np.arange(64.0).reshape(8, 8)
    pooled = np.lib.stride_tricks.sliding_window_view(bz.tensor(x), (3, 3))[::2, ::2].sum(axis=(-2, -1))
    assert not pooled.is_realized
    before = bz.stats()["kernels_launched"]
    same(pooled, np.lib.stride_tricks.sliding_window_view(x, (3, 3))[::2, ::2].sum(axis=(-2, -1)))
    if not REFERENCE:  # each axis's windows, then the sum of every other one: each reads the last by a view
        assert bz.stats()["kernels_launched"] - before == 3


def test_sliding_window_view_errors():
    t = bz.tensor(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="sliding_window_view: window shape .* cannot be larger"):
        np.lib.stride_tricks.sliding_window_view(t, (4, 2))
    with pytest.raises(ValueError, match="must have as many entries"):
        np.lib.stride_tricks.sliding_window_view(t, 2)
    with pytest.raises(ValueError, match="negative"):
        np.lib.stride_tricks.sliding_window_view(t, (-1,), axis=0)
    with pytest.raises(np.exceptions.AxisError):
        np.lib.stride_tricks.sliding_window_view(t, (2,), axis=2)
    windows = np.lib.stride_tricks.sliding_window_view(t, (2, 2))
    with pytest.raises(ValueError, match="read-only"):  # as NumPy's
        windows[0, 0] = 1.0
    with pytest.raises(TypeError, match="writeable=True is not supported"):
        np.lib.stride_tricks.sliding_window_view(t, (2, 2), writeable=True)
