"""NumPy functions braze builds from its ops (python/braze/_numpy_functions.py),
against NumPy: element-wise ones over every float dtype and int32 with NaN,
+-Inf and +-0, by name and through NumPy's protocols; that they fuse into
one generated kernel; the reductions, creation functions and views with
their edge cases."""

import operator
import os

import numpy as np
import pytest

import braze as bz
from conftest import BF16, assert_matches, make_layout, values

FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]
REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"

UNARY = ["tan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "log10", "deg2rad", "rad2deg", "trunc", "fix",
         "positive", "isfinite", "signbit"]
BINARY = ["hypot", "logaddexp", "logaddexp2", "copysign", "fmax", "fmin", "heaviside", "logical_xor", "floor_divide",
          "float_power"]


def unary_input(name, dtype, seed=0):
    lo_hi = {"arccosh": (0.5, 30.0), "arctanh": (-1.2, 1.2), "tan": (-1.5, 1.5)}.get(name)
    x = values(dtype, (7, 9), seed=seed)
    if lo_hi:
        x[2:] = values(dtype, (5, 9), seed=seed + 1, specials=False, lo=lo_hi[0], hi=lo_hi[1])
    return x


def expected(name, *args):
    """NumPy in float64 (float32 for bfloat16, which NumPy cannot compute in)."""
    wide = [a.astype(np.float64) if a.dtype.kind == "f" or a.dtype == BF16 else a for a in args]
    with np.errstate(all="ignore"):
        return getattr(np, name)(*wide)


def result_dtype(name, *args):
    got = getattr(bz, name)(*[bz.tensor(a) for a in args])
    return got.dtype


@pytest.mark.parametrize("dtype", FLOATS + [np.dtype(np.int32)], ids=lambda d: d.name)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy(name, dtype):
    x = unary_input(name, dtype)
    got = getattr(bz, name)(bz.tensor(x))
    want = expected(name, x)
    if want.dtype == np.float64:
        assert got.dtype.kind in "fV"  # braze's float rule: the input's float type, float32 for ints
    rtol = {np.float16: 2e-3, BF16: 1.6e-2}.get(got.dtype.type, None) if got.dtype != BF16 else 1.6e-2
    assert_matches(got, want, dtype=got.dtype, rtol=rtol or (4e-6 if got.dtype == np.float32 else 1e-13),
                   atol=0 if got.dtype.kind != "V" else 1e-37)
    if name in ("sinh", "arcsinh", "tan", "trunc", "positive") and dtype.kind == "f":
        zero = np.array([-0.0, 0.0], dtype)
        np.testing.assert_array_equal(np.signbit(getattr(bz, name)(bz.tensor(zero)).numpy()), [True, False])


def test_unary_hyperbolics_far_out_and_near_zero():
    x = np.array([1e-30, -1e-20, 1e-6, 3e-3, 0.7, 20.0, 88.5, 89.0, -89.0, 1e10, 3e38, -3e38], np.float32)
    with np.errstate(all="ignore"):
        for name in ("sinh", "cosh", "arcsinh"):
            want = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
            np.testing.assert_allclose(getattr(bz, name)(bz.tensor(x)).numpy(), want, rtol=4e-6, atol=0)
    big = np.array([1e300, -1e300, 3e-300, 1.0 + 1e-15], np.float64)
    np.testing.assert_allclose(bz.arcsinh(bz.tensor(big)).numpy(), np.arcsinh(big), rtol=1e-14, atol=0)
    np.testing.assert_allclose(bz.arccosh(bz.tensor(np.abs(big[[0, 3]]))).numpy(), np.arccosh(np.abs(big[[0, 3]])),
                               rtol=1e-8, atol=0)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(name, dtype):
    if name == "logical_xor":
        dtype = dtype  # any dtype: truth values
    a = values(dtype, (6, 8), seed=1)
    b = values(dtype, (6, 8), seed=2)
    if name == "floor_divide" and dtype.kind == "i":
        b[0, :3] = 0  # NumPy gives 0 for an integer division by zero
    if name == "heaviside" and dtype.kind == "i":
        pytest.skip("heaviside of integers: NumPy keeps the integer type")
    got = getattr(bz, name)(bz.tensor(a), bz.tensor(b))
    want = expected(name, a, b)
    if name == "float_power":
        assert got.dtype == np.float64
    tol = 4e-6 if got.dtype == np.float32 else 1e-13
    if got.dtype.kind in "iub":
        assert_matches(got, want.astype(got.dtype), dtype=got.dtype)
    else:
        assert_matches(got, want, dtype=got.dtype, rtol=tol, atol=0)


def test_floor_divide_is_numpys():
    a = np.array([7.0, -7.0, 7.0, -7.0, 1.0, -1.0, 0.0, np.inf, 5.5, 1e30], np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 0.0, 2.0, 0.1, 3.0], np.float64)
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b)
    got = (bz.tensor(a) // bz.tensor(b)).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal((7 // bz.tensor(np.array([2, -2], np.int32))).numpy(), [3, -4])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32], ids=str)
def test_integer_floor_divide_and_remainder_are_exact(dtype):
    """// and % of the integers narrower than int64 (Note [Floor division of
    integers], mod_in_f64): every pair of the range's edges and small
    signed values, and random pairs over the whole range, as NumPy; by 0
    is 0 and the least value // -1 wraps to itself. All generated code."""
    info = np.iinfo(dtype)
    edges = np.array(sorted({info.min, info.min + 1, info.max, info.max - 1, info.max // 2, info.max // 2 + 1,
                             0, 1, 2, 3, 7} | ({-1, -2, -7, info.min // 2} if info.min < 0 else set())), np.int64)
    rng = np.random.default_rng(17)
    a = np.concatenate([np.repeat(edges, edges.size), rng.integers(info.min, info.max, 3000, endpoint=True)])
    b = np.concatenate([np.tile(edges, edges.size), rng.integers(info.min, info.max, 3000, endpoint=True)])
    a, b = a.astype(dtype), b.astype(dtype)
    before = bz.stats()["kernels_interpreted"]
    with np.errstate(all="ignore"):
        for op in (operator.floordiv, operator.mod):
            got = op(bz.tensor(a), bz.tensor(b)).numpy()
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, op(a, b), err_msg=op.__name__)
        np.testing.assert_array_equal((bz.tensor(a) // 7).numpy(), a // 7)
        np.testing.assert_array_equal((bz.tensor(a.T) % bz.tensor(b.T)).numpy(), a.T % b.T)
    assert bz.stats()["kernels_interpreted"] == before


def test_int64_floor_divide_is_exact_over_the_whole_range():
    """int64 quotients past float64's 53 bits (_floor_divide_int64): every
    pair of the extremes and signed small values, random pairs over the
    whole range and random ones with small divisors, Python ints on either
    side; by 0 is 0 and by -1 wraps the least value, as NumPy."""
    info = np.iinfo(np.int64)
    special = np.array([info.min, info.min + 1, info.max, info.max - 1, -(2**53) - 1, 2**53 + 1, 2**62, -(2**62),
                        -7, -2, -1, 0, 1, 2, 3, 7], np.int64)
    rng = np.random.default_rng(13)
    a = np.concatenate([np.repeat(special, special.size), rng.integers(info.min, info.max, 4000, dtype=np.int64),
                        rng.integers(info.min, info.max, 1000, dtype=np.int64)])
    b = np.concatenate([np.tile(special, special.size), rng.integers(info.min, info.max, 4000, dtype=np.int64),
                        rng.integers(-1000, 1000, 1000, dtype=np.int64)])
    with np.errstate(all="ignore"):
        want = a // b
        got = (bz.tensor(a) // bz.tensor(b)).numpy()
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)
        x = a[special.size**2:]
        np.testing.assert_array_equal((bz.tensor(x) // 10).numpy(), x // 10)
        np.testing.assert_array_equal((-(2**40) // bz.tensor(x)).numpy(), -(2**40) // x)
        np.testing.assert_array_equal(np.floor_divide(bz.tensor(x).T, -3).numpy(), x // -3)


def test_hypot_and_logaddexp_specials():
    a = np.array([3e38, np.inf, np.nan, 0.0, -0.0, -np.inf, 1e-45], np.float32)
    b = np.array([3e38, np.nan, np.inf, 0.0, 0.0, -np.inf, 1e-45], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(bz.hypot(bz.tensor(a), bz.tensor(b)).numpy(), np.hypot(a, b), rtol=4e-7)
        np.testing.assert_array_equal(bz.logaddexp(bz.tensor(a), bz.tensor(b)).numpy()[[1, 2, 5]],
                                      np.logaddexp(a, b)[[1, 2, 5]])


@pytest.mark.parametrize("name", ["tan", "hypot", "floor_divide", "logaddexp", "trunc", "isfinite"])
def test_numpy_ufuncs_reach_them_and_stay_lazy(name):
    x = values(np.float32, (4, 5), seed=3, specials=False)
    t = bz.tensor(x)
    args = (t,) if name in UNARY + ["isfinite"] and name not in BINARY else (t, t * 0.5 + 3.0)
    got = getattr(np, name)(*args)
    assert isinstance(got, bz.Tensor) and not got.is_realized


@pytest.mark.skipif(REFERENCE, reason="the reference backend launches no kernels")
def test_composites_fuse_into_one_kernel():
    x = bz.tensor(values(np.float32, (64, 64), seed=4, specials=False))
    y = bz.tensor(values(np.float32, (64, 64), seed=5, specials=False))
    r = np.clip(bz.sinh(x) + bz.hypot(x, y) + bz.logaddexp(x, y) - x // 0.5 + bz.tan(y), -5, 5)
    bz.reset_stats()
    r.numpy()
    s = bz.stats()
    assert s["kernels_launched"] == 1 and s["kernels_interpreted"] == 0, s


# --- reductions and comparisons ---------------------------------------------------------------


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced_reversed", "zero_size"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_logic_reductions(layout, axis):
    x = values(np.float32, (0, 5) if layout == "zero_size" else (3, 5), seed=6)
    x[np.abs(x) < 1] = 0
    t = make_layout(layout, x)
    for name in ("all", "any", "count_nonzero"):
        want = getattr(np, name)(x, axis=axis)
        got = getattr(bz, name)(t, axis=axis)
        assert_matches(got, np.asarray(want), dtype=got.dtype)
    assert_matches(t.any(axis), np.any(x, axis))


@pytest.mark.parametrize("name", ["nansum", "nanmax", "nanmin", "nanmean", "ptp"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_reductions(name, axis):
    x = values(np.float64, (4, 6), seed=7, specials=False)
    x[1, :] = np.nan  # an all-NaN row
    x[0, 2] = np.nan
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if name in ("nanmax", "nanmin", "nanmean") and \
            axis == 1 else _nothing():
        want = getattr(np, name)(x, axis=axis)
    assert_matches(getattr(bz, name)(bz.tensor(x), axis=axis), np.asarray(want), rtol=1e-12, atol=1e-12)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_isclose_allclose_array_equal():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 5.0], np.float64)
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0, 5.1], np.float64)
    for equal_nan in (False, True):
        assert_matches(bz.isclose(bz.tensor(a), bz.tensor(b), equal_nan=equal_nan),
                       np.isclose(a, b, equal_nan=equal_nan))
    assert bz.allclose(bz.tensor(a[:1]), a[:1]) and not bz.allclose(bz.tensor(a), b)
    assert bz.array_equal(bz.tensor(a), a, equal_nan=True) and not bz.array_equal(bz.tensor(a), a)
    assert not bz.array_equal(bz.tensor(a), a[:3])


def test_average():
    x = values(np.float64, (3, 4), seed=8, specials=False)
    w = np.arange(1.0, 5.0)
    assert_matches(bz.average(bz.tensor(x), axis=1, weights=w), np.average(x, axis=1, weights=w), rtol=1e-12)
    avg, total = bz.average(bz.tensor(x), axis=0, returned=True)
    want_avg, want_total = np.average(x, axis=0, returned=True)
    assert_matches(avg, want_avg, rtol=1e-12)
    assert_matches(total, want_total)


# --- creation and views -----------------------------------------------------------------------


@pytest.mark.parametrize("k", [-4, -1, 0, 2, 5])
def test_triangles_and_eye(k):
    m = values(np.int32, (2, 4, 5), seed=9)
    assert_matches(bz.tril(bz.tensor(m), k), np.tril(m, k))
    assert_matches(bz.triu(bz.tensor(m), k), np.triu(m, k))
    assert_matches(bz.eye(4, 6, k=k, dtype="float64"), np.eye(4, 6, k=k))
    assert_matches(bz.tri(3, 4, k=k, dtype="int32"), np.tri(3, 4, k=k, dtype=np.int32))
    assert bz.eye(3).dtype == np.float32 and bz.identity(2, dtype="int8").dtype == np.int8


@pytest.mark.parametrize("args", [(0, 1, 5), (-3.5, 10, 7), (2, 2, 3), (0, 1, 1), (0, 1, 0), (1, 0, 6)])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace(args, endpoint):
    got = bz.linspace(*args, endpoint=endpoint, dtype="float64")
    np.testing.assert_array_equal(got.numpy(), np.linspace(*args, endpoint=endpoint))
    assert bz.linspace(0, 1, 3).dtype == np.float32


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    xs = [np.arange(3.0), np.arange(4.0) * 2, np.arange(2.0) - 1]
    got = bz.meshgrid(*[bz.tensor(x) for x in xs], indexing=indexing, sparse=sparse)
    for g, w in zip(got, np.meshgrid(*xs, indexing=indexing, sparse=sparse)):
        assert_matches(g, w)


@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 6])
def test_diagonal_and_trace(offset):
    a = values(np.float32, (3, 5, 4), seed=10, specials=False)
    for axes in ((0, 1), (1, 2), (2, 0)):
        assert_matches(bz.diagonal(make_layout("contiguous", a), offset, *axes), np.diagonal(a, offset, *axes))
        assert_matches(bz.trace(bz.tensor(a), offset, *axes), np.trace(a, offset, *axes), rtol=1e-5, atol=1e-5)


def test_rearrangements():
    a = values(np.int32, (2, 3, 4), seed=11)
    t = make_layout("contiguous", a)
    cases = [
        (bz.moveaxis(t, 0, -1), np.moveaxis(a, 0, -1)), (bz.moveaxis(t, [0, 1], [2, 0]), np.moveaxis(a, [0, 1], [2, 0])),
        (bz.swapaxes(t, 0, 2), np.swapaxes(a, 0, 2)), (bz.ravel(t.T), np.ravel(a.T)), (t.ravel(), a.ravel()),
        (bz.flip(t), np.flip(a)), (bz.flip(t, 1), np.flip(a, 1)), (bz.flip(t, (0, 2)), np.flip(a, (0, 2))),
        (bz.fliplr(t), np.fliplr(a)), (bz.flipud(t), np.flipud(a)),
        (bz.diff(t), np.diff(a)), (bz.diff(t, 2, axis=0), np.diff(a, 2, axis=0)),
        (bz.repeat(t, 2), np.repeat(a, 2)), (bz.repeat(t, 3, axis=1), np.repeat(a, 3, axis=1)),
        (bz.tile(t, 2), np.tile(a, 2)), (bz.tile(t, (2, 1, 1, 2)), np.tile(a, (2, 1, 1, 2))),
        (bz.roll(t, 2), np.roll(a, 2)), (bz.roll(t, -1, axis=1), np.roll(a, -1, axis=1)),
        (bz.roll(t, (1, 2), axis=(0, 2)), np.roll(a, (1, 2), axis=(0, 2))),
        (bz.outer(t[0, 0], t[1, 1]), np.outer(a[0, 0], a[1, 1])), (bz.vdot(t, t), np.int64(np.vdot(a, a))),  # braze sums int32 in int64
        (bz.clip(t, -5, 5), np.clip(a, -5, 5)), (t.clip(max=0), a.clip(max=0)),
    ]
    for got, want in cases:
        assert_matches(got, want)
    assert bz.diff(bz.tensor(np.array([True, False, False]))).dtype == np.bool_
    assert t.tolist() == a.tolist()


def test_tensordot_and_inner():
    a = values(np.float32, (3, 4, 5), seed=12, specials=False)
    b = values(np.float32, (4, 5, 2), seed=13, specials=False)
    for axes in (2, ([1, 2], [0, 1]), ([2], [1])):
        want = np.tensordot(a, b, axes)
        assert_matches(bz.tensordot(bz.tensor(a), bz.tensor(b), axes), want, rtol=1e-5, atol=1e-5)
        assert_matches(np.tensordot(bz.tensor(a), b, axes), want, rtol=1e-5, atol=1e-5)
    c = values(np.float32, (6, 5), seed=14, specials=False)
    assert_matches(bz.inner(bz.tensor(a), bz.tensor(c)), np.inner(a, c), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="tensordot: shape-mismatch"):
        bz.tensordot(bz.tensor(a), bz.tensor(c), 1)


def test_numpy_functions_dispatch_to_braze():
    a = values(np.float32, (3, 4), seed=15)
    t = bz.tensor(a)
    for fn in (np.ravel, np.flip, np.fliplr, np.flipud, lambda x: np.clip(x, 0, 1), lambda x: np.tril(x, 1),
               lambda x: np.repeat(x, 2, axis=0), lambda x: np.tile(x, 2), lambda x: np.roll(x, 1, 0),
               lambda x: np.nan_to_num(x), lambda x: np.diff(x), lambda x: np.swapaxes(x, 0, 1)):
        got = fn(t)
        assert isinstance(got, bz.Tensor)
        assert_matches(got, fn(a))
    assert isinstance(np.any(t > 0), bz.Tensor) and np.allclose(t, a, equal_nan=True) is True


def test_clip_out_writes_in_place():
    """min-char-rnn clips its gradients with np.clip(dparam, -5, 5,
    out=dparam): the tensor given as out takes the clipped values (NumPy
    returns out), cast to out's dtype under NumPy's same_kind rule; a NumPy
    out is written by NumPy."""
    a = values(np.float64, (4, 3), seed=16, specials=False) * 4
    t = bz.tensor(a)
    held = t
    got = np.clip(t, -5, 5, out=t)
    assert got is t and held is t
    assert_matches(t, np.clip(a, -5, 5))
    f = bz.tensor(np.zeros(8, np.float32))
    assert_matches(np.clip(bz.tensor(np.arange(-4, 4)), -2, 2, out=f), np.arange(-4, 4).clip(-2, 2).astype(np.float32))
    with pytest.raises(TypeError, match="numpy.clip: cannot cast .* 'same_kind'"):  # as NumPy's UFuncTypeError
        np.clip(t, -1, 1, out=bz.tensor(np.zeros((4, 3), np.int32)))
    with pytest.raises(TypeError, match="numpy.add: cannot cast"):
        np.add(t, 1, out=bz.tensor(np.zeros((4, 3), np.int64)))
    n = np.zeros(3)
    assert np.clip(bz.tensor(np.array([-9.0, 0.5, 9.0])), -1, 1, out=n) is n
    np.testing.assert_array_equal(n, [-1.0, 0.5, 1.0])
    with pytest.raises(TypeError, match="numpy.clip"):
        np.clip(t, -1, 1, where=t > 0)


def test_nan_to_num_and_finfo():
    x = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], np.float32)
    assert_matches(bz.nan_to_num(bz.tensor(x)), np.nan_to_num(x))
    assert_matches(bz.nan_to_num(bz.tensor(x), nan=1.0, posinf=2.0, neginf=-2.0),
                   np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0))
    assert float(bz.finfo(BF16).max) > 3e38 and bz.finfo(bz.tensor(x)).eps == np.finfo(np.float32).eps
    assert bz.iinfo(np.int8).min == -128


def test_bad_input_names_the_function():
    t = bz.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(IndexError, match="moveaxis: axis 3 is out of range"):
        bz.moveaxis(t, 3, 0)
    with pytest.raises(ValueError, match="diagonal: axis1 and axis2 cannot be the same"):
        bz.diagonal(t, 0, 1, 1)
    with pytest.raises(ValueError, match="operands could not be broadcast"):
        bz.repeat(t, [1, 2])  # NumPy's own error for counts that do not fit the axis
    with pytest.raises(ValueError, match="linspace: number of samples, -1"):
        bz.linspace(0, 1, -1)
    assert float(bz.sum(t)) == 6.0
