"""More NumPy functions braze builds from its ops (python/braze/_ufunc_math.py,
_quantiles.py, _statistics.py, _grids.py and _selection.py),
against NumPy: the element-wise ufuncs over float32/float64 (int32 where NumPy
takes integers) with NaN, +-Inf and -0.0, in several layouts, by name and
through NumPy's protocols, fusing into one kernel; the order statistics over
axes, methods and NaN slices; cov and corrcoef; the creation and index
helpers; the functions that realize (bincount, histogram, ...); and
isin, delete, insert, fill_diagonal, put_along_axis, resize, histogram2d,
partition, lexsort and the ufunc methods at, reduceat and accumulate
(python/braze/_more_numpy.py)."""

import os
import warnings

import numpy as np
import pytest

import braze as bz
from conftest import assert_matches, make_layout, values

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
F32, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def numpy(fn, *args, **kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kw)


def same_values(got, want, exact=False, rtol=None, atol=0, signed_zeros=True):
    """got (a braze tensor) holds want's values: shape, NaN and signed zeros
    where want has them; exact, or within rtol (and atol)."""
    arr = got.numpy()
    want = np.asarray(want)
    assert arr.shape == want.shape, (arr.shape, want.shape)
    if arr.dtype.kind == "f" or want.dtype.kind == "f":
        a, w = arr.astype(np.float64), want.astype(np.float64)
        if exact:
            np.testing.assert_array_equal(a, w)
        else:
            tol = rtol or (1e-13 if got.dtype == F64 else 2e-6)
            np.testing.assert_allclose(a, w, rtol=tol, atol=atol, equal_nan=True)
        zero = (w == 0) & (a == 0)
        if signed_zeros:
            np.testing.assert_array_equal(np.signbit(a[zero]), np.signbit(w[zero]))
    else:
        np.testing.assert_array_equal(arr, want)


# --- element-wise ----------------------------------------------------------------------------------------

UNARY = ["rint", "cbrt", "fabs", "sinc", "spacing"]
EXACT = {"rint", "fabs", "spacing"}


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy(name, dtype):
    x = values(dtype, (7, 9), seed=1)
    if dtype.kind == "f":
        x[0, :4] = [-0.0, 27.0, -8.0, 2.5]
    got = getattr(bz, name)(bz.tensor(x))
    # braze's float rule: the input's float type, float32 for integers (NumPy: float64)
    assert got.dtype == (dtype if dtype.kind == "f" else F32)
    want = numpy(getattr(np, name), x if dtype.kind == "f" else x.astype(np.float32))
    sinc_of_integers = name == "sinc" and dtype.kind == "i"  # sin(pi n) is rounding noise either way
    same_values(got, want, exact=name in EXACT, rtol=4e-6 if got.dtype == F32 else None,
                atol=1e-6 if sinc_of_integers else 0, signed_zeros=not sinc_of_integers)
    via_numpy = getattr(np, name)(bz.tensor(x))
    assert isinstance(via_numpy, bz.Tensor) and not via_numpy.is_realized
    same_values(via_numpy, got.numpy(), exact=True)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "sliced_reversed", "zero_size", "scalar"])
@pytest.mark.parametrize("name", ["rint", "cbrt", "fabs", "frexp", "modf", "spacing"])
def test_unary_layouts(name, layout):
    shape = {"zero_size": (0, 5), "scalar": ()}.get(layout, (3, 5))
    x = values(F32, shape, seed=2)
    t = make_layout(layout, x)
    got = getattr(bz, name)(t)
    want = numpy(getattr(np, name), x)
    for g, w in zip(got, want) if isinstance(got, tuple) else [(got, want)]:
        same_values(g, w, exact=name != "cbrt")


def test_cbrt_is_exact_on_cubes_and_keeps_signs():
    for dtype in (F32, F64):
        tiny, huge = (8e-300, 1e300) if dtype == F64 else (8e-36, 1e36)
        cubes = np.array([27, -8, 64, 1000, 3.375, -0.125, 1e-30, tiny, huge], dtype)
        roots = np.array([3, -2, 4, 10, 1.5, -0.5, np.cbrt(1e-30), np.cbrt(cubes[7].astype(np.float64)),
                          np.cbrt(cubes[8].astype(np.float64))], np.float64).astype(dtype)
        got = bz.cbrt(bz.tensor(cubes)).numpy()
        assert np.all(np.abs(got - roots) <= np.spacing(np.abs(roots))), (got, roots)
        np.testing.assert_array_equal(got[:6], roots[:6])
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
        got = bz.cbrt(bz.tensor(specials)).numpy()
        np.testing.assert_array_equal(got, np.cbrt(specials))
        np.testing.assert_array_equal(np.signbit(got[:4]), [False, True, False, True])


def _wide_floats(dtype, seed):
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    v = rng.standard_normal(300) * 10.0 ** rng.integers(-40, 38, 300)
    v = np.concatenate([v, [info.max, -info.max, info.tiny, -info.tiny, info.smallest_subnormal, info.tiny * 0.75,
                            1.0, -1.0, 2.0, 0.5, 0.0, -0.0, np.inf, -np.inf, np.nan]])
    if dtype == F64:
        v = np.concatenate([v, rng.standard_normal(100) * 10.0 ** rng.integers(-320, 300, 100), [5e-324, 1e-310]])
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", [F32, F64], ids=lambda d: d.name)
def test_frexp_ldexp_nextafter_spacing_are_exact(dtype):
    v = _wide_floats(dtype, 3)
    m, e = bz.frexp(bz.tensor(v))
    wm, we = np.frexp(v)
    assert m.dtype == dtype and e.dtype == I32
    same_values(m, wm, exact=True)
    np.testing.assert_array_equal(e.numpy(), we)
    rng = np.random.default_rng(4)
    for n in (rng.integers(-1200, 1200, v.size), rng.integers(-70, 70, v.size)):
        for ndt in (np.int32, np.int64):
            same_values(bz.ldexp(bz.tensor(v), bz.tensor(n.astype(ndt))), numpy(np.ldexp, v, n.astype(ndt)), exact=True)
    same_values(bz.ldexp(bz.tensor(v), 3), numpy(np.ldexp, v, 3), exact=True)
    w = np.roll(v, 1)
    same_values(bz.nextafter(bz.tensor(v), bz.tensor(w)), np.nextafter(v, w), exact=True)
    same_values(bz.nextafter(bz.tensor(v), 0.0), np.nextafter(v, dtype.type(0)), exact=True)
    same_values(bz.spacing(bz.tensor(v)), numpy(np.spacing, v), exact=True)
    with pytest.raises(TypeError, match="ldexp: the exponent must be an integer"):
        bz.ldexp(bz.tensor(v), bz.tensor(v))


def test_modf_signs_and_infinities():
    x = np.array([2.5, -2.5, -2.0, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e30, -0.75], np.float64)
    frac, whole = bz.modf(bz.tensor(x))
    wf, ww = np.modf(x)
    same_values(frac, wf, exact=True)
    same_values(whole, ww, exact=True)
    np.testing.assert_array_equal(np.signbit(frac.numpy()[~np.isnan(x)]), np.signbit(wf[~np.isnan(x)]))


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_divmod_matches_numpy_and_floor_divide(dtype):
    a = values(dtype, (6, 8), seed=5)
    b = values(dtype, (6, 8), seed=6)
    if dtype.kind == "i":
        b[0, :3] = 0  # NumPy: 0 and 0 for an integer division by zero
    q, r = bz.divmod(bz.tensor(a), bz.tensor(b))
    wq, wr = numpy(np.divmod, a, b)
    assert q.dtype == dtype and r.dtype == dtype
    same_values(q, wq, exact=True, signed_zeros=False)  # braze's // gives -0.0 for a -0 < a / b < 0 (NumPy +0.0)
    same_values(r, wr, exact=dtype.kind != "f", rtol=1e-6 if dtype == F32 else 1e-12)
    nq, nr = np.divmod(bz.tensor(a), bz.tensor(b))
    assert isinstance(nq, bz.Tensor) and isinstance(nr, bz.Tensor)
    same_values(nq, q.numpy(), exact=True)
    big = np.array([2**62 + 5, -(2**62) - 5, 2**53 + 1], np.int64)  # quotients past float64's 53 bits
    q, r = bz.divmod(bz.tensor(big), 3)
    np.testing.assert_array_equal(q.numpy(), big // 3)
    np.testing.assert_array_equal(r.numpy(), big % 3)


@pytest.mark.parametrize("dtype", [I32, I64, np.dtype(np.int8), np.dtype(np.uint8)], ids=lambda d: d.name)
def test_gcd_lcm(dtype):
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    hi = min(info.max, 2 ** 40)
    lo = max(info.min + 1, -hi)
    a = rng.integers(lo, hi, 200, endpoint=True).astype(dtype)
    b = rng.integers(lo, hi, 200, endpoint=True).astype(dtype)
    common = rng.integers(1, 50, 200).astype(dtype)
    a[:50], b[:50] = (a[:50] // 64 * common[:50]).astype(dtype), (b[:50] // 64 * common[:50]).astype(dtype)
    a[50:54], b[50:54] = [0, 0, 5, 1], [0, 7, 0, 1]
    if dtype == I64:
        a[54:58] = [2 ** 62 + 2 ** 40 * 3, 600851475143, 2 ** 61 - 1, 2 ** 63 - 1]
        b[54:58] = [2 ** 40 * 6, 6857 * 71, 2 ** 31 - 1, 1]
        a[58:60], b[58:60] = [832040, 2 ** 62 - 1], [514229, 2 ** 61 + 1]  # Fibonacci: Euclid's worst case
    ta, tb = bz.tensor(a), bz.tensor(b)
    assert_matches(bz.gcd(ta, tb), np.gcd(a, b))
    assert_matches(bz.lcm(ta, tb), numpy(np.lcm, a, b))  # it wraps past the range, as NumPy's
    assert_matches(np.gcd(ta, tb), np.gcd(a, b))
    assert_matches(bz.gcd(ta, 12), np.gcd(a, dtype.type(12)))
    with pytest.raises(TypeError, match="gcd: only integer inputs"):
        bz.gcd(bz.tensor(np.ones(3, np.float32)), 2)


def test_sinc_at_zero_and_specials():
    x = np.array([0.0, -0.0, 1.0, 0.5, -2.5, np.inf, np.nan, 1e-30], np.float64)
    same_values(bz.sinc(bz.tensor(x)), numpy(np.sinc, x))


@pytest.mark.skipif(REFERENCE, reason="the reference backend launches no kernels")
@pytest.mark.parametrize("name", ["rint", "cbrt", "fabs", "sinc", "ldexp", "frexp", "modf", "divmod", "all"])
def test_element_wise_ones_fuse_into_one_kernel(name):
    x = bz.tensor(values(F32, (64, 64), seed=8, specials=False))
    y = bz.tensor(values(F32, (64, 64), seed=9, specials=False, lo=1, hi=4))
    n = bz.tensor(np.arange(-2048, 2048, dtype=np.int32).reshape(64, 64) // 16)
    outs = {"rint": lambda: [bz.rint(x) * 2], "cbrt": lambda: [bz.cbrt(x) + y], "fabs": lambda: [np.fabs(x - y)],
            "sinc": lambda: [bz.sinc(x) * y], "ldexp": lambda: [bz.ldexp(x, n) + 1],
            "frexp": lambda: list(bz.frexp(x * y)), "modf": lambda: list(np.modf(x * 3)),
            "divmod": lambda: list(bz.divmod(x, y)),
            "all": lambda: [np.clip(bz.rint(x) + bz.fabs(y) - bz.sinc(y) + bz.cbrt(x) * bz.modf(y)[0], -5, 5)]}[name]()
    bz.reset_stats()
    bz.realize(outs)
    s = bz.stats()
    assert s["kernels_launched"] == 1 and s["kernels_interpreted"] == 0, s


def test_two_output_ufuncs_through_numpy_with_out():
    x = values(F64, (4, 5), seed=10)
    m_out, e_out = bz.zeros((4, 5), "float64"), bz.zeros((4, 5), "int32")
    r = np.frexp(bz.tensor(x), out=(m_out, e_out))
    assert r[0] is m_out and r[1] is e_out
    wm, we = np.frexp(x)
    same_values(m_out, wm, exact=True)
    np.testing.assert_array_equal(e_out.numpy(), we)
    frac, whole = np.modf(bz.tensor(x))
    assert not frac.is_realized and not whole.is_realized
    np.testing.assert_array_equal(whole.numpy(), np.modf(x)[1])


def test_complex_and_real_predicates():
    t = bz.tensor(values(F32, (2, 3), seed=11))
    assert bz.iscomplexobj(t) is False and np.iscomplexobj(t) is False
    assert bz.isrealobj(t) is True and np.isrealobj(t) is True
    assert_matches(np.isreal(t), np.ones((2, 3), bool))
    assert_matches(np.iscomplex(t), np.zeros((2, 3), bool))
    assert bz.iscomplexobj(np.array([1j])) and not bz.isrealobj([1 + 2j])
    assert_matches(bz.isreal(np.array([1 + 0j, 2j])), np.array([True, False]))


# --- order statistics ------------------------------------------------------------------------------------


def _stat_input(dtype, nans=True):
    x = values(F64, (4, 5, 6), seed=12, specials=False) * 10
    if dtype.kind == "i":
        return x.astype(dtype)
    if nans:
        x[0, 1, 2] = np.nan
        x[1, :, 3] = np.nan
        x[2, 2, 2] = np.inf
        x[3, 0, 0] = -np.inf
        x[2, 0, :] = -0.0
    return x.astype(dtype)


def _check_stat(got, want, input_dtype):
    want = np.asarray(want)
    assert isinstance(got, bz.Tensor)
    if want.dtype.kind == "f" and input_dtype.kind == "i":
        assert got.dtype == (F64 if want.dtype == F64 and got.dtype == F64 else F32)  # braze's float for integers
    else:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    arr = got.numpy().astype(np.float64)
    assert arr.shape == want.shape
    np.testing.assert_allclose(arr, want.astype(np.float64), rtol=2e-6 if F32 in (got.dtype, input_dtype) else 1e-12,
                               atol=1e-5 if F32 in (got.dtype, input_dtype) else 1e-12, equal_nan=True)


AXES = [None, 0, -1, (0, 2), (1, 2)]


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median(name, axis, dtype):
    x = _stat_input(dtype)
    t = bz.tensor(x)
    for keepdims in (False, True):
        want = numpy(getattr(np, name), x, axis=axis, keepdims=keepdims)
        _check_stat(getattr(bz, name)(t, axis=axis, keepdims=keepdims), want, dtype)
        _check_stat(getattr(np, name)(t, axis=axis, keepdims=keepdims), want, dtype)


METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "hazen", "weibull", "median_unbiased", "normal_unbiased",
           "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf"]


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["percentile", "quantile", "nanpercentile", "nanquantile"])
@pytest.mark.parametrize("method", METHODS)
def test_quantiles(method, name, dtype):
    x = _stat_input(dtype)
    t = bz.tensor(x)
    scale = 100 if "percentile" in name else 1
    qs = [0.37 * scale, [0.0, 0.25 * scale, 0.5 * scale, scale], np.array([0.1, 0.9], np.float32) * scale]
    for q in qs:
        for axis in ([None, 1, (0, 2)] if method in ("linear", "lower", "nearest") else [-1]):
            want = numpy(getattr(np, name), x, q, axis=axis, method=method)
            _check_stat(getattr(bz, name)(t, q, axis=axis, method=method), want, dtype)
    want = numpy(getattr(np, name), x, qs[1], axis=0, method=method, keepdims=True)
    _check_stat(getattr(np, name)(t, qs[1], axis=0, method=method, keepdims=True), want, dtype)


def test_quantile_dtypes_follow_numpy():
    x32 = values(F32, (10,), seed=13, specials=False)
    t = bz.tensor(x32)
    assert bz.percentile(t, 50).dtype == F32  # a Python q is weak
    assert bz.percentile(t, [25, 75]).dtype == F64  # an array q promotes, as in NumPy
    assert bz.percentile(t, np.array([25.0], np.float32)).dtype == F32
    assert bz.percentile(t, 50, method="lower").dtype == F32
    ti = bz.tensor(np.arange(10, dtype=np.int32))
    assert bz.median(ti).dtype == F32 and bz.quantile(ti, 0.5).dtype == F32  # NumPy: float64
    assert bz.quantile(ti, 0.5, method="nearest").dtype == I32
    assert_matches(bz.quantile(ti, np.array([0, 1])), np.quantile(np.arange(10, dtype=np.int32), np.array([0, 1])))


@pytest.mark.parametrize("layout", ["transposed", "sliced", "sliced_reversed", "scalar"])
def test_order_statistics_layouts(layout):
    x = values(F32, () if layout == "scalar" else (3, 5), seed=14)
    t = make_layout(layout, x)
    for axis in [None] if layout == "scalar" else [None, 0, 1]:
        for name, args in [("median", ()), ("nanmedian", ()), ("percentile", (40,)), ("nanquantile", ([0.2, 0.8],))]:
            _check_stat(getattr(bz, name)(t, *args, axis=axis), numpy(getattr(np, name), x, *args, axis=axis), F32)


def test_order_statistics_of_empty_and_nan_slices():
    e = np.zeros((0, 3), np.float32)
    te = bz.tensor(e)
    _check_stat(bz.median(te, axis=0), numpy(np.median, e, axis=0), F32)
    _check_stat(bz.nanmedian(te, axis=0), numpy(np.nanmedian, e, axis=0), F32)
    _check_stat(bz.nanpercentile(te, 50, axis=0), numpy(np.nanpercentile, e, 50, axis=0), F32)
    _check_stat(bz.median(te, axis=1), numpy(np.median, e, axis=1), F32)
    _check_stat(bz.percentile(te, [10, 50], axis=1), numpy(np.percentile, e, [10, 50], axis=1), F32)
    with pytest.raises(IndexError):
        bz.percentile(te, 50, axis=0)  # NumPy's IndexError for an empty slice
    x = np.array([[1.0, np.nan, 3.0], [np.nan] * 3, [np.inf, 2.0, np.inf]], np.float64)
    for name in ("median", "nanmedian"):
        _check_stat(getattr(bz, name)(bz.tensor(x), axis=1), numpy(getattr(np, name), x, axis=1), F64)
    for name in ("percentile", "nanpercentile"):
        _check_stat(getattr(bz, name)(bz.tensor(x), [0, 30, 100], axis=1),
                    numpy(getattr(np, name), x, [0, 30, 100], axis=1), F64)
    np.testing.assert_array_equal(np.signbit(bz.median(bz.tensor(np.array([-0.0, -0.0]))).numpy()), False)


def test_quantile_errors():
    t = bz.tensor(np.arange(5.0))
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        bz.percentile(t, 101)
    with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"):
        bz.quantile(t, [0.5, -0.1])
    with pytest.raises(ValueError, match="'bogus' is not a valid method"):
        bz.quantile(t, 0.5, method="bogus")
    with pytest.raises(TypeError, match="weights= is not supported"):
        np.quantile(t, 0.5, method="inverted_cdf", weights=np.ones(5))


# --- cov and corrcoef ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F64], ids=lambda d: d.name)
def test_cov_and_corrcoef(dtype):
    rng = np.random.default_rng(15)
    m = rng.standard_normal((3, 7)).astype(dtype)
    y = rng.standard_normal((2, 7)).astype(dtype)
    fw, aw = np.array([1, 2, 1, 3, 1, 1, 2]), rng.random(7)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == F32 else dict(rtol=1e-12, atol=1e-12)
    cases = [{}, dict(bias=True), dict(ddof=0), dict(ddof=3), dict(fweights=fw), dict(aweights=aw),
             dict(fweights=fw, aweights=aw), dict(fweights=fw, aweights=aw, ddof=0), dict(rowvar=False)]
    for kw in cases:
        got = bz.cov(bz.tensor(m), **kw)
        assert got.dtype == dtype  # NumPy: float64
        assert_matches(got, np.cov(m, **kw), dtype=dtype, **tol)
    assert_matches(np.cov(bz.tensor(m), bz.tensor(y)), np.cov(m, y), dtype=dtype, **tol)
    assert_matches(bz.cov(bz.tensor(m[0])), np.cov(m[0]), dtype=dtype, **tol)
    assert_matches(bz.cov(bz.tensor(m.T), rowvar=False), np.cov(m.T, rowvar=False), dtype=dtype, **tol)
    assert_matches(bz.cov(bz.tensor(m[:1]), rowvar=False), numpy(np.cov, m[:1], rowvar=False), dtype=dtype, **tol)
    assert_matches(bz.cov(bz.tensor(m[0]), bz.tensor(y.T), rowvar=False), np.cov(m[0], y.T, rowvar=False), dtype=dtype,
                   **tol)
    assert_matches(bz.cov(make_layout("transposed", m)), np.cov(m), dtype=dtype, **tol)
    assert_matches(bz.cov(bz.tensor(m), dtype="float64"), np.cov(m))
    assert_matches(np.corrcoef(bz.tensor(m)), np.corrcoef(m), dtype=dtype, **tol)
    assert_matches(bz.corrcoef(bz.tensor(m[0]), bz.tensor(m[1])), np.corrcoef(m[0], m[1]), dtype=dtype, **tol)
    assert_matches(bz.corrcoef(bz.tensor(m[0])), np.corrcoef(m[0]), dtype=dtype, **tol)
    assert bz.cov(bz.tensor(np.zeros((0, 3), dtype))).shape == (0, 0)
    with pytest.raises(TypeError, match="fweights must be integer"):
        bz.cov(bz.tensor(m), fweights=aw)


# --- creation and index helpers --------------------------------------------------------------------------


def test_logspace_geomspace():
    assert_matches(bz.logspace(0, 3, 7, dtype="float64"), np.logspace(0, 3, 7), rtol=1e-14)
    assert_matches(bz.logspace(1, 2, 5, base=2.0, endpoint=False, dtype="float64"),
                   np.logspace(1, 2, 5, base=2.0, endpoint=False), rtol=1e-14)
    assert bz.logspace(0, 1, 3).dtype == F32 and bz.geomspace(1, 2, 3).dtype == F32  # NumPy: float64
    for args, kw in [((1, 1000, 4), {}), ((-1000, -1, 4), {}), ((2, 50, 6), dict(endpoint=False)), ((5, 5, 1), {}),
                     ((1, 2, 0), {})]:
        got = bz.geomspace(*args, dtype="float64", **kw)
        assert_matches(got, np.geomspace(*args, **kw), rtol=1e-14)
    np.testing.assert_array_equal(bz.geomspace(1, 1000, 4).numpy()[[0, -1]], [1, 1000])
    with pytest.raises(ValueError, match="Geometric sequence cannot include zero"):
        bz.geomspace(0, 1)
    assert isinstance(np.logspace(bz.tensor(np.float64(0)), 2, 3), bz.Tensor)


@pytest.mark.parametrize("key", [np.s_[0:5, 0:3], np.s_[0:1:5j, -1:1:3j], np.s_[0:4:2, 1:2:0.25], np.s_[0:5],
                                 np.s_[0:1:5j], np.s_[1:10:3, 0:2, 2:0:-1], np.s_[3:7, 0:1:1j]], ids=str)
def test_mgrid_ogrid(key):
    want = np.mgrid[key]
    got = bz.mgrid[key]
    assert got.dtype == (I64 if want.dtype.kind == "i" else F32)  # braze's float32 for non-integers (NumPy: float64)
    assert_matches(got, want, dtype=got.dtype)
    wo, go = np.ogrid[key], bz.ogrid[key]
    assert isinstance(go, tuple) == isinstance(wo, tuple)
    for g, w in zip(go, wo) if isinstance(wo, tuple) else [(go, wo)]:
        assert_matches(g, w, dtype=g.dtype)


def test_indices_and_ix():
    assert_matches(bz.indices((2, 3, 4)), np.indices((2, 3, 4)))
    assert_matches(bz.indices((2, 3), dtype="int32"), np.indices((2, 3), dtype=np.int32))
    for g, w in zip(bz.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        assert_matches(g, w)
    got = bz.ix_([0, 2], np.array([True, False, True, True]), bz.tensor(np.array([1, 0])))
    for g, w in zip(got, np.ix_([0, 2], np.array([True, False, True, True]), [1, 0])):
        assert_matches(g, w)
    a = values(F32, (3, 4, 2), seed=16)
    rows, cols = np.ix_(bz.tensor(np.array([2, 0])), bz.tensor(np.array([1, 3])))
    assert_matches(bz.tensor(a)[rows, cols], a[np.ix_([2, 0], [1, 3])])


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 6])
def test_diag_diagflat(k):
    v = values(I32, (4,), seed=17)
    assert_matches(bz.diag(bz.tensor(v), k), np.diag(v, k))
    assert_matches(np.diag(bz.tensor(v), k), np.diag(v, k))
    assert_matches(bz.diag(bz.tensor(v > 0), k), np.diag(v > 0, k))
    assert_matches(bz.diagflat(bz.tensor(v.reshape(2, 2)), k), np.diagflat(v.reshape(2, 2), k))
    m = values(F32, (3, 4), seed=18)
    assert_matches(bz.diag(make_layout("transposed", m), k), np.diag(m, k))
    assert_matches(bz.diag(bz.tensor(np.zeros(0, np.float32)), k), np.diag(np.zeros(0, np.float32), k))
    with pytest.raises(ValueError, match="Input must be 1- or 2-d"):
        bz.diag(bz.tensor(np.zeros((2, 2, 2))))


@pytest.mark.skipif(REFERENCE, reason="the reference backend launches no kernels")
def test_diag_of_a_vector_is_one_lazy_kernel():
    v = bz.tensor(values(F32, (50,), seed=19))
    r = bz.diag(v * 2, 3) + 1
    assert not r.is_realized
    bz.reset_stats()
    r.numpy()
    assert bz.stats()["kernels_launched"] <= 2  # the repeat of v and the select


@pytest.mark.parametrize("N", [None, 0, 1, 2, 5, 9])
def test_vander(N):
    xi = np.array([2, -3, 0, 5, 1], np.int32)
    for inc in (False, True):
        got = bz.vander(bz.tensor(xi), N, inc)
        assert_matches(got, np.vander(xi, N, inc))  # exact integers, int64 as NumPy's
        xf = np.array([1.5, -0.5, 0.0, np.inf, np.nan, -0.0])
        assert_matches(np.vander(bz.tensor(xf), N, inc), np.vander(xf, N, inc), rtol=1e-14, atol=0)
        assert bz.vander(bz.tensor(xf.astype(np.float32)), N, inc).dtype == F32  # NumPy: float64


def test_polyval_trapezoid_append():
    p = np.array([3.0, -2.0, 0.5, 1.0])
    x = np.array([0.0, 1.5, -2.0, np.inf, np.nan])
    assert_matches(bz.polyval(bz.tensor(p), bz.tensor(x)), numpy(np.polyval, p, x))
    x32 = x[:3].astype(np.float32)
    assert_matches(np.polyval(bz.tensor(p.astype(np.float32)), bz.tensor(x32)), np.polyval(p.astype(np.float32), x32))
    y = values(F64, (3, 6), seed=20, specials=False)
    xs = np.cumsum(np.random.default_rng(21).random(6))
    assert_matches(bz.trapezoid(bz.tensor(y)), np.trapezoid(y))
    assert_matches(np.trapezoid(bz.tensor(y), bz.tensor(xs)), np.trapezoid(y, xs))
    assert_matches(bz.trapezoid(make_layout("transposed", y), dx=0.5, axis=0), np.trapezoid(y, dx=0.5, axis=0))
    assert_matches(bz.trapezoid(bz.tensor(y), bz.tensor(np.tile(xs, (3, 1)))), np.trapezoid(y, np.tile(xs, (3, 1))))
    assert bz.trapezoid(bz.tensor(np.arange(5, dtype=np.int32))).dtype == F32  # NumPy: float64
    assert_matches(bz.append(bz.tensor(y), bz.tensor(xs)), np.append(y, xs))
    assert_matches(np.append(bz.tensor(y), bz.tensor(y[:1]), axis=0), np.append(y, y[:1], axis=0))


def test_select_and_piecewise():
    x = np.arange(-5, 5.0)
    conds, choices = [x < -2, x > 2], [x ** 2, x + 100]
    got = bz.select([bz.tensor(c) for c in conds], [bz.tensor(c) for c in choices], -1)
    assert_matches(got, np.select(conds, choices, -1))
    assert_matches(np.select([bz.tensor(c) for c in conds], [bz.tensor(c) for c in choices]),
                   np.select(conds, choices))
    with pytest.raises(TypeError, match="invalid entry 0 in condlist"):
        bz.select([bz.tensor(x)], [bz.tensor(x)])
    with pytest.raises(ValueError, match="same length"):
        bz.select([bz.tensor(conds[0])], [])
    funcs = [lambda v: -v, lambda v: v * 2, 7.0]
    assert_matches(bz.piecewise(bz.tensor(x), [bz.tensor(c) for c in conds], funcs), np.piecewise(x, conds, funcs))
    assert_matches(np.piecewise(bz.tensor(x), bz.tensor(x < 0), [-1, 1]), np.piecewise(x, x < 0, [-1, 1]))
    xi = np.arange(6)
    assert_matches(bz.piecewise(bz.tensor(xi), [bz.tensor(xi > 2)], [lambda v: v * 1.5]),
                   np.piecewise(xi, [xi > 2], [lambda v: v * 1.5]))  # cast to x's dtype, as NumPy's
    with pytest.raises(ValueError, match="with 2 condition"):
        bz.piecewise(bz.tensor(x), [bz.tensor(c) for c in conds], [1])


def test_interp():
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, 3.0, -1.0, 0.0])
    x = np.array([-1, 0, 0.5, 1, 2, 2.5, 3.9, 4, 5, np.nan, np.inf, -np.inf])
    assert_matches(bz.interp(bz.tensor(x), bz.tensor(xp), bz.tensor(fp)), np.interp(x, xp, fp))
    assert_matches(np.interp(bz.tensor(x), xp, fp, left=-9, right=9), np.interp(x, xp, fp, left=-9, right=9))
    assert_matches(bz.interp(bz.tensor(x[:9]), bz.tensor(xp), bz.tensor(fp), period=3.0),
                   np.interp(x[:9], xp, fp, period=3.0), rtol=1e-12)
    assert_matches(bz.interp(bz.tensor(x), bz.tensor(xp[:1]), bz.tensor(fp[:1])), np.interp(x, xp[:1], fp[:1]))
    fi = np.array([0.0, np.inf, 5.0])
    assert_matches(bz.interp(bz.tensor(x), bz.tensor(xp[:3]), bz.tensor(fi)), numpy(np.interp, x, xp[:3], fi))
    xt = values(F32, (3, 4), seed=22, specials=False)
    got = bz.interp(make_layout("transposed", xt), bz.tensor(xp.astype(np.float32)), bz.tensor(fp.astype(np.float32)))
    assert got.dtype == F32  # NumPy: float64
    assert_matches(got, np.interp(xt, xp, fp), dtype=F32)
    with pytest.raises(ValueError, match="array of sample points is empty"):
        bz.interp(bz.tensor(x), bz.tensor(xp[:0]), bz.tensor(fp[:0]))


def test_digitize_bincount_histogram():
    bins = np.array([0.0, 1.0, 1.0, 2.5, 4.0])
    x = np.array([-1, 0, 0.5, 1, 2, 2.5, 3.9, 4, 5, np.nan, np.inf])
    for right in (False, True):
        assert_matches(bz.digitize(bz.tensor(x), bz.tensor(bins), right), np.digitize(x, bins, right))
        assert_matches(np.digitize(bz.tensor(x), bins[::-1].copy(), right), np.digitize(x, bins[::-1], right))
    with pytest.raises(ValueError, match="monotonically"):
        bz.digitize(bz.tensor(x), bz.tensor(np.array([0.0, 2, 1])))
    ints = np.array([0, 3, 3, 1, 7])
    assert_matches(bz.bincount(bz.tensor(ints)), np.bincount(ints))
    assert_matches(np.bincount(bz.tensor(ints), weights=bz.tensor(np.arange(5.0)), minlength=10),
                   np.bincount(ints, np.arange(5.0), 10))
    a = values(F64, (3, 7), seed=23, specials=False)
    for kw in [{}, dict(bins=4, range=(-1, 1)), dict(bins=[-1, 0, 2], weights=a * 0 + 2), dict(density=True)]:
        hist, edges = np.histogram(bz.tensor(a), **{k: bz.tensor(v) if k == "weights" else v for k, v in kw.items()})
        want_hist, want_edges = np.histogram(a, **kw)
        assert_matches(hist, want_hist)
        assert_matches(edges, want_edges)


def test_array_equiv():
    t = bz.tensor(np.array([1, 2]))
    assert bz.array_equiv(t, np.array([[1, 2], [1, 2]])) is True
    assert np.array_equiv(t, np.array([1, 2, 3])) is False
    assert bz.array_equiv(t, np.array([[1, 2], [1, 3]])) is False


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
def test_nanarg(name):
    z = np.array([[np.nan, 1.0, 3.0], [2.0, np.nan, -np.inf], [np.nan, -np.inf, np.nan]])
    t = bz.tensor(z)
    assert_matches(getattr(bz, name)(t), np.int64(getattr(np, name)(z)))
    assert_matches(getattr(np, name)(t, axis=1), getattr(np, name)(z, axis=1))
    assert_matches(getattr(bz, name)(make_layout("transposed", z), axis=0, keepdims=True),
                   getattr(np, name)(z, axis=0, keepdims=True))
    i = np.array([[3, 1], [0, 5]], np.int32)
    assert_matches(getattr(bz, name)(bz.tensor(i), axis=0), getattr(np, name)(i, axis=0))
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(bz, name)(bz.tensor(np.array([[np.nan, 1.0], [np.nan, 2.0]])), axis=0)


def test_amax_amin_aliases():
    x = values(F32, (3, 4), seed=24, specials=False)
    assert_matches(bz.amax(bz.tensor(x), axis=1), np.amax(x, axis=1))
    assert_matches(bz.amin(bz.tensor(x)), np.amin(x))


def test_on_a_cuda_tensor(cuda_mode):
    """The constants and grids these functions make go to their input's device."""
    x = values(F32, (3, 4), seed=25, specials=False)
    t = bz.tensor(x, device="cuda")
    cases = [(bz.ldexp(t, 3), np.ldexp(x, 3)), (bz.nextafter(t, 0.0), np.nextafter(x, np.float32(0))),
             (bz.diag(t[0], 1), np.diag(x[0], 1)), (bz.piecewise(t, [t > 0], [1.0, -1.0]),
                                                     np.piecewise(x, [x > 0], [1.0, -1.0]))]
    for got, want in cases:
        assert got.device.startswith("cuda")
        assert_matches(got.to("cpu"), want, dtype=got.dtype, rtol=1e-5, atol=1e-6)


# --- isin, delete, insert, the in-place writers, partition, lexsort, ufunc methods -----------------------
# (python/braze/_more_numpy.py)

LAYOUTS = ["contiguous", "transposed", "sliced", "sliced_reversed", "broadcast", "zero_size", "scalar"]


def both(np_call, bz_call):
    """Runs NumPy's call and braze's; where NumPy raises, braze raises the
    same type; else returns (braze's, NumPy's) results."""
    try:
        want = numpy(np_call)
    except Exception as e:
        with pytest.raises(type(e)):
            bz_call()
        return None
    return numpy(bz_call), want


def exactly(got, want):
    """got (a braze tensor) is want: dtype, shape and values, NaN in the same places."""
    want = np.asarray(want)
    assert isinstance(got, bz.Tensor), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def _layout_input(dtype, layout, seed):
    from conftest import logical_values
    x = logical_values(dtype, layout, seed=seed)
    if dtype.kind == "i":
        x = (x % 7).astype(dtype)  # repeats, so that membership and sorting have ties
    return x, make_layout(layout, x)


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64], ids=lambda d: d.name)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_isin(layout, dtype):
    x, t = _layout_input(dtype, layout, seed=30)
    tests = [np.array([0, 3, 5], dtype), np.array([np.nan, 0.0, np.inf]) if dtype.kind == "f" else np.array([1, 2]),
             np.ravel(x)[:3], np.array([], dtype), np.arange(-300, 300).astype(dtype)]  # the last one: > 256, realizes
    for test in tests:
        for invert in (False, True):
            want = np.isin(x, test, invert=invert)
            exactly(np.isin(t, test, invert=invert), want)
            exactly(bz.isin(t, bz.tensor(test), invert=invert), want)
    if dtype.kind == "i":
        exactly(np.isin(t, [1, 2], kind="table"), np.isin(x, [1, 2], kind="table"))


def test_isin_compares_exact_values_and_checks_kind():
    exactly(np.isin(bz.tensor(np.array([0.1, 0.2])), [0.1]), np.array([True, False]))  # float64 both sides
    exactly(np.isin(bz.tensor(np.array([0.1], np.float32)), [0.1]), np.isin(np.float32([0.1]), [0.1]))  # False
    exactly(np.isin(np.array([1, 5, 7]), bz.tensor(np.array([5, 7]))), np.array([False, True, True]))
    exactly(np.isin(bz.tensor(np.array([np.nan])), [np.nan]), np.array([False]))
    grid = np.array([[1, 2], [9, 4]])  # a 2-D tensor of test elements counts as its flat values
    exactly(np.isin(bz.tensor(np.arange(6)), bz.tensor(grid).T), np.isin(np.arange(6), grid))
    x = np.array([4, 1, 9, 7], np.int64)  # assume_unique (both sides unique), lazy and by NumPy's sort
    for test in (np.array([9, 4, 0]), np.arange(0, 600, 3)):
        exactly(np.isin(bz.tensor(x), test, assume_unique=True), np.isin(x, test, assume_unique=True))
    with pytest.raises(ValueError, match="isin"):
        np.isin(bz.tensor(np.arange(3)), [1], kind="bogus")


@pytest.mark.skipif(REFERENCE, reason="the reference backend launches no kernels")
def test_isin_against_a_short_list_is_one_kernel():
    x = bz.tensor(values(F32, (64, 64), seed=31, specials=False))
    r = np.isin(x * 2, [0.5, 1.0, 2.0])
    assert not r.is_realized
    bz.reset_stats()
    r.realize()
    assert bz.stats()["kernels_launched"] == 1


DELETE_OBJS = [0, -1, 2, 7, -8, slice(1, 3), slice(None, None, 2), slice(3, 0, -1), slice(4, 4), slice(None, None, -1),
               [0, 2], [], np.array([True, False, True]), np.array([1, 1, -1])]


@pytest.mark.parametrize("dtype", [F32, I64], ids=lambda d: d.name)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_delete(layout, dtype):
    x, t = _layout_input(dtype, layout, seed=32)
    for axis in (None, 0, 1, -1):
        for obj in DELETE_OBJS:
            r = both(lambda: np.delete(x, obj, axis), lambda: np.delete(t, obj, axis))
            if r is not None:
                exactly(*r)
                exactly(bz.delete(t, obj, axis=axis), r[1])


def test_delete_of_one_index_or_run_is_lazy_and_errors_name_it():
    t = bz.tensor(np.arange(12.0).reshape(3, 4)) * 2
    for obj in (1, slice(1, 3), slice(2, 0, -1)):
        assert not np.delete(t, obj, axis=1).is_realized
    exactly(bz.delete(t, bz.tensor(np.array([3, 0])), axis=1), np.delete(np.arange(12.0).reshape(3, 4) * 2, [3, 0], 1))
    exactly(bz.insert(t, bz.tensor(np.array([1, 3])), 5.0, axis=0),
            np.insert(np.arange(12.0).reshape(3, 4) * 2, [1, 3], 5.0, 0))
    with pytest.raises(np.exceptions.AxisError, match="delete"):
        np.delete(t, 0, axis=2)
    with pytest.raises(IndexError, match="delete"):
        np.delete(t, 4, axis=1)
    with pytest.raises(IndexError, match="delete"):
        np.delete(t, [0.5], axis=1)


INSERT_CASES = [(0, 7), (2, 7.9), (-1, [7, 8, 9]), (5, [[7], [8], [9]]), (1, [[7, 8, 9]]), ([1, 1], 7),
                ([0, 5], [7, 8]), (slice(0, 2), 9), (1, [7, 8]), (9, 7)]


@pytest.mark.parametrize("dtype", [F64, I32], ids=lambda d: d.name)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "broadcast", "zero_size", "scalar"])
def test_insert(layout, dtype):
    x, t = _layout_input(dtype, layout, seed=33)
    for axis in (None, 0, 1, -1):
        for obj, v in INSERT_CASES:
            r = both(lambda: np.insert(x, obj, v, axis), lambda: np.insert(t, obj, v, axis))
            if r is not None:
                exactly(*r)
                exactly(bz.insert(t, obj, bz.tensor(np.asarray(v, dtype)), axis=axis), r[1])


def test_insert_casts_values_and_is_lazy_at_one_index():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = bz.tensor(x) + 0
    r = np.insert(t, 1, bz.tensor(np.array([2.7, -1.5])), axis=1)  # a float tensor into ints truncates, as NumPy
    assert not r.is_realized
    exactly(r, np.insert(x, 1, np.array([2.7, -1.5]), axis=1))
    with pytest.raises(np.exceptions.AxisError, match="insert"):
        np.insert(t, 0, 1, axis=-3)
    with pytest.raises(IndexError, match="insert"):
        np.insert(t, 4, 1, axis=1)


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (4, 4, 4), (0, 3), (1, 1)])
@pytest.mark.parametrize("wrap", [False, True])
@pytest.mark.parametrize("val", [7, [1, 2], np.array([1.5, 2.5, 3.5, 4.5, 5.5, 6.5])])
def test_fill_diagonal_in_place(shape, wrap, val):
    for dtype in (F32, I64):
        x = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
        t = bz.tensor(x) * 1  # a lazy tensor: realized by the write
        alias = t
        r = np.fill_diagonal(t, val, wrap=wrap)
        np.fill_diagonal(x, val, wrap=wrap)
        assert r is None and alias is t
        exactly(t, x)
    t = bz.zeros((3, 3))
    bz.fill_diagonal(t, bz.tensor(np.array([1.0, 2.0, 3.0])))
    exactly(t, np.diag(np.float32([1, 2, 3])))


def test_fill_diagonal_errors_and_numpy_arrays():
    with pytest.raises(ValueError, match="fill_diagonal"):
        np.fill_diagonal(bz.zeros(3), 1)
    with pytest.raises(ValueError, match="fill_diagonal"):
        np.fill_diagonal(bz.zeros((2, 3, 2)), 1)
    a = np.zeros((2, 2))
    bz.fill_diagonal(a, bz.tensor(np.array([4.0, 5.0])))
    np.testing.assert_array_equal(a, np.diag([4.0, 5.0]))


@pytest.mark.parametrize("dtype", [F64, I32], ids=lambda d: d.name)
def test_put_along_axis_in_place(dtype):
    x = values(dtype, (3, 4), seed=34, specials=False)
    for axis in (0, 1, -1):
        idx = np.argsort(x, axis=axis)[(slice(0, 2),) if axis == 0 else (slice(None), slice(0, 2))]
        for v in (9, np.arange(idx.size).reshape(idx.shape).astype(dtype)):
            want = x.copy()
            np.put_along_axis(want, idx, v, axis)
            t = bz.tensor(x) + 0
            alias = t
            assert np.put_along_axis(t, bz.tensor(idx), v, axis) is None and alias is t
            exactly(t, want)
            t = bz.tensor(x)
            bz.put_along_axis(t, idx, bz.tensor(np.asarray(v, dtype)), axis=axis)
            exactly(t, want)
    t = bz.tensor(x)
    np.put_along_axis(t, np.array([0, 5, -1]), 3, None)  # axis=None: flat (C-order) positions
    want = x.copy().ravel()
    want[[0, 5, -1]] = 3
    exactly(t, want.reshape(3, 4))
    a = np.zeros((2, 2), dtype)  # a NumPy array with a tensor's indices: NumPy writes it
    np.put_along_axis(a, bz.tensor(np.array([[1], [0]])), 5, 1)
    np.testing.assert_array_equal(a, np.array([[0, 5], [5, 0]], dtype))


def test_put_along_axis_errors():
    t = bz.zeros((3, 4))
    with pytest.raises(np.exceptions.AxisError, match="put_along_axis"):
        np.put_along_axis(t, np.zeros((3, 1), np.int64), 1, 2)
    with pytest.raises(IndexError, match="put_along_axis"):
        np.put_along_axis(t, np.zeros((3, 1)), 1, 1)
    with pytest.raises(ValueError, match="put_along_axis"):
        np.put_along_axis(t, np.zeros(3, np.int64), 1, 1)
    with pytest.raises(IndexError, match="put_along_axis"):
        np.put_along_axis(t, np.array([[4], [0], [0]]), 1, 1)
    with pytest.raises(ValueError, match="put_along_axis"):
        np.put_along_axis(t, np.zeros((3, 1), np.int64), 1, None)


@pytest.mark.parametrize("dtype", [F32, I32], ids=lambda d: d.name)
def test_put_putmask_and_place_in_place(dtype):
    x = values(dtype, (3, 4), seed=35, specials=False)
    cases = [  # (function, its arguments after the array), each as NumPy runs it on a copy
        (np.put, ([0, 5, -1, 5], [7, 8])), (np.put, (np.array([[1, 2], [3, 40]]), 6, "wrap")),
        (np.put, ([-20, 3, 30], [1, 2, 3], "clip")), (np.put, ([], [1])), (np.put, ([2], [])),
        (np.putmask, (x > x.mean(), np.arange(5, dtype=dtype))), (np.putmask, (x < 0, x[::-1] * 2)),
        (np.putmask, (np.zeros((3, 4), bool), [1])),
        (np.place, (x > x.mean(), [9, 8, 7])), (np.place, (np.zeros((3, 4), bool), [])),
    ]
    for fn, args in cases:
        want = x.copy()
        fn(want, *args)
        for tensor_args in (args, tuple(bz.tensor(np.asarray(a)) if isinstance(a, (list, np.ndarray)) and
                                        np.asarray(a).size else a for a in args)):
            t = bz.tensor(x) + 0  # lazy, as a program's arrays often are
            alias = t
            assert fn(t, *tensor_args) is None and alias is t
            exactly(t, want)
    t = bz.tensor(x)
    t.put([0, 1], [5, 6])  # ndarray.put
    want = x.copy()
    want.put([0, 1], [5, 6])
    exactly(t, want)
    t = bz.tensor(x)
    bz.reset_stats()
    bz.putmask(t, bz.tensor(x) > 0, bz.tensor(x) * 0)  # the select and its lazy operands: one kernel
    assert bz.stats()["kernels_launched"] == (0 if REFERENCE else 1)
    a = x.copy()  # a NumPy array with a tensor's values: NumPy writes it
    np.put(a, bz.tensor(np.array([0])), bz.tensor(np.array([3], dtype)))
    assert a.flat[0] == 3


def test_put_putmask_and_place_errors():
    t = bz.zeros((3, 4))
    with pytest.raises(IndexError, match="put: index 12 is out of bounds"):
        np.put(t, [12], 1)
    with pytest.raises(ValueError, match="put: clipmode"):
        np.put(t, [1], 1, mode="nope")
    with pytest.raises(TypeError, match="put: writes in place"):
        bz.put([1, 2], [0], 1)
    with pytest.raises(ValueError, match="putmask: mask and data"):
        np.putmask(t, np.ones(3, bool), 1)
    with pytest.raises(ValueError, match="putmask: values must not be empty"):
        np.putmask(t, np.ones((3, 4), bool), [])
    with pytest.raises(ValueError, match="place: Cannot insert from an empty array"):
        np.place(t, np.ones((3, 4), bool), [])
    with pytest.raises(ValueError, match="place: mask and data"):
        np.place(t, np.ones(5, bool), [1])
    np.put(t, [1], 2)  # braze keeps working after the errors
    assert t.numpy()[0, 1] == 2


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("new_shape", [7, (2, 7), (3, 5), 0, (0, 3), (), (1,), (4, 1, 2)])
def test_resize(layout, new_shape):
    for dtype in (F32, I32):
        x, t = _layout_input(dtype, layout, seed=35)
        want = np.resize(x, new_shape)
        exactly(np.resize(t, new_shape), want)
        exactly(bz.resize(t, new_shape), want)


def test_resize_is_lazy_and_refuses_negative_sizes():
    assert not np.resize(bz.tensor(np.arange(5.0)) * 2, (3, 4)).is_realized
    with pytest.raises(ValueError, match="resize"):
        np.resize(bz.tensor(np.arange(5.0)), (2, -1))


def test_histogram2d():
    x, y = values(F64, (50,), seed=36, specials=False), values(F64, (50,), seed=37, specials=False)
    w = values(F64, (50,), seed=38, specials=False, lo=0, hi=1)
    for kw in ({}, {"bins": 4}, {"bins": [3, 5]}, {"bins": [np.linspace(-4, 4, 5), 3]}, {"density": True},
               {"range": [[-1, 1], [-2, 2]], "weights": w}):
        got = np.histogram2d(bz.tensor(x), bz.tensor(y), **kw)
        want = np.histogram2d(x, y, **kw)
        assert len(got) == 3
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.numpy(), e)
            assert g.dtype == e.dtype
    got = bz.histogram2d(bz.tensor(x), bz.tensor(y), bins=[bz.tensor(np.linspace(-4, 4, 5)), 3],
                         weights=bz.tensor(w))
    for g, e in zip(got, np.histogram2d(x, y, bins=[np.linspace(-4, 4, 5), 3], weights=w)):
        np.testing.assert_allclose(g.numpy(), e)
    with pytest.raises(ValueError, match="histogram2d"):
        np.histogram2d(bz.tensor(x), bz.tensor(y[:10]))


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "sliced_reversed", "broadcast", "scalar"])
def test_partition_argpartition(layout, dtype):
    x, t = _layout_input(dtype, layout, seed=39)
    for kth, axis in [(1, -1), (0, 0), ([0, 2], 1), (4, None), (-1, -1), (3, 0)]:
        for name in ("partition", "argpartition"):
            r = both(lambda: getattr(np, name)(x, kth, axis=axis), lambda: getattr(np, name)(t, kth, axis=axis))
            if r is not None:
                exactly(*r)
                exactly(getattr(bz, name)(t, kth, axis=axis), r[1])


def test_partition_method_in_place_and_errors():
    x = values(F32, (4, 6), seed=40)
    t = bz.tensor(x)
    exactly(t.argpartition(2), np.argpartition(x, 2))
    alias = t
    assert t.partition(2, axis=0) is None and alias is t
    want = x.copy()
    want.partition(2, axis=0)
    exactly(t, want)
    with pytest.raises(np.exceptions.AxisError, match="partition"):
        np.partition(t, 1, axis=2)
    with pytest.raises(ValueError, match="partition"):
        np.partition(t, 6)


def test_lexsort():
    a = np.array([3, 1, 2, 1, 3, 1], np.int32)
    b = np.array([0.5, np.nan, 0.5, -1.0, 0.25, -1.0])
    k2 = np.stack([b, a.astype(np.float64)])
    exactly(np.lexsort((bz.tensor(b), bz.tensor(a))), np.lexsort((b, a)))
    exactly(bz.lexsort([b, bz.tensor(a)]), np.lexsort([b, a]))
    exactly(np.lexsort(bz.tensor(k2)), np.lexsort(k2))
    exactly(bz.lexsort(bz.tensor(k2.T).T), np.lexsort(k2))  # a transposed tensor of keys
    k3 = values(I32, (2, 3, 4), seed=41) % 3
    exactly(np.lexsort(bz.tensor(k3), axis=0), np.lexsort(k3, axis=0))
    exactly(np.lexsort(bz.tensor(np.zeros((2, 0)))), np.lexsort(np.zeros((2, 0))))
    with pytest.raises(np.exceptions.AxisError, match="lexsort"):
        np.lexsort(bz.tensor(k3), axis=3)


# --- ufunc methods

@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("dtype", [F32, F64, I32, I64], ids=lambda d: d.name)
def test_ufunc_at_is_unbuffered_and_in_place(ufunc, dtype):
    x = values(dtype, (4, 5), seed=42, specials=False, lo=-3, hi=3)
    b = values(dtype, (6,), seed=43, specials=False, lo=-3, hi=3)
    cases = [([0, 0, 1, -1, 0, 3], b[:, None]), ((np.array([0, 0, 3]), np.array([1, 1, 4])), b[:3]),
             ((slice(None), [2, 2]), np.asarray(2, dtype)), (np.array([1, 1]), x[0])]
    for key, v in cases:
        want = x.copy()
        ufunc.at(want, key, v)
        t = bz.tensor(x) + 0  # lazy: realized by the write
        alias = t
        tkey = tuple(bz.tensor(k) if isinstance(k, np.ndarray) else k for k in key) if isinstance(key, tuple) \
            else bz.tensor(np.asarray(key))
        assert ufunc.at(t, tkey, bz.tensor(v)) is None and alias is t
        exactly(t, want)
    a = x.copy()  # a NumPy array updated with a tensor's values: NumPy writes it
    ufunc.at(a, [0, 0], bz.tensor(x[1]))
    want = x.copy()
    ufunc.at(want, [0, 0], x[1])
    np.testing.assert_array_equal(a, want)


def test_ufunc_at_unary_nan_and_errors():
    x = np.array([1.0, np.nan, -2.0, 4.0])
    t = bz.tensor(x)
    np.negative.at(t, [0, 0, 2])  # twice at 0: back to 1
    want = x.copy()
    np.negative.at(want, [0, 0, 2])
    exactly(t, want)
    numpy(np.maximum.at, t, [1, 3], [0.0, np.nan])
    numpy(np.maximum.at, want, [1, 3], [0.0, np.nan])
    exactly(t, want)
    with pytest.raises(IndexError, match="add.at"):
        np.add.at(t, [4], 1.0)
    t = bz.tensor(np.arange(3))
    np.add.at(t, [0, 0], 1.5)  # NumPy's at casts its operand into the array's type (unsafe)
    want = np.arange(3)
    np.add.at(want, [0, 0], 1.5)
    exactly(t, want)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=lambda d: d.name)
def test_ufunc_reduceat(ufunc, dtype):
    x = values(dtype, (5, 6), seed=44, lo=-3, hi=3) if dtype.kind == "i" else values(dtype, (5, 6), seed=44)
    for axis, idx in [(0, [0, 2, 1, 4]), (1, [0, 3, 3, 5]), (-1, [5]), (0, [])]:
        r = both(lambda: ufunc.reduceat(x, idx, axis=axis), lambda: ufunc.reduceat(bz.tensor(x), idx, axis=axis))
        if r is not None:
            exactly(*r)
            exactly(ufunc.reduceat(bz.tensor(x).T, bz.tensor(np.asarray(idx, np.int64)), axis=1 - axis % 2),
                    ufunc.reduceat(x.T, idx, axis=1 - axis % 2))


def test_ufunc_reduceat_dtype_out_and_errors():
    x = np.arange(8, dtype=np.int32)
    exactly(np.add.reduceat(bz.tensor(x), [0, 4], dtype=np.float64), np.add.reduceat(x, [0, 4], dtype=np.float64))
    out = bz.zeros(2, "int64")
    assert np.add.reduceat(bz.tensor(x), [0, 4], out=out) is out
    exactly(out, np.add.reduceat(x, [0, 4]))
    # NumPy 2.4 keeps a reference to the input of a ufunc.reduceat or
    # .accumulate whose override raises (nanobind then reports a leaked
    # tensor at exit), so the errors are checked on the function it calls.
    with pytest.raises(IndexError, match="add.reduceat"):
        bz._more_numpy.reduceat(np.add, bz.tensor(x), [0, 8])
    with pytest.raises(np.exceptions.AxisError, match="add.reduceat"):
        bz._more_numpy.reduceat(np.add, bz.tensor(x), [0], axis=1)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum, np.fmax, np.logical_and,
                                   np.logical_or, np.subtract])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "broadcast", "zero_size"])
def test_ufunc_accumulate(ufunc, layout):
    for dtype in (F32, F64, I32):
        x, t = _layout_input(dtype, layout, seed=45)
        if ufunc in (np.logical_and, np.logical_or):
            x, t = x > 0, t > 0
        for axis in (0, 1, -1):
            r = both(lambda: ufunc.accumulate(x, axis=axis), lambda: ufunc.accumulate(t, axis=axis))
            if r is not None:
                got, want = r
                if ufunc in (np.add, np.multiply):  # the array API's scans: NumPy's values and dtypes
                    assert got.dtype == want.dtype
                    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
                else:
                    exactly(got, want)


def test_maximum_accumulate_nan_out_and_errors():
    x = np.array([1.0, 3.0, np.nan, 2.0, 5.0])
    exactly(np.maximum.accumulate(bz.tensor(x)), np.maximum.accumulate(x))  # NaN propagates
    exactly(np.minimum.accumulate(bz.tensor(x)), np.minimum.accumulate(x))
    exactly(np.fmax.accumulate(bz.tensor(x)), np.fmax.accumulate(x))  # NaN skipped
    out = bz.zeros(5, "float64")
    assert np.maximum.accumulate(bz.tensor(x), out=out) is out
    exactly(out, np.maximum.accumulate(x))
    exactly(np.maximum.accumulate(bz.tensor(x), dtype=np.float32), np.maximum.accumulate(x, dtype=np.float32))
    with pytest.raises(np.exceptions.AxisError, match="maximum.accumulate"):  # (not through NumPy: see above)
        bz._more_numpy.accumulate(np.maximum, bz.tensor(x), axis=1)
