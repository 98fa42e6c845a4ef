"""Valid input at the edges of the ranges gives NumPy's answer: statistics of
half-precision tensors past 65,504 elements, integer statistics past
float32's range, slice steps near +-2^63, float64 -> float16 rounding,
NumPy's arange, and Python ints past a dtype's range in comparisons. Each
case once gave a wrong answer (issue 21)."""

import ml_dtypes
import numpy as np
import pytest

import braze as bz
from conftest import BF16, assert_matches

HALVES = [np.dtype(np.float16), BF16]


# --- statistics (Note [Statistics precision]) --------------------------------


@pytest.mark.parametrize("dtype", HALVES, ids=lambda d: d.name)
def test_half_mean_over_65536_elements_accumulates_in_float32(dtype):
    # The count 262144 is inf in float16, and a float16 sum of 65520 ones
    # is inf: mean gave 0.0 (NaN on the reference backend).
    a = np.ones((512, 512), np.float16).astype(dtype)
    got = bz.mean(bz.tensor(a))
    assert got.dtype == dtype
    assert got.numpy().astype(np.float64) == 1.0
    # As NumPy: float16 means accumulate in float32.
    b = ((np.arange(70000) % 7) - 2.5).astype(np.float16)
    assert_matches(bz.mean(bz.tensor(b)), np.mean(b), np.float16)
    assert_matches(bz.mean(bz.tensor(b.reshape(7, 10000)), axis=1), np.mean(b.reshape(7, 10000), axis=1), np.float16)


@pytest.mark.parametrize("dtype", HALVES, ids=lambda d: d.name)
def test_half_var_std_and_norms_over_65536_elements(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 70000)).astype(dtype)
    a64 = a.astype(np.float64)
    # NumPy's float16 var sums in float16 and overflows to inf: the truth is
    # the float64 value, rounded to the dtype.
    assert_matches(bz.var(bz.tensor(a), axis=1), a64.var(axis=1), dtype)
    assert_matches(bz.std(bz.tensor(a)), a64.std(), dtype)
    centered = a64 - a64.mean(axis=1, keepdims=True)
    want = centered / np.sqrt((centered**2).mean(axis=1, keepdims=True) + 1e-5)
    assert_matches(bz.layer_norm(bz.tensor(a)), want, dtype)
    want = a64 / np.sqrt((a64**2).mean(axis=1, keepdims=True) + 1e-6)
    assert_matches(bz.rms_norm(bz.tensor(a)), want, dtype)


def test_int64_statistics_do_not_overflow_float32():
    # Squares of values near 9e18 sum past float32's range (3.4e38): var was inf.
    a = np.array([[9 * 10**18, -9 * 10**18] * 4, [10**18, -10**18, 3, 7 * 10**18, 1, 2, 3, 4]], np.int64)
    a64 = a.astype(np.float64)
    assert_matches(bz.var(bz.tensor(a), axis=1), np.var(a, axis=1), np.float32)
    assert_matches(bz.std(bz.tensor(a), axis=1), np.std(a, axis=1), np.float32)
    assert_matches(bz.mean(bz.tensor(a), axis=1), np.mean(a, axis=1), np.float32)
    centered = a64 - a64.mean(axis=1, keepdims=True)
    assert_matches(bz.layer_norm(bz.tensor(a)), centered / np.sqrt((centered**2).mean(axis=1, keepdims=True) + 1e-5),
                   np.float32)
    assert_matches(bz.rms_norm(bz.tensor(a)), a64 / np.sqrt((a64**2).mean(axis=1, keepdims=True) + 1e-6), np.float32)


# --- slices ----------------------------------------------------------------


@pytest.mark.parametrize("step", [2**63 - 1, 2**63 - 2, -2**63 + 1, -2**63, 2**70, -2**70, 3, -3])
@pytest.mark.parametrize("start", [None, 0, 2, -1, 2**63 - 1, -2**63])
def test_slice_steps_near_int64_limits(step, start):
    a = np.arange(30, dtype=np.int32).reshape(5, 6)
    x = bz.tensor(a)
    assert_matches(x[start::step], a[start::step])
    assert_matches(x[:, start::step], a[:, start::step])
    assert_matches(x[1, start:-2**63:step], a[1, start:-2**63:step])
    assert_matches(bz.sum(x[start::step, ::step], axis=0), np.sum(a[start::step, ::step], axis=0))


# --- float64 -> float16 (Note [Rounding float64 to 16 bits]) -----------------


def test_float64_to_float16_rounds_once():
    # Just above a float16 tie: through float32 the tie is made and goes to even.
    ties = np.array([1 + 2**-11 + 2**-30, -(1 + 2**-11 + 2**-40), 2**-24 * 1.5 + 2**-60, 65519.99999,
                     3 * 2**-11 + 2**-35, 2**-25 + 2**-60, np.nan, np.inf, -0.0, 1e300, 6e-8], np.float64)
    rng = np.random.default_rng(1)
    x = np.concatenate([ties, rng.standard_normal(40000) * 10.0 ** rng.integers(-8, 5, 40000)])
    want = x.astype(np.float16)
    for got in (bz.tensor(x).astype(bz.float16), (bz.tensor(x) * 1.0).astype(bz.float16)):
        np.testing.assert_array_equal(got.numpy().view(np.uint16), want.view(np.uint16))


def test_float64_to_bfloat16_rounds_as_ml_dtypes():
    # ml_dtypes rounds float64 -> bfloat16 through float32: braze matches it.
    x = np.array([1 + 2**-8 + 2**-30, 1 + 2**-8, -3.3, 1e-40], np.float64)
    np.testing.assert_array_equal(bz.tensor(x).astype(bz.bfloat16).numpy().view(np.uint16),
                                  x.astype(ml_dtypes.bfloat16).view(np.uint16))


# --- creation ----------------------------------------------------------------


ARANGE_ARGS = [(-4.58, 5, 2), (-0.5, 3, 1), (0.5, 3, 1), (-4.58, 5, 0.5), (4.58, -5, -1.5), (0, 10, 3),
               (10, 0, -3), (-2**63, -2**63 + 5, 2), (2**63 - 5, 2**63 - 1, 2), (0.1, 30.0, 0.7)]


@pytest.mark.parametrize("args", ARANGE_ARGS, ids=str)
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "float16", "float32", "float64"])
def test_arange_matches_numpy(args, dtype):
    # Note [NumPy's arange]: the first two values convert to the dtype and
    # the rest step by their difference.
    if dtype == "float16" and max(map(abs, args)) > 65504:
        return  # an inf first value makes NumPy's step NaN, which NumPy stores only from the third element on
    try:
        want = np.arange(*args, dtype=dtype)
    except OverflowError:
        with pytest.raises(OverflowError, match=r"^arange: Python integer"):
            bz.arange(*args, dtype=dtype)
        return
    got = bz.arange(*args, dtype=dtype)
    if np.dtype(dtype).kind == "f":
        # NumPy adds in the dtype, braze in float64 or float32: the last bit may differ.
        assert_matches(got, want, rtol=np.finfo(dtype).eps, atol=np.finfo(dtype).eps)
    else:
        assert_matches(got, want)


def test_full_takes_python_ints_in_range_and_floats_as_numpy():
    assert_matches(bz.full((2,), 255, dtype=bz.uint8), np.full((2,), 255, np.uint8))
    assert_matches(bz.full((2,), -128, dtype=bz.int8), np.full((2,), -128, np.int8))
    assert_matches(bz.full((2,), 2**63 - 1, dtype=bz.int64), np.full((2,), 2**63 - 1, np.int64))
    assert_matches(bz.full((2,), 2**70, dtype=bz.float32), np.full((2,), 2**70, np.float32))
    with np.errstate(invalid="ignore"):
        assert_matches(bz.full((2,), 300.0, dtype=bz.uint8), np.full((2,), 300.0, np.uint8))


# --- Python ints out of range (Note [Python integers out of range]) ------------


@pytest.mark.parametrize("value", [300, -129, 2**63, 2**70, -2**70, 127, -128])
@pytest.mark.parametrize("op", ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal"])
def test_comparison_with_python_int_out_of_range(op, value):
    a = np.array([-128, -1, 0, 5, 127], np.int8)
    f = getattr(np, op)
    assert_matches(getattr(bz, op)(bz.tensor(a), value), f(a, value))
    assert_matches(getattr(bz, op)(value, bz.tensor(a)), f(value, a))


def test_python_int_beyond_int64_with_floats_is_a_float():
    a = np.array([1.5, -2.0], np.float32)
    assert_matches(bz.tensor(a) + 2**70, a + 2**70)
    assert_matches(bz.tensor(a) < 2**64, a < 2**64)
    assert_matches(bz.maximum(bz.tensor(a.astype(np.float16)), -2**80), np.maximum(a.astype(np.float16), -2**80))


# --- zero-size reductions (found by test_api_fuzz.py) --------------------------


@pytest.mark.parametrize("shape", [(2, 0, 3), (3, 0), (3, 0, 0, 0)], ids=str)
@pytest.mark.parametrize("fn", ["sum", "prod", "mean"])
def test_reductions_of_zero_size_over_all_axes(fn, shape):
    # A sum over all axes of [2, 0, 3] corrupted the heap (the CPU row plan
    # wrote past its output); the kernel gives the identity (Note
    # [Reductions over nothing], jit_cpu/row_plan.cpp).
    a = np.zeros(shape, np.float32)
    for _ in range(20):  # glibc sees the overrun at some later free: give it many
        bz.clear_programs()
        with np.errstate(invalid="ignore"):
            assert_matches(getattr(bz, fn)(bz.tensor(a)), getattr(np, fn)(a), np.float32)
            assert_matches(getattr(bz, fn)(bz.tensor(a), axis=0, keepdims=True),
                           getattr(np, fn)(a, axis=0, keepdims=True), np.float32)
            assert_matches(getattr(bz, fn)(bz.tensor(a) * 2, axis=1), getattr(np, fn)(a * 2, axis=1), np.float32)
        assert_matches(bz.sum(bz.tensor(a.astype(np.int8))), np.sum(a.astype(np.int8)), np.int64)


def test_python_ints_out_of_range_in_divide_and_logical_ops_follow_numpy():
    # Found by test_api_fuzz.py: divide computes in float, so a Python int
    # an int8 cannot hold is a float there; a logical op reads it as a truth value.
    a = np.array([-3, 0, 100], np.int8)
    assert_matches(bz.tensor(a) / 2**70, (a / 2**70).astype(np.float32), np.float32)
    assert_matches(bz.logical_and(bz.tensor(a), 255), np.logical_and(a, 255))
    with pytest.raises(OverflowError, match=r"^equal: Python integer"):
        bz.tensor(a.astype(bool)) == -2**70  # noqa: B015  NumPy raises too
    with pytest.raises(OverflowError, match=r"^logical_or: Python integer"):
        bz.logical_or(bz.tensor(a.astype(bool)), 2**70)


def test_where_condition_scalar_and_int64_mse_found_by_the_fuzz():
    x = np.array([2.5, -1.0], np.float16)
    # A Python float condition is a truth value: 1e-300 was a float32 0.
    assert_matches(bz.where(1e-300, -129, bz.tensor(x)), np.where(1e-300, -129, x).astype(np.float16))
    # int64 differences squared overflowed float32: mse_loss computes in float64.
    a, b = np.array([9 * 10**18, -9 * 10**18], np.int64), np.array([-9 * 10**18, 9 * 10**18], np.int64)
    assert_matches(bz.mse_loss(bz.tensor(a), bz.tensor(b)), np.mean((a.astype(float) - b) ** 2), np.float32)
    assert_matches(bz.arange(-771.5, -771.5, dtype=bz.uint8), np.arange(-771.5, -771.5, dtype=np.uint8))


@pytest.mark.parametrize("fn", ["max", "min", "argmax", "argmin"])
def test_reductions_of_nothing_without_identity_are_errors(fn):
    # As NumPy: no identity, no answer; over a kept zero-size axis the
    # result is empty.
    a = np.zeros((2, 0, 3), np.float32)
    with pytest.raises(ValueError, match=rf"^{fn}: "):
        getattr(bz, fn)(bz.tensor(a), axis=1)
    if fn in ("max", "min"):
        assert_matches(getattr(bz, fn)(bz.tensor(a), axis=0), getattr(np, fn)(a, axis=0), np.float32)
