"""The NumPy functions braze answers on the host (python/braze/_on_host.py:
the set routines, the polynomials, histogramdd and histogram_bin_edges,
packbits and unpackbits) and np.linalg's lstsq, eigvals, eig and
multi_dot (python/braze/linalg.py), against NumPy: through NumPy's
protocol and by braze's name, over dtypes, NaN, empty inputs and views,
with NumPy's exception types, and with several lazy operands realized in
one program. NumPy computes these on the realized values, so its answers
are matched exactly; multi_dot stays lazy (braze's matmuls), so it is
matched within rounding."""

import warnings

import numpy as np
import pytest

import braze as bz
from conftest import make_layout, values

F32, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
LAYOUTS = ["contiguous", "transposed", "sliced", "sliced_reversed"]


def _tensors(x):
    """x with every NumPy array (also inside lists and tuples) a braze tensor."""
    if isinstance(x, np.ndarray):
        return bz.tensor(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_tensors(p) for p in x)
    return x


def same(got, want):
    """got (braze's answer: tensors, tuples and lists of them, scalars)
    is want (NumPy's): the same structure, dtypes, shapes and values
    (NaN where NumPy has NaN)."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, bz.Tensor) and got.is_realized, type(got)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert tuple(got.shape) == want.shape, (got.shape, want.shape)
        np.testing.assert_array_equal(got.numpy(), want)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (type(got), type(want))
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, np.poly1d):
        assert isinstance(got, np.poly1d)
        np.testing.assert_array_equal(got.coeffs, want.coeffs)
    else:
        assert got == want or (got != got and want != want), (got, want)


def numpy_answer(fn, *args, **kw):
    """NumPy's answer, or the exception it raises."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kw)
        except Exception as e:
            return e


def check(name, *args, module=np, tensors=None, protocol=True, **kw):
    """module.name on NumPy's arrays, against the same call on braze tensors
    both through NumPy's protocol (module.name(tensor, ...)) and by braze's
    name; an exception NumPy raises must come of the same type, naming the
    function. tensors: the first braze operands, where they are not the
    arrays (a view with the same values). protocol=False: by braze's name
    only."""
    fn = getattr(module, name)
    bz_fn = getattr(bz.linalg if module is np.linalg else bz, name)
    want = numpy_answer(fn, *args, **kw)
    tensors = tuple(tensors or ())
    targs = tensors + tuple(_tensors(list(args[len(tensors):])))
    for call in (fn, bz_fn) if protocol else (bz_fn,):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(want, Exception):
                with pytest.raises(type(want), match=name):
                    call(*targs, **kw)
            else:
                same(call(*targs, **kw), want)
    return want


def lazy(x):
    """A lazy tensor holding x's values."""
    return bz.tensor(x) + 0


def sample(dtype, shape, seed, nan=False, lo=-4, hi=4):
    """Values of dtype: integers in a small range (so that sets overlap),
    floats with a NaN when asked."""
    if np.dtype(dtype).kind in "iu":
        return values(dtype, shape, seed=seed, lo=-5, hi=5)
    x = values(dtype, shape, seed=seed, specials=False, lo=lo, hi=hi)
    x = np.round(x * 2) / 2  # halves: repeated values, so the sets overlap
    if nan and x.size:
        x.flat[seed % x.size] = np.nan
    return x.astype(dtype)


# --- set routines ------------------------------------------------------------------------------------------------

SETS = ["intersect1d", "setdiff1d", "setxor1d", "union1d"]


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", SETS)
def test_set_routines(name, dtype):
    a, b = sample(dtype, (13,), 1, nan=True), sample(dtype, (9,), 2, nan=True)
    check(name, a, b)
    check(name, a, b[:0])
    check(name, a[:0], b[:0])
    if name != "union1d":  # union1d takes no assume_unique
        check(name, np.unique(a), np.unique(b), assume_unique=True)
    check(name, a, b.tolist())  # a list beside a tensor: NumPy's promotion


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", SETS)
def test_set_routines_of_views(name, layout):
    a, b = sample(F32, (4, 5), 3), sample(F32, (3, 4), 4)
    check(name, a, b, tensors=(make_layout(layout, a), make_layout(layout, b)))


@pytest.mark.parametrize("assume_unique", [False, True])
def test_intersect1d_return_indices(assume_unique):
    for dtype in (F32, F64, I32):
        a, b = sample(dtype, (12,), 5, nan=True), sample(dtype, (10,), 6, nan=True)
        if assume_unique:
            a, b = np.unique(a), np.unique(b)
        want = check("intersect1d", a, b, assume_unique=assume_unique, return_indices=True)
        assert len(want) == 3 and want[1].dtype == np.intp
    check("intersect1d", np.array([], np.float32), np.array([1.0], np.float32), return_indices=True)


def test_set_routines_nan_and_results_braze_lacks():
    a, b = np.array([1.0, np.nan, 2.0, np.nan]), np.array([np.nan, 2.0])
    for name in SETS:
        check(name, a, b)
    assert np.isnan(bz.union1d(bz.tensor(a), bz.tensor(b)).numpy()).sum() == 1  # NaNs collapse, as NumPy's unique
    # int8 with uint8 is int16, as in NumPy
    check("union1d", np.array([1, 2], np.int8), np.array([3, 200], np.uint8))


# --- polynomials ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_polyfit(dtype):
    x = np.linspace(-2, 3, 20).astype(dtype) if dtype.kind == "f" else np.arange(-8, 12).astype(dtype)
    y = (3 * x.astype(np.float64) ** 2 - x + 0.5 + np.sin(x.astype(np.float64))).astype(dtype)
    w = values(F64, (20,), seed=7, specials=False, lo=0.5, hi=2).astype(dtype if dtype.kind == "f" else F64)
    for deg in (0, 1, 2, 3):
        check("polyfit", x, y, deg)
    check("polyfit", x, y, 2, full=True)
    check("polyfit", x, y, 2, w=w)
    check("polyfit", x, y, 2, cov=True)
    check("polyfit", x, y, 2, cov="unscaled", w=w)
    check("polyfit", x, y, 2, rcond=1e-3, full=True)
    check("polyfit", x, np.stack([y, 2 * y], axis=1), 1)  # several fits at once


def test_polyfit_views_nan_and_errors():
    x = np.linspace(0, 1, 12).reshape(3, 4)
    y = x ** 3
    check("polyfit", x.ravel(), make_layout("transposed", y.T.copy()).T.numpy().ravel(), 3)
    yy = values(F64, (12, 2), seed=8, specials=False)
    check("polyfit", x.ravel(), yy, 1, tensors=(bz.tensor(x).reshape([-1]), make_layout("transposed", yy)))
    check("polyfit", x.ravel(), yy[::-1], 1, tensors=(bz.tensor(x).reshape([-1]), bz.tensor(yy)[::-1]))
    y_nan = y.ravel().copy()
    y_nan[3] = np.nan
    check("polyfit", x.ravel(), y_nan, 2)  # NumPy's answer: NaN coefficients (or its LinAlgError)
    check("polyfit", x.ravel(), y.ravel(), -1)  # ValueError
    check("polyfit", x, y, 1)  # TypeError: x is 2-D
    check("polyfit", x.ravel(), y.ravel()[:5], 1)  # TypeError: lengths differ
    check("polyfit", x.ravel()[:0], y.ravel()[:0], 1)  # TypeError: empty


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_roots(dtype):
    for p in ([1, -6, 11, -6], [2, -3], [0, 0, 1, -3, 2, 0, 0], [5], [0, 0], [1, 0, -4], [3, 0, 0]):
        check("roots", np.array(p, dtype))
    # np.roots's dispatcher offers the elements of p, so NumPy itself takes an
    # empty tensor (as an array): braze's name answers it
    check("roots", np.array([], dtype), protocol=False)
    with pytest.raises(TypeError, match="roots.*complex"):
        bz.roots(bz.tensor(np.array([1, 0, 1], dtype)))  # x**2 + 1: roots +-i
    with pytest.raises(TypeError, match="roots.*complex"):
        np.roots(bz.tensor(np.array([1, -6, 11, -6, 1, 1], dtype)))
    check("roots", np.array([[1, 2], [3, 4]], dtype))  # ValueError: not 1-D


def test_roots_views_and_nan():
    p = np.array([1.0, 9.0, -6.0, 9.0, 11.0, 9.0, -6.0])
    check("roots", p[::2], tensors=(bz.tensor(p)[::2],))  # 1, 2, 3
    check("roots", p[::-2], tensors=(bz.tensor(p)[::-2],))  # 1, 1/2, 1/3
    check("roots", np.array([1.0, np.nan, 2.0]))  # NumPy's LinAlgError


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_polyder_polyint(dtype):
    p = np.array([3, -2, 5, 1, 4], dtype)
    for m in (0, 1, 2, 5, 6):
        check("polyder", p, m)
        check("polyint", p, m)
    check("polyint", p, 2, [1.5, -2.0])
    check("polyint", p, 2, k=np.array([1.5, -2.0], dtype))  # k a tensor too
    check("polyint", p, 1, 3)
    check("polyder", p[:0])
    check("polyint", p[:0])
    check("polyder", p, -1)  # ValueError
    check("polyint", p, -1)  # ValueError
    check("polyint", p, 2, [1.0, 2.0, 3.0])  # ValueError: k of the wrong length
    check("polyder", p[::-2], tensors=(bz.tensor(p)[::-2],))


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul", "polydiv"])
def test_polynomial_arithmetic(name, dtype):
    a, b = np.array([2, -1, 3, 4], dtype), np.array([1, 2], dtype)
    check(name, a, b)
    check(name, b, a)
    check(name, a, a[1:])
    check(name, a, [1.5, 2.0])  # a list beside a tensor
    check(name, a[::-1], b, tensors=(bz.tensor(a)[::-1], bz.tensor(b)))
    if dtype.kind == "f":
        nan = a.copy()
        nan[1] = np.nan
        check(name, nan, b)
    if name != "polydiv":
        check(name, a, b[:0])
    got = getattr(np, name)(np.poly1d([1.0, 2.0]), bz.tensor(b))  # a poly1d operand: NumPy's poly1d answer
    same(got, getattr(np, name)(np.poly1d([1.0, 2.0]), b))


# --- histograms ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_histogramdd(dtype):
    s = values(dtype, (40, 3), seed=9, specials=False, lo=-3, hi=3) if dtype.kind == "f" else \
        values(dtype, (40, 3), seed=9, lo=-3, hi=3)
    w = values(F64, (40,), seed=10, specials=False, lo=0, hi=1)
    check("histogramdd", s)
    check("histogramdd", s, bins=4)
    check("histogramdd", s, bins=[2, 3, 4], density=True)
    check("histogramdd", s, bins=[np.linspace(-3, 3, 5), 3, np.array([-3.0, 0.0, 3.0])])  # arrays among bins
    check("histogramdd", s, range=[(-1, 1), (-2, 2), (0, 3)], weights=w)
    check("histogramdd", (s[:, 0], s[:, 1]), bins=3)  # a sequence of 1-D samples
    check("histogramdd", s, tensors=(make_layout("transposed", s),))
    check("histogramdd", s[::-1, ::2], bins=3, tensors=(bz.tensor(s)[::-1, ::2],))


def test_histogramdd_empty_nan_and_errors():
    check("histogramdd", np.empty((0, 2)))
    check("histogramdd", np.empty((0, 2), np.float32), bins=3, range=[(0, 1), (0, 2)])
    s = values(F64, (10, 2), seed=11, specials=False)
    nan = s.copy()
    nan[2, 1] = np.nan
    check("histogramdd", nan)  # ValueError: the autodetected range is not finite
    check("histogramdd", nan, range=[(-3, 3), (-3, 3)])  # NaN counted nowhere
    check("histogramdd", s, weights=np.ones(3))  # ValueError: weights' shape
    check("histogramdd", s, bins=-1)  # ValueError
    check("histogramdd", s, bins=[2, 3, 4])  # ValueError: three bin counts for two dimensions


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_histogram_bin_edges(dtype):
    a = sample(dtype, (30,), 12)
    for bins in (10, 3, "auto", "fd", "sturges", "sqrt", "doane", "scott", "rice", "stone"):
        check("histogram_bin_edges", a, bins=bins)
    check("histogram_bin_edges", a, bins=np.array([-2.0, 0.0, 1.0, 4.0]))
    check("histogram_bin_edges", a, bins=5, range=(-1, 1))
    check("histogram_bin_edges", a, bins=5, weights=np.ones(30))
    check("histogram_bin_edges", a.reshape(5, 6), tensors=(make_layout("transposed", a.reshape(5, 6)),))
    check("histogram_bin_edges", a[:0])
    check("histogram_bin_edges", a[:0], bins="auto")


def test_histogram_bin_edges_errors():
    a = np.array([1.0, np.nan, 3.0])
    check("histogram_bin_edges", a)  # ValueError: the autodetected range is not finite
    check("histogram_bin_edges", a, range=(0, 4))
    check("histogram_bin_edges", a[[0, 2]], bins="nonsense")  # ValueError
    check("histogram_bin_edges", a[[0, 2]], bins=np.array([3.0, 1.0]))  # ValueError: decreasing
    check("histogram_bin_edges", a[[0, 2]], range=(2, 1))  # ValueError


# --- bit packing -----------------------------------------------------------------------------------------------------

BITS = [np.dtype(np.bool_), np.dtype(np.uint8), I32, np.dtype(np.int8)]


@pytest.mark.parametrize("dtype", BITS, ids=lambda d: d.name)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_packbits(layout, dtype):
    a = values(dtype, (5, 11), seed=13) if dtype.kind == "b" else values(dtype, (5, 11), seed=13, lo=0, hi=2)
    t = make_layout(layout, a)
    for axis in (None, 0, 1, -1):
        for order in ("big", "little"):
            want = check("packbits", a, axis=axis, bitorder=order, tensors=(t,))
            assert want.dtype == np.uint8


@pytest.mark.parametrize("layout", LAYOUTS)
def test_unpackbits(layout):
    a = values(np.uint8, (4, 6), seed=14)
    t = make_layout(layout, a)
    for axis in (None, 0, 1, -1):
        for count in (None, 3, -5, 0, 100):
            for order in ("big", "little"):
                check("unpackbits", a, axis=axis, count=count, bitorder=order, tensors=(t,))


def test_bit_packing_round_trip_empty_and_errors():
    bits = values(np.bool_, (3, 20), seed=15)
    packed = np.packbits(bz.tensor(bits), axis=1)
    same(bz.unpackbits(packed, axis=1, count=20), bits.astype(np.uint8))
    check("packbits", np.zeros((0,), np.bool_))
    check("unpackbits", np.zeros((0, 3), np.uint8), axis=0)
    check("packbits", np.ones(3, np.float32))  # TypeError: floats
    check("unpackbits", np.ones(3, np.int32))  # TypeError: not uint8
    check("packbits", np.ones(3, np.uint8), bitorder="middle")  # ValueError
    check("unpackbits", np.ones(3, np.uint8), axis=1)  # AxisError


# --- np.linalg: lstsq, eigvals, eig, multi_dot ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_lstsq(dtype):
    a = values(dtype, (7, 3), seed=16, specials=False) if dtype.kind == "f" else values(dtype, (7, 3), seed=16)
    b = values(dtype, (7, 2), seed=17, specials=False) if dtype.kind == "f" else values(dtype, (7, 2), seed=17)
    want = check("lstsq", a, b, module=np.linalg)
    assert len(want) == 4
    check("lstsq", a, b[:, 0], module=np.linalg)
    check("lstsq", a, b, rcond=0.5, module=np.linalg)
    check("lstsq", a.T, b[:3], module=np.linalg)  # under-determined: no residuals
    deficient = np.concatenate([a[:, :2], a[:, :1]], axis=1)  # rank 2
    check("lstsq", deficient, b, module=np.linalg)
    check("lstsq", a, b, module=np.linalg, tensors=(make_layout("transposed", a), make_layout("sliced", b)))


def test_lstsq_empty_nan_and_errors():
    check("lstsq", np.zeros((0, 3)), np.zeros((0,)), module=np.linalg)
    a = values(F64, (5, 2), seed=18, specials=False)
    nan = a.copy()
    nan[1, 1] = np.nan
    check("lstsq", nan, np.ones(5), module=np.linalg)  # NumPy's answer (or LinAlgError)
    check("lstsq", a, np.ones(4), module=np.linalg)  # LinAlgError: incompatible dimensions
    check("lstsq", a.ravel(), np.ones(10), module=np.linalg)  # LinAlgError: a is 1-D


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_eigvals_eig(dtype):
    s = values(F64, (4, 4), seed=19, specials=False)
    sym = ((s + s.T) * 2).round().astype(dtype)  # real eigenvalues
    tri = np.triu(s * 3).round().astype(dtype)
    for m in (sym, tri, np.eye(3, dtype=dtype), np.zeros((0, 0), dtype)):
        check("eigvals", m, module=np.linalg)
        check("eig", m, module=np.linalg)
    stacked = np.stack([sym, tri])
    check("eigvals", stacked, module=np.linalg)
    check("eig", sym, module=np.linalg, tensors=(make_layout("transposed", sym.T.copy()).T,))
    rot = np.array([[0, -1], [1, 0]], dtype)  # eigenvalues +-i
    for name in ("eigvals", "eig"):
        with pytest.raises(TypeError, match=f"{name}.*complex"):
            getattr(np.linalg, name)(bz.tensor(rot))
        with pytest.raises(TypeError, match="no complex dtype"):
            getattr(bz.linalg, name)(bz.tensor(rot))
        check(name, sym[:3], module=np.linalg)  # LinAlgError: not square
        check(name, sym[0], module=np.linalg)  # LinAlgError: 1-D


def test_eig_result_and_nan():
    m = np.array([[2.0, 1.0], [0.0, 3.0]])
    r = np.linalg.eig(bz.tensor(m))
    assert type(r) is type(np.linalg.eig(m))
    assert isinstance(r.eigenvalues, bz.Tensor) and isinstance(r.eigenvectors, bz.Tensor)
    check("eigvals", np.array([[1.0, np.nan], [0.0, 1.0]]), module=np.linalg)  # LinAlgError


def _chains(seed):
    rng = np.random.default_rng(seed)
    for n in (3, 4, 5, 6):
        for _ in range(4):
            yield [int(d) for d in rng.integers(1, 40, n + 1)]


def test_multi_dot_order_is_numpys():
    from numpy.linalg._linalg import _multi_dot_matrix_chain_order
    for dims in _chains(20):
        mats = [np.empty((dims[i], dims[i + 1])) for i in range(len(dims) - 1)]
        want = _multi_dot_matrix_chain_order(mats)
        got = bz.linalg._chain_order(dims)
        n = len(mats)
        for i in range(n):
            for j in range(i + 1, n):
                assert got[i][j] == want[i, j], (dims, i, j)


@pytest.mark.parametrize("dtype", [F32, F64], ids=lambda d: d.name)
def test_multi_dot(dtype):
    tol = 1e-4 if dtype == F32 else 1e-12
    for dims in list(_chains(21)) + [[10, 100, 5, 50], [5, 5, 5, 5], [2, 3, 4]]:
        mats = [values(dtype, (dims[i], dims[i + 1]), seed=i, specials=False) for i in range(len(dims) - 1)]
        for first, last in ((2, 2), (1, 2), (2, 1), (1, 1)):
            ms = list(mats)
            if first == 1:
                ms[0] = ms[0][0]
            if last == 1:
                ms[-1] = ms[-1][:, 0]
            want = np.linalg.multi_dot(ms)
            for fn in (np.linalg.multi_dot, bz.linalg.multi_dot):
                got = fn([bz.tensor(m) for m in ms])
                assert not got.is_realized  # matmuls, recorded
                assert got.dtype == want.dtype and tuple(got.shape) == want.shape
                # float32 sums cancel: an error relative to the largest magnitude
                np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol * np.abs(want).max(initial=1))


def test_multi_dot_two_views_lists_and_errors():
    a, b, c = (values(F64, s, seed=k, specials=False) for k, s in enumerate([(3, 4), (4, 5), (5, 2)]))
    got = np.linalg.multi_dot([make_layout("transposed", a), bz.tensor(b)[::-1][::-1], make_layout("sliced", c)])
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot([a, b, c]), rtol=1e-12)
    got = np.linalg.multi_dot([bz.tensor(a), b, c.tolist()])  # arrays and lists beside a tensor: NumPy's float64
    assert got.dtype == F64
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot([a, b, c]), rtol=1e-12)
    for ms in ([a, b], [a[0], b], [a[0], b[:, 0]]):  # two: np.dot's
        want = np.linalg.multi_dot(ms)
        got = np.linalg.multi_dot([bz.tensor(m) for m in ms])
        assert tuple(got.shape) == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match="multi_dot"):
        bz.linalg.multi_dot([bz.tensor(a)])
    with pytest.raises(np.linalg.LinAlgError, match="multi_dot"):
        np.linalg.multi_dot([bz.tensor(a), bz.tensor(np.ones((4, 5, 2))), bz.tensor(c)])
    with pytest.raises(ValueError):
        np.linalg.multi_dot([bz.tensor(a), bz.tensor(c), bz.tensor(b)])  # 4 != 5, as NumPy's ValueError
    with pytest.raises(ValueError):
        np.linalg.multi_dot([a, c, b])
    with pytest.raises(TypeError, match="out"):
        np.linalg.multi_dot([bz.tensor(a), bz.tensor(b), bz.tensor(c)], out=bz.zeros([3, 2]))


def test_multi_dot_fuses_on():
    a, b, c = (values(F32, s, seed=k, specials=False) for k, s in enumerate([(6, 4), (4, 5), (5, 3)]))
    got = np.linalg.multi_dot([bz.tensor(a) * 2, bz.tensor(b), bz.tensor(c)]) + 1
    assert not got.is_realized
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot([a * 2, b, c]) + 1, rtol=1e-5)


# --- realizing: one program for every lazy operand ------------------------------------------------------------------

def test_lazy_operands_realize_in_one_program():
    a, b = sample(F32, (10,), 22), sample(F32, (8,), 23)
    x, y = np.linspace(0, 1, 9), np.linspace(0, 1, 9) ** 2
    s, w = values(F64, (20, 2), seed=24, specials=False), values(F64, (20,), seed=25, specials=False, lo=0, hi=1)
    m, r = values(F64, (6, 3), seed=26, specials=False), values(F64, (6,), seed=27, specials=False)
    calls = [
        (np.union1d, (lazy(a), lazy(b)), {}, (a, b)),
        (np.intersect1d, (lazy(a), lazy(b)), {"return_indices": True}, (a, b)),
        (np.setdiff1d, (lazy(a), lazy(b)), {}, (a, b)),
        (np.setxor1d, (lazy(a), lazy(b)), {}, (a, b)),
        (np.polyfit, (lazy(x), lazy(y), 2), {"w": lazy(w[:9])}, (x, y, 2)),
        (np.polydiv, (lazy(a), lazy(b[:3])), {}, (a, b[:3])),
        (np.polyint, (lazy(a), 2, lazy(b[:2])), {}, (a, 2, b[:2])),
        (np.histogramdd, ([lazy(s[:, 0]), lazy(s[:, 1])],), {"bins": [lazy(np.linspace(-3, 3, 4)), 2],
                                                              "weights": lazy(w)}, ([s[:, 0], s[:, 1]],)),
        (np.histogram_bin_edges, (lazy(a),), {"bins": lazy(np.sort(b)), "weights": lazy(a)}, (a,)),
        (np.linalg.lstsq, (lazy(m), lazy(r)), {}, (m, r)),
    ]
    for fn, args, kw, host in calls:
        bz.reset_stats()
        got = fn(*args, **kw)
        assert bz.stats()["realizations"] == 1, fn.__name__
        want_kw = {k: (v.numpy() if isinstance(v, bz.Tensor) else [p.numpy() if isinstance(p, bz.Tensor) else p
                                                                      for p in v] if isinstance(v, list) else v)
                   for k, v in kw.items()}
        same(got, fn(*host, **want_kw))
    bits = lazy(np.arange(12, dtype=np.uint8))
    bz.reset_stats()
    same(np.unpackbits(bits), np.unpackbits(np.arange(12, dtype=np.uint8)))
    assert bz.stats()["realizations"] == 1


def test_registered_with_numpys_protocol():
    from braze import _numpy_protocols
    table = _numpy_protocols._functions(bz)
    for name in bz._on_host.FUNCTIONS:
        assert table[getattr(np, name)] is getattr(bz, name)
    for name in ("lstsq", "multi_dot", "eigvals", "eig"):
        assert table[getattr(np.linalg, name)] is getattr(bz.linalg, name)
