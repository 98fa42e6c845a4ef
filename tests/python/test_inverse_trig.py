"""arctan, arctan2, arcsin and arccos (python/braze/_inverse_trig.py, braze
composites of element-wise ops) against NumPy: the error in ulp over dense
inputs from many decades, float16/bfloat16 within their tolerance, integer
inputs as sin's dtype rule, C99's special values bit for bit (signed
zeros, infinities, NaN), layouts, broadcasting, 0-d and empty inputs, and
one generated kernel for arctan2 with what surrounds it.

References are NumPy's functions computed in float64 from the same values
(long double for float64 results where it is wider, as on x86: NumPy's own
float64 arctan2 can be an ulp off, which would blur a 2 ulp bound)."""

import os

import numpy as np
import pytest

import braze as bz
from braze._inverse_trig import acos, arccos, arcsin, arctan, arctan2, asin, atan, atan2
from conftest import BF16, assert_matches, logical_values, make_layout, values

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs, no kernels to count
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
WIDE = np.longdouble if np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant else np.float64

UNARY = {"arctan": (arctan, np.arctan), "arcsin": (arcsin, np.arcsin), "arccos": (arccos, np.arccos)}
# The bounds asserted, in ulp. Measured, the same on AVX-512, AVX2 and the
# reference interpreter (float32 / float64): in these tests arctan 1.62 /
# 1.05, arctan2 1.62 / 1.35, arcsin 2.25 / 1.95, arccos 2.04 / 1.82 (near
# |x| = 1: 1.74 / 1.66 and 1.95 / 1.82); over every float32 in [2^-8, 2^9)
# arctan 1.62, over every float32 of magnitude in [2^-8, 1) arcsin 2.51 and
# arccos 2.54, over 24M random pairs arctan2 1.76 / 1.58.
ULP_BOUND = {"arctan": 2.0, "arctan2": 2.0, "arcsin": 4.0, "arccos": 4.0}


def reference(numpy_fn, *args, dtype):
    """numpy_fn of the inputs' values, in float64 (WIDE for float64)."""
    wide = WIDE if np.dtype(dtype) == F64 else np.float64
    with np.errstate(all="ignore"):
        return np.asarray(numpy_fn(*[np.asarray(a).astype(wide) for a in args]))


def ulp_error(got, ref, dtype):
    """|got - ref| in ulp of ref rounded to dtype, over the non-NaN refs;
    where ref is NaN, got must be NaN too."""
    got = got.numpy() if isinstance(got, bz.Tensor) else got
    assert got.dtype == dtype
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan)
    ref = ref[~nan]
    with np.errstate(all="ignore"):
        spacing = np.spacing(np.abs(ref.astype(dtype))).astype(ref.dtype)
    return (np.abs(got[~nan].astype(ref.dtype) - ref) / spacing).astype(np.float64)


def wide_values(dtype, n, seed, decades):
    """n values of random sign and magnitude 10^u, u uniform over decades
    (subnormals included at the low end)."""
    rng = np.random.default_rng(seed)
    lo, hi = decades
    with np.errstate(all="ignore"):
        return (np.where(rng.random(n) < 0.5, -1.0, 1.0) * 10.0 ** rng.uniform(lo, hi, n)).astype(dtype)


DECADES = {F32: (-44, 38), F64: (-320, 307)}
N = 100_000


def same_bits_as_numpy(got, want):
    """Equal values, NaN where NaN (of either sign: NumPy's NaN signs are
    not C99's business), and the same sign of every zero."""
    got = got.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


# --- accuracy -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
def test_arctan_ulp(dtype):
    # Just past tan(pi/8), where the reduced argument's rounding weighs most
    # (uncorrected, 136 float32 values there reach 2.09 ulp): every float32
    # up to 0.45, or as many float64.
    edge = np.nextafter(np.float32(np.tan(np.pi / 8)), np.float32(1))
    edge = (edge.view(np.uint32) + np.arange(1_200_000, dtype=np.uint32)).view(np.float32).astype(dtype)
    x = np.concatenate([wide_values(dtype, N, 1, DECADES[dtype]),
                        np.random.default_rng(2).uniform(-4, 4, N).astype(dtype),  # every reduction branch, densely
                        edge, -edge])
    err = ulp_error(arctan(x), reference(np.arctan, x, dtype=dtype), dtype)
    assert err.max() <= ULP_BOUND["arctan"], f"arctan {dtype}: {err.max():.3f} ulp"


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
def test_arctan2_ulp(dtype):
    rng = np.random.default_rng(3)
    x = wide_values(dtype, N, 4, DECADES[dtype])
    y = wide_values(dtype, N, 5, DECADES[dtype])
    # Ratios near the reduction's edges (1, tan(pi/8), 0.66), at every
    # scale, and densely just past tan(pi/8) (see test_arctan_ulp).
    ratio = np.concatenate([rng.choice([1.0, np.tan(np.pi / 8), 0.66, 2.0, 0.5], N) * rng.uniform(0.8, 1.25, N),
                            rng.uniform(np.tan(np.pi / 8), 0.45, N)])
    ratio = np.where(rng.random(2 * N) < 0.5, ratio, 1 / ratio) * np.where(rng.random(2 * N) < 0.5, -1.0, 1.0)
    with np.errstate(all="ignore"):
        y2 = (np.concatenate([x, x]).astype(np.float64) * ratio).astype(dtype)
    ys, xs = np.concatenate([y, y2]), np.concatenate([x, x, x])
    err = ulp_error(arctan2(ys, xs), reference(np.arctan2, ys, xs, dtype=dtype), dtype)
    assert err.max() <= ULP_BOUND["arctan2"], f"arctan2 {dtype}: {err.max():.3f} ulp"


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", ["arcsin", "arccos"])
def test_arcsin_arccos_ulp(name, dtype):
    fn, numpy_fn = UNARY[name]
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.uniform(-1, 1, N).astype(dtype),
                        wide_values(dtype, N, 7, (DECADES[dtype][0], 0))])
    err = ulp_error(fn(x), reference(numpy_fn, x, dtype=dtype), dtype)
    assert err.max() <= ULP_BOUND[name], f"{name} {dtype}: {err.max():.3f} ulp"


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", ["arcsin", "arccos"])
def test_arcsin_arccos_near_one(name, dtype):
    # Near |x| = 1, where sqrt(1 - x^2) loses most: (1 - x)(1 + x) keeps the
    # same bound there (no wider tolerance is needed).
    fn, numpy_fn = UNARY[name]
    below_one = np.nextafter(np.ones(1, dtype), 0, dtype=dtype)[0]
    steps = np.arange(1 << 14, dtype=np.float64)
    last = (1.0 - steps * (1.0 - float(below_one))).astype(dtype)  # the 16384 values up to 1
    decades = (1.0 - 10.0 ** -np.random.default_rng(8).uniform(0, 16, N)).astype(dtype)
    x = np.concatenate([last, -last, decades, -decades])
    err = ulp_error(fn(x), reference(numpy_fn, x, dtype=dtype), dtype)
    assert err.max() <= ULP_BOUND[name], f"{name} {dtype} near 1: {err.max():.3f} ulp"


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["arctan", "arcsin", "arccos", "arctan2"])
def test_half_dtypes_round_once(name, dtype):
    # Computed in float32 and rounded once: within the dtype's tolerance,
    # NaN and infinities in NumPy's places, the dtype sin gives.
    x = values(dtype, (40, 25), seed=11)
    y = values(dtype, (40, 25), seed=12)
    if name in ("arcsin", "arccos"):
        x = (x.astype(np.float32) / 4).astype(dtype)  # mostly inside [-1, 1]
    if name == "arctan2":
        got, want = arctan2(y, x), reference(np.arctan2, y, x, dtype=F32)
    else:
        fn, numpy_fn = UNARY[name]
        got, want = fn(x), reference(numpy_fn, x, dtype=F32)
    assert got.dtype == bz.sin(bz.tensor(x)).dtype == dtype
    assert_matches(got, want, dtype=dtype)


# --- dtypes ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("name", ["arctan", "arcsin", "arccos"])
def test_integer_inputs_follow_sin(name, dtype):
    fn, numpy_fn = UNARY[name]
    x = values(dtype, (6, 7), seed=13)
    if name != "arctan" and np.dtype(dtype) != np.bool_:
        x = np.clip(x, -1, 1).astype(dtype)  # the integers arcsin is defined on
    t = bz.tensor(x)
    got = fn(t)
    assert got.dtype == bz.sin(t).dtype == F32
    assert_matches(got, reference(numpy_fn, x, dtype=F32), dtype=F32)


def test_arctan2_dtypes_follow_divide():
    # arctan2 promotes as braze's divide (PromoteFloat), Python scalars weak.
    cases = [(np.int32, np.int32), (np.int32, np.float16), (np.float16, BF16), (np.float32, np.float64),
             (np.bool_, np.float16), (np.uint8, BF16), (np.int8, np.int64), (np.float64, np.int32)]
    for a, b in cases:
        ya, xb = bz.tensor(values(a, (4,), seed=1)), bz.tensor(values(b, (4,), seed=2))
        assert arctan2(ya, xb).dtype == bz.divide(ya, xb).dtype, (a, b)
    h, i = bz.tensor(values(F16, (4,), seed=3)), bz.tensor(values(np.int32, (4,), seed=4))
    assert arctan2(h, 2.0).dtype == arctan2(3, h).dtype == F16
    assert arctan2(i, 0.5).dtype == F32
    assert arctan2(np.float64(1.0), h).dtype == F64  # a NumPy scalar is strong
    a, b = values(np.int32, (5, 4), seed=5), values(np.int32, (4, 5), seed=6)
    assert_matches(arctan2(bz.tensor(a), bz.tensor(b).T), reference(np.arctan2, a, b.T, dtype=F32), dtype=F32)


# --- special values -------------------------------------------------------------------

SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38]


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
def test_arctan2_c99_special_values(dtype):
    inf, pi = np.inf, np.pi
    # (y, x, expected), C99 Annex F / NumPy, signs of zeros included.
    cases = [(0.0, -0.0, pi), (-0.0, -0.0, -pi), (0.0, 0.0, 0.0), (-0.0, 0.0, -0.0),
             (0.0, -2.0, pi), (-0.0, -2.0, -pi), (0.0, 2.0, 0.0), (-0.0, 2.0, -0.0),
             (3.0, 0.0, pi / 2), (3.0, -0.0, pi / 2), (-3.0, 0.0, -pi / 2), (-3.0, -0.0, -pi / 2),
             (inf, inf, pi / 4), (-inf, inf, -pi / 4), (inf, -inf, 3 * pi / 4), (-inf, -inf, -3 * pi / 4),
             (2.0, -inf, pi), (-2.0, -inf, -pi), (2.0, inf, 0.0), (-2.0, inf, -0.0),
             (0.0, -inf, pi), (-0.0, -inf, -pi), (0.0, inf, 0.0), (-0.0, inf, -0.0),
             (inf, 2.0, pi / 2), (-inf, 2.0, -pi / 2), (inf, -0.0, pi / 2), (-inf, 0.0, -pi / 2),
             (np.nan, 1.0, np.nan), (1.0, np.nan, np.nan), (np.nan, np.nan, np.nan),
             (np.nan, inf, np.nan), (inf, np.nan, np.nan), (0.0, np.nan, np.nan)]
    y, x, want = (np.array(c, dtype) for c in zip(*cases))
    same_bits_as_numpy(bz.tensor(np.arctan2(y, x)), want)  # the table is NumPy's
    same_bits_as_numpy(arctan2(y, x), want)
    same_bits_as_numpy(atan2(bz.tensor(y), bz.tensor(x)), want)
    # Every pair of SPECIALS: bit for bit where an operand is 0, inf or NaN,
    # within the ulp bound elsewhere.
    with np.errstate(over="ignore"):
        s = np.array(SPECIALS, dtype)
    yy, xx = (a.ravel() for a in np.meshgrid(s, s))
    got = arctan2(yy, xx).numpy()
    want = reference(np.arctan2, yy, xx, dtype=dtype)
    special = (yy == 0) | (xx == 0) | ~np.isfinite(yy) | ~np.isfinite(xx)
    same_bits_as_numpy(bz.tensor(got[special]), want[special].astype(dtype))
    assert ulp_error(got[~special], want[~special], dtype).max() <= ULP_BOUND["arctan2"]


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
def test_unary_special_values(dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45], dtype)
    with np.errstate(invalid="ignore"):
        for name, (fn, numpy_fn) in UNARY.items():
            same_bits_as_numpy(fn(x), numpy_fn(x.astype(np.float64)).astype(dtype))
    assert np.signbit(arctan(np.array(-0.0, dtype)).numpy())
    half_pi = np.array([np.pi / 2, -np.pi / 2], dtype)
    np.testing.assert_array_equal(arctan(np.array([np.inf, -np.inf], dtype)).numpy(), half_pi)
    assert np.isnan(arcsin(np.array([1.0001, -2.0, np.inf], dtype)).numpy()).all()
    assert np.isnan(arccos(np.array([1.0001, -2.0, -np.inf], dtype)).numpy()).all()


# --- shapes, layouts, inputs ------------------------------------------------------------


@pytest.mark.parametrize("name", ["arctan", "arcsin", "arccos", "arctan2"])
def test_layouts(name, layout):
    # conftest's layouts (transposed, sliced, reversed, broadcast, zero-size,
    # 0-d), values with NaN, +-inf and +-0 among them.
    x = logical_values(F32, layout, seed=21)
    if name == "arctan2":
        y = logical_values(F32, layout, seed=22)
        got, want = arctan2(make_layout(layout, y), make_layout(layout, x)), reference(np.arctan2, y, x, dtype=F32)
    else:
        fn, numpy_fn = UNARY[name]
        if name != "arctan":
            x = x / np.float32(4)
        got, want = fn(make_layout(layout, x)), reference(numpy_fn, x, dtype=F32)
    assert got.shape == want.shape
    assert_matches(got, want, dtype=F32)
    if want.size:
        np.testing.assert_array_equal(np.signbit(got.numpy()[want == 0]), np.signbit(want[want == 0]))


def test_arctan2_broadcasts_and_transposes():
    y = values(F32, (4, 1), seed=31)
    x = values(F32, (6,), seed=32)
    assert_matches(arctan2(y, x), reference(np.arctan2, y, x, dtype=F32), dtype=F32)
    a = values(F64, (5, 3), seed=33)
    b = values(F64, (3, 5), seed=34)
    got = arctan2(bz.tensor(a).T, bz.tensor(b))
    err = ulp_error(got, reference(np.arctan2, a.T, b, dtype=F64), F64)
    assert got.shape == (3, 5) and err.max() <= ULP_BOUND["arctan2"]
    row = bz.broadcast_to(bz.tensor(values(F32, (5,), seed=35)), (3, 5))
    b32 = b.astype(F32)
    assert_matches(arctan2(row, bz.tensor(b32)), reference(np.arctan2, row.numpy(), b32, dtype=F32), dtype=F32)


def test_zero_d_and_empty():
    for fn, numpy_fn in UNARY.values():
        got = fn(bz.tensor(np.float32(0.25)))
        assert got.shape == () and got.dtype == F32
        assert_matches(got, numpy_fn(np.float64(0.25)), dtype=F32)
        empty = fn(bz.tensor(np.zeros((0, 3), np.float64)))
        assert empty.shape == (0, 3) and empty.dtype == F64 and empty.numpy().shape == (0, 3)
    got = arctan2(bz.tensor(np.float32(-1.0)), bz.tensor(np.float32(-0.0)))
    assert got.shape == () and got.numpy() == np.float32(-np.pi / 2)
    assert arctan2(np.zeros((2, 0), np.float32), np.zeros((0,), np.float32)).shape == (2, 0)


def test_takes_numpy_arrays_scalars_and_lists():
    assert_matches(arctan([0.5, -2.0]), np.arctan([0.5, -2.0]), dtype=F32)  # lists take braze's float32
    assert_matches(arctan2(1.0, -1.0), np.arctan2(1.0, -1.0), dtype=F32)
    assert_matches(arcsin(np.float64(0.5)), np.arcsin(0.5), dtype=F64)
    assert_matches(arccos(np.array([0.1, -0.7])), np.arccos([0.1, -0.7]), dtype=F64)
    h = values(F16, (7,), seed=41)
    assert_matches(arctan2(h, 2.0), np.arctan2(h.astype(np.float64), 2.0), dtype=F16)
    assert_matches(arctan2(-3, bz.tensor(h)), np.arctan2(-3.0, h.astype(np.float64)), dtype=F16)


def test_array_api_aliases():
    assert (atan, atan2, asin, acos) == (arctan, arctan2, arcsin, arccos)


# --- fusion ---------------------------------------------------------------------------


@pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference makes no programs and launches no kernels")
@pytest.mark.parametrize("dtype", [F32, F64, F16], ids=["float32", "float64", "float16"])
def test_one_generated_kernel(dtype):
    # The composites are plain element-wise ops: arctan2 and what surrounds
    # it are one generated kernel (on AVX2 too: its values fit the 16 ymm
    # registers), none interpreted.
    y, x = bz.tensor(values(dtype, (64, 33), seed=51)), bz.tensor(values(dtype, (64, 33), seed=52))
    exprs = {"arctan2": arctan2(y, x) * 2 + 1, "arctan": arctan(x) - y,
             "arcsin": arcsin(x / 4) * y, "arccos": arccos(x / 4) + 1}
    for name, r in exprs.items():
        bz.reset_stats()
        r.numpy()
        s = bz.stats()
        assert s["kernels_launched"] == 1 and s["kernels_interpreted"] == 0, (name, s)


@pytest.mark.parametrize("dtype", [np.int64, np.uint32], ids=str)
@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctan", "tan", "sinh", "cosh", "arcsinh", "arccosh",
                                  "arctanh"])
def test_composites_of_wide_integers_compute_in_float64(name, dtype):
    """An int64 or uint32 operand makes the kernel wide, where float32 math
    rounds after every op: such a composite computes in float64 and rounds
    to float32 once (python/braze/_inverse_trig.py, _compute), so it is
    within 1 ulp of NumPy's float64 value rounded, and float32 still."""
    values = np.array([0, 1, 2, 3, 5, 7, 10, 40, 80, 1000, 2 ** 31 - 1], dtype=np.int64)
    if dtype == np.int64:
        values = np.concatenate([values, -values, [-(2 ** 62), 2 ** 62]])
    x = values.astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    got = getattr(bz, name)(bz.tensor(x)).numpy()
    assert got.dtype == np.float32
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    np.testing.assert_array_max_ulp(got[finite], want[finite], maxulp=1)
    got2 = bz.arctan2(bz.tensor(x), 3.0).numpy()
    assert got2.dtype == np.float32
    np.testing.assert_array_max_ulp(got2, np.arctan2(x.astype(np.float64), 3.0).astype(np.float32), maxulp=1)
