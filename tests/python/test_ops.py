"""Every element-wise op of the op table x every dtype x every layout,
against NumPy. The op list, arity, dtype rule and NumPy name come from
bz.ops() (graph/ops.def); a new row is tested without touching this file,
unless it has no NumPy name, when it needs an entry in EXTRA_REFERENCES."""

import io
import math
import os
import re

import numpy as np
import pytest

import braze as bz
from conftest import (BF16, BOOL, DTYPE_IDS, DTYPES, F32, FLOATS, I64, INTS, LAYOUTS, assert_matches, compute_dtype,
                      is_float, kind, logical_values, make_layout, promote, result_dtype, values,
                      weak_scalar_dtype)

OPS = bz.ops()
REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
ELEMENTWISE = [o for o in OPS if o["kind"] == "elementwise" and o["auto"]]
BY_ARITY = {n: [o for o in ELEMENTWISE if o["arity"] == n] for n in (1, 2, 3)}

_erf = np.vectorize(math.erf, otypes=[np.float64])

# References for rows with no NumPy function (the row's numpy column is "").
EXTRA_REFERENCES = {
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "relu": lambda x: np.where(x < 0, np.zeros_like(x), x),  # NaN stays NaN
    "erf": _erf,
    "stop_gradient": lambda x: x,  # the value unchanged (its gradient is tests/python/test_autodiff.py's)
    "depend": lambda a, b: np.broadcast_arrays(a, b)[0].copy(),  # a's value; b is only waited for
}


def _ieee_power(a, b):
    # IEEE 754 and C99: pow(-inf, y) is +inf for y > 0 not an odd integer
    # (Python's math.pow agrees); NumPy's float64 power returns NaN there.
    out = np.power(a, b)
    if out.dtype.kind == "f":
        odd = np.mod(b, 2) == 1
        out = np.where((a == -np.inf) & (b > 0) & ~odd, np.inf, out)
    return out


def reference(op):
    if op["api"] == "power":
        return _ieee_power
    if op["numpy"]:
        return getattr(np, op["numpy"])
    return EXTRA_REFERENCES[op["api"]]


def expected(op, args, out_dtype):
    """NumPy's result on the same values, computed in float64 (or int64 for
    integer and bool inputs) and rounded once to braze's result dtype."""
    if op["api"] == "where":
        cond, a, b = args
        ct = compute_dtype(a.dtype, b.dtype)
        want = np.where(cond.astype(bool), a.astype(ct), b.astype(ct))
    elif op["rule"] in ("Bitwise", "Shift"):
        # In the result's own dtype, as NumPy: invert of a bool is its
        # logical not, not ~1 = -2 (true); a shift's width is the dtype's.
        with np.errstate(all="ignore"):
            want = reference(op)(*[a.astype(out_dtype) for a in args])
    else:
        ct = np.dtype(np.float64) if is_float(out_dtype) else compute_dtype(*[a.dtype for a in args])
        with np.errstate(all="ignore"):
            want = reference(op)(*[a.astype(ct) for a in args])
    with np.errstate(all="ignore"):
        return np.asarray(want).astype(out_dtype)


def test_op_table_is_complete():
    apis = {o["api"] for o in OPS}
    assert {"add", "exp", "where", "sum", "matmul", "astype"} <= apis
    for o in ELEMENTWISE:
        assert callable(getattr(bz, o["api"])), o["api"]
        assert o["numpy"] or o["api"] in EXTRA_REFERENCES, f"{o['api']}: no NumPy name and no reference here"
        if o["numpy"]:
            assert callable(getattr(np, o["numpy"])), o["numpy"]


# --- input domains ----------------------------------------------------------


def operand_values(op, i, dtype, layout, seed):
    """The i-th operand's logical values, in a domain where the op is
    interesting (power's exponent small, and >= 0 for integers)."""
    if op["api"] == "power" and i == 1:
        if kind(dtype) == 1:
            return logical_values(dtype, layout, seed=seed, lo=0, hi=3)
        if is_float(dtype):
            v = logical_values(np.float64, layout, seed=seed, specials=False, lo=-3, hi=3)
            return (np.round(v * 2) / 2).astype(dtype)
    if op["api"] == "where" and i == 0:
        return logical_values(BOOL, layout, seed=seed)
    return logical_values(dtype, layout, seed=seed)


def check_rejected(op, dtypes, call):
    rule_out = result_dtype(op["rule"], *dtypes)
    if rule_out is None:
        with pytest.raises(ValueError, match=op["api"]):
            call()
        return True
    return False


# --- the matrix ---------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", BY_ARITY[1], ids=lambda o: o["api"])
def test_unary(op, dtype, layout):
    x = operand_values(op, 0, dtype, layout, seed=1)
    fn = getattr(bz, op["api"])
    t = make_layout(layout, x)
    if check_rejected(op, [dtype], lambda: fn(t)):
        return
    out = result_dtype(op["rule"], dtype)
    got = fn(t)
    assert not got.is_realized
    assert_matches(got, expected(op, [x], out), out)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", BY_ARITY[2], ids=lambda o: o["api"])
def test_binary(op, dtype, layout):
    a = operand_values(op, 0, dtype, layout, seed=1)
    b = operand_values(op, 1, dtype, layout, seed=2)
    fn = getattr(bz, op["api"])
    ta, tb = make_layout(layout, a), make_layout(layout, b)
    if check_rejected(op, [dtype, dtype], lambda: fn(ta, tb)):
        return
    out = result_dtype(op["rule"], dtype, dtype)
    assert_matches(fn(ta, tb), expected(op, [a, b], out), out)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", BY_ARITY[3], ids=lambda o: o["api"])
def test_ternary(op, dtype, layout):
    args = [operand_values(op, i, dtype, layout, seed=i + 1) for i in range(3)]
    fn = getattr(bz, op["api"])
    ts = [make_layout(layout, a) for a in args]
    dts = [a.dtype for a in args]
    if check_rejected(op, dts, lambda: fn(*ts)):
        return
    out = result_dtype(op["rule"], *dts)
    assert_matches(fn(*ts), expected(op, args, out), out)


@pytest.mark.parametrize("op", BY_ARITY[2], ids=lambda o: o["api"])
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int32)], ids=str)
def test_binary_broadcasting_shapes(op, dtype):
    # (3, 1) with (5,) -> (3, 5); (4, 1, 5) with (3, 1) -> (4, 3, 5); a 0-d operand.
    for sa, sb in [((3, 1), (5,)), ((4, 1, 5), (3, 1)), ((), (2, 3)), ((2, 0), (1,))]:
        a = values(dtype, sa, seed=3)
        b = values(dtype, sb, seed=4, lo=0 if op["api"] == "power" else None, hi=3 if op["api"] == "power" else None)
        if op["api"] == "power" and is_float(dtype):
            b = np.round(b)
        out = result_dtype(op["rule"], dtype, dtype)
        if check_rejected(op, [dtype, dtype], lambda: getattr(bz, op["api"])(bz.tensor(a), bz.tensor(b))):
            continue
        got = getattr(bz, op["api"])(bz.tensor(a), bz.tensor(b))
        assert got.shape == np.broadcast_shapes(sa, sb)
        assert_matches(got, expected(op, [a, b], out), out)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_where_with_non_bool_condition(dtype):
    # A non-bool condition is read as a truth value (NaN is true), as in NumPy.
    c = values(dtype, (3, 5), seed=5)
    a, b = values(np.float32, (3, 5), seed=6), values(np.float32, (3, 5), seed=7)
    assert_matches(bz.where(bz.tensor(c), bz.tensor(a), bz.tensor(b)), np.where(c.astype(bool), a, b))


# --- operators ----------------------------------------------------------------

OPERATORS = {
    "add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b, "power": lambda a, b: a ** b, "remainder": lambda a, b: a % b,
    "less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b, "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b, "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b,
    "bitwise_and": lambda a, b: a & b, "bitwise_or": lambda a, b: a | b, "bitwise_xor": lambda a, b: a ^ b,
    "bitwise_left_shift": lambda a, b: a << b, "bitwise_right_shift": lambda a, b: a >> b,
}
SYMBOLS = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "bitwise_left_shift": "<<",
           "bitwise_right_shift": ">>"}


@pytest.mark.parametrize("api", sorted(OPERATORS))
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.float16), BOOL], ids=str)
def test_operator_is_the_function(api, dtype):
    op = next(o for o in ELEMENTWISE if o["api"] == api)
    a = operand_values(op, 0, dtype, "contiguous", seed=1)
    b = operand_values(op, 1, dtype, "contiguous", seed=2)
    out = result_dtype(op["rule"], dtype, dtype)
    ta, tb = bz.tensor(a), bz.tensor(b)
    if out is None:
        if api in SYMBOLS:  # & | ^ << >> of floats: a TypeError naming the operator and dtype, as NumPy's
            for x, y in ((ta, tb), (ta, b), (ta, 1), (1, ta)):
                with pytest.raises(TypeError, match=rf"^{re.escape(SYMBOLS[api])}: {api} takes integers and bools, "
                                                    rf"not {dtype.name}"):
                    OPERATORS[api](x, y)
            # An ndarray on the left is NumPy's ufunc, which Tensor.__array_ufunc__
            # gives to bz.{api}: the function's error, naming it.
            with pytest.raises(ValueError, match=rf"^{api}: not supported for float inputs"):
                OPERATORS[api](a, tb)
        else:
            with pytest.raises(ValueError, match=api):
                OPERATORS[api](ta, tb)
        return
    want = expected(op, [a, b], out)
    assert_matches(OPERATORS[api](ta, tb), want, out)
    # An ndarray on either side stays lazy braze (Tensor.__array_ufunc__).
    assert_matches(OPERATORS[api](ta, b), want, out)
    assert_matches(OPERATORS[api](a, tb), want, out)


def test_unary_operators():
    a = values(np.float32, (3, 5), seed=1)
    t = bz.tensor(a)
    assert_matches(-t, -a)
    assert_matches(abs(t), np.abs(a))
    m = values(BOOL, (3, 5), seed=2)
    assert_matches(~bz.tensor(m), ~m)  # bitwise_invert of a bool is logical not, as NumPy's
    for dtype in INTS:
        i = values(dtype, (3, 5), seed=3)
        assert_matches(~bz.tensor(i), ~i, dtype)
    with pytest.raises(TypeError, match=r"^~: bitwise_invert takes integers and bools, not float32"):
        ~t


def test_matmul_operator():
    a, b = values(np.float32, (3, 4), seed=1, specials=False), values(np.float32, (4, 5), seed=2, specials=False)
    assert_matches(bz.tensor(a) @ bz.tensor(b), a.astype(np.float64) @ b, np.float32, rtol=1e-5, atol=1e-5)
    assert_matches(bz.tensor(a) @ b, a.astype(np.float64) @ b, np.float32, rtol=1e-5, atol=1e-5)


# --- methods ------------------------------------------------------------------


@pytest.mark.parametrize("op", BY_ARITY[1], ids=lambda o: o["api"])
def test_unary_method(op):
    dtype = np.float32 if result_dtype(op["rule"], np.float32) is not None else np.int32  # bitwise_invert
    x = values(dtype, (3, 5), seed=1)
    want = expected(op, [x], result_dtype(op["rule"], dtype))
    assert_matches(getattr(bz.tensor(x), op["api"])(), want)


# --- Python scalars are weak ---------------------------------------------------

SCALARS = [2, 0.5, True]


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", BY_ARITY[2], ids=lambda o: o["api"])
def test_binary_with_python_scalar(op, dtype, scalar):
    a = values(dtype, (3, 5), seed=1)
    sd = weak_scalar_dtype(dtype, scalar)
    s = np.asarray(scalar).astype(sd)  # the scalar as braze records it: a constant of its weak dtype
    fn = getattr(bz, op["api"])
    t = bz.tensor(a)
    for args, np_args in [((t, scalar), [a, s]), ((scalar, t), [s, a])]:
        if check_rejected(op, [np_args[0].dtype, np_args[1].dtype], lambda: fn(*args)):
            continue
        if op["api"] == "power" and kind(dtype) == 1 and args[0] is not t:
            continue  # 2 ** int tensor with negative exponents: see test_integer_power_negative_exponent
        out = result_dtype(op["rule"], np_args[0].dtype, np_args[1].dtype)
        if op["api"] == "power" and args[0] is t and scalar == 0.5 and is_float(dtype):
            # Note [Integer powers]: NumPy's x ** 0.5 is sqrt(x) (-0 stays -0, -inf gives NaN)
            assert_matches(fn(*args), np.sqrt(a.astype(np.float64)).astype(out), out)
            continue
        assert_matches(fn(*args), expected(op, np_args, out), out)


@pytest.mark.parametrize("dtype,scalar,want", [
    (np.float16, 2.0, np.float16), (np.dtype("bfloat16"), 2.0, np.dtype("bfloat16")), (np.int8, 1, np.int8), (np.int32, 0.5, np.float32), (np.bool_, 1, np.int64), (np.bool_, 1.5, np.float32),
    (np.uint8, True, np.uint8), (np.float64, 1, np.float64), (np.int64, 2.5, np.float32),
])
def test_weak_scalar_dtypes_documented(dtype, scalar, want):
    # The examples of docs/semantics.md, literally.
    t = bz.tensor(np.ones(3, dtype=dtype))
    assert (t + scalar).dtype == want
    assert (scalar + t).dtype == want
    assert (t * scalar).dtype == want


def test_float16_times_python_float_stays_float16():
    x = values(np.float16, (3, 5), seed=1)
    y = bz.tensor(x) * 2.0 + 1.0
    assert y.dtype == np.float16
    assert_matches(y, (x.astype(np.float64) * 2.0 + 1.0).astype(np.float16))


def test_numpy_scalars_are_strong():
    t = bz.tensor(np.ones(3, dtype=np.float16))
    assert (t * np.float32(2)).dtype == np.float32
    assert (t * np.float64(2)).dtype == np.float64
    i = bz.tensor(np.ones(3, dtype=np.int8))
    assert (i + np.int32(1)).dtype == np.int32


# --- promotion table ------------------------------------------------------------

DOCUMENTED_DEVIATIONS = {
    # docs/semantics.md: where braze deliberately differs from NumPy.
    frozenset(["float16", "bfloat16"]): "float32",
}


def numpy_or_documented(a, b):
    a, b = np.dtype(a), np.dtype(b)
    key = frozenset([a.name, b.name])
    if key in DOCUMENTED_DEVIATIONS:
        return np.dtype(DOCUMENTED_DEVIATIONS[key])
    if kind(a) != kind(b) and 2 in (kind(a), kind(b)):
        return a if is_float(a) else b  # "bool or integer with float: the float type"
    return np.promote_types(a, b)


@pytest.mark.parametrize("b", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("a", DTYPES, ids=DTYPE_IDS)
def test_promotion_table(a, b):
    want = numpy_or_documented(a, b)
    assert promote(a, b) == want  # the suite's model agrees with the docs
    x, y = values(a, (2, 3), seed=1), values(b, (2, 3), seed=2)
    got = bz.add(bz.tensor(x), bz.tensor(y))
    assert got.dtype == want
    ct = compute_dtype(a, b)
    assert_matches(got, (x.astype(ct) + y.astype(ct)), want)
    assert bz.add(bz.tensor(y), bz.tensor(x)).dtype == want  # symmetric


@pytest.mark.parametrize("b", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("a", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", [o for o in BY_ARITY[2] if o["api"] in ("subtract", "divide", "less", "maximum",
                                                                       "logical_or", "bitwise_xor",
                                                                       "bitwise_right_shift")], ids=lambda o: o["api"])
def test_mixed_dtype_binary(op, a, b):
    x, y = operand_values(op, 0, a, "contiguous", 1), operand_values(op, 1, b, "contiguous", 2)
    fn = getattr(bz, op["api"])
    if check_rejected(op, [a, b], lambda: fn(bz.tensor(x), bz.tensor(y))):
        return
    out = result_dtype(op["rule"], a, b)
    assert_matches(fn(bz.tensor(x), bz.tensor(y)), expected(op, [x, y], out), out)


# --- documented special cases ---------------------------------------------------


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_remainder_by_zero_is_zero(dtype):
    a = values(dtype, (3, 5), seed=1)
    assert_matches(bz.remainder(bz.tensor(a), bz.zeros((3, 5), dtype)), np.zeros((3, 5), dtype))


@pytest.mark.parametrize("dtype", [np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64)], ids=str)
def test_integer_power_negative_exponent(dtype):
    # NumPy raises; braze truncates toward zero: only 1 and -1 survive.
    base = np.array([-2, -1, 0, 1, 2, 3, -1], dtype=dtype)
    exp = np.array([-1, -3, -2, -5, -2, -1, -2], dtype=dtype)
    want = np.array([0, -1, 0, 1, 0, 0, 1], dtype=dtype)
    assert_matches(bz.power(bz.tensor(base), bz.tensor(exp)), want)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64)], ids=str)
@pytest.mark.parametrize("n", [2, 3, 4, 2.0, 3.0, 4.0])
def test_small_integer_powers_are_multiplications(dtype, n):
    # Note [Integer powers] (runtime/tensor.cpp): x ** n for a Python int n
    # of 2 to 4, or a float of those values, records square and multiply, no
    # pow, within a few ulp of NumPy's pow, with the same zeros, infinities,
    # NaN and overflow.
    x = np.array([0.0, -0.0, 1.5, -1.5, 3.0e-15, -7.0, np.inf, -np.inf, np.nan, 1.0e13, -1.0e13, 2.0 ** -70],
                 dtype=dtype)

    def ops(t):
        return bz.explain(t, file=io.StringIO())

    y = bz.tensor(x) ** n
    assert "Pow" not in ops(y)
    got = y.numpy()
    with np.errstate(over="ignore"):
        want = x ** n
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0)
    for other in (bz.tensor(x) ** 5, bz.tensor(x) ** -2, bz.tensor(x) ** 3.5, bz.arange(5) ** 3):
        assert "Pow" in ops(other)


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)], ids=str)
def test_power_one_half_is_a_square_root_as_numpys(dtype):
    # Note [Integer powers]: x ** 0.5 and np.power(x, 0.5) are sqrt(x), bit
    # for bit NumPy's x ** 0.5 (a square root there too: -0 stays -0, -inf
    # gives NaN, where C's pow gives +0 and inf).
    x = np.array([0.0, -0.0, 2.0, 0.25, 1e-30, 3e38, -1.0, np.inf, -np.inf, np.nan, 7.0], dtype=dtype)
    x = np.concatenate([x, np.random.default_rng(4).uniform(0, 1000, 200).astype(dtype)])
    with np.errstate(invalid="ignore", over="ignore"):
        want = x ** 0.5
    for y in (bz.tensor(x) ** 0.5, np.power(bz.tensor(x), 0.5)):
        assert "Pow" not in bz.explain(y, file=io.StringIO())
        got = y.numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)], ids=str)
def test_float_remainder_is_numpys_bit_for_bit(dtype):
    # Note [Exact remainder] (jit_cpu/remainder_f64.h): the CPU kernel's %
    # is exact, so it equals NumPy's, signed zeros included, for quotients
    # up to the whole range of the dtype, and no kernel is interpreted.
    f = np.finfo(dtype)
    rng = np.random.default_rng(3)
    edges = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -7.0, f.max, -f.max, f.tiny, f.smallest_subnormal, np.inf, -np.inf,
                      np.nan], dtype=dtype)
    with np.errstate(all="ignore"):
        spread = (rng.uniform(-2, 2, 3000) * np.exp2(rng.integers(f.minexp - f.nmant, f.maxexp, 3000))).astype(dtype)
        a = np.concatenate([np.repeat(edges, edges.size), spread])
        b = np.concatenate([np.tile(edges, edges.size), spread[::-1]])
        want = np.remainder(a, b), np.remainder(b[::2], 3.0)
    before = bz.stats()["kernels_interpreted"]
    got = (bz.tensor(a) % bz.tensor(b)).numpy(), (bz.tensor(b)[::2] % 3.0).numpy()
    assert bz.stats()["kernels_interpreted"] == before
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
        numbers = ~np.isnan(w)
        np.testing.assert_array_equal(np.signbit(g[numbers]), np.signbit(w[numbers]))


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)], ids=str)
def test_signbit_reads_the_sign_bit_itself(dtype):
    # SignBit is an op row: the bit, as NumPy's, so -0.0 and a NaN whose
    # sign bit is set are negative, in 32-bit lanes and beside an int64
    # (a wide kernel), contiguous, transposed and every other element;
    # copysign and arctan2 read it without a division.
    bits = np.array([0x7FC00000, 0xFFC00000, 0x80000000, 0, 0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000],
                    dtype=np.uint32)
    x = np.tile(bits.view(np.float32), 9)[:70].reshape(7, 10).astype(dtype)  # a NaN's sign survives the cast
    want = np.signbit(x.astype(np.float32))
    t = bz.tensor(x)
    ints = bz.tensor(np.arange(70).reshape(7, 10))
    before = bz.stats()["kernels_interpreted"]
    np.testing.assert_array_equal(bz.signbit(t).numpy(), want)
    np.testing.assert_array_equal(bz.signbit(t.T).numpy(), want.T)
    np.testing.assert_array_equal(bz.signbit(t[:, ::2]).numpy(), want[:, ::2])
    np.testing.assert_array_equal(bz.logical_and(bz.signbit(t), ints >= 0).numpy(), want)
    if not REFERENCE:
        assert bz.stats()["kernels_interpreted"] == before
    y = bz.copysign(bz.tensor(np.full((7, 10), 2.0, dtype)), t)
    np.testing.assert_array_equal(np.signbit(y.numpy().astype(np.float32)), want)
    assert "Div" not in bz.explain(y, file=io.StringIO()) and "Reciprocal" not in bz.explain(y, file=io.StringIO())


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "uint32", "bool"])
def test_signbit_of_integers_is_negative(dtype):
    x = np.array([-3, 0, 5, 127, -128, 1], np.int64).astype(dtype)
    np.testing.assert_array_equal(bz.signbit(bz.tensor(x)).numpy(), np.signbit(x))


def test_bfloat16_nan_keeps_its_sign_and_payload():
    # A float32 NaN rounded to bfloat16 is made quiet and truncated
    # (graph/half.h), in a kernel's vector and scalar stores alike.
    bits = np.array([0x7FFFFFFF, 0xFFC00000, 0x7F800001, 0xFF812345, 0x3F800000] * 7, dtype=np.uint32)
    x = bits.view(np.float32)
    want = np.where(np.isnan(x), (bits >> 16) | 0x40, bits >> 16).astype(np.uint32) << 16
    vector = bz.tensor(x).astype(bz.bfloat16).astype(bz.float32).numpy().view(np.uint32)
    np.testing.assert_array_equal(vector, want)
    scalar = bz.max(bz.tensor(x[:1]).astype(bz.bfloat16)).astype(bz.float32).numpy().view(np.uint32)
    assert scalar == want[0]


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_half_floats_beside_float64_are_generated(half):
    # float16 and bfloat16 beside float64 run in a wide kernel (Note [Wide
    # kernels] in jit_cpu/lanes.h): widened exactly, rounded once on a cast.
    rng = np.random.default_rng(4)
    d = rng.standard_normal((5, 37)) * 100
    h = bz.tensor(d).astype(getattr(bz, half))
    bz.realize(h)  # an input of the kernels below, not a cast in them
    before = bz.stats()["kernels_interpreted"]
    exact = h.astype(bz.float64).numpy()
    got = (h + bz.tensor(d)).numpy(), (bz.tensor(d) * 3).astype(getattr(bz, half)).astype(bz.float64).numpy()
    assert bz.stats()["kernels_interpreted"] == before
    np.testing.assert_array_equal(got[0], exact + d)
    np.testing.assert_array_equal(got[1], (bz.tensor(d * 3).astype(getattr(bz, half))).astype(bz.float64).numpy())
    if half == "float16":
        np.testing.assert_array_equal(exact, d.astype(np.float16).astype(np.float64))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_arithmetic_wraps(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max], dtype=dtype)
    b = np.array([1, -1 if info.min < 0 else 1, 2], dtype=dtype)
    with np.errstate(all="ignore"):
        assert_matches(bz.tensor(a) + bz.tensor(b), a + b)
        assert_matches(bz.tensor(a) * bz.tensor(b), a * b)
        assert_matches(bz.tensor(a) - bz.tensor(b), a - b)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_remainder_takes_the_divisors_sign(dtype):
    # Python's % and np.remainder: the result, zero included, has the divisor's sign.
    a = np.array([-4.0, 4.0, -3.0, 0.0, -0.0, 5.5, -5.5, 1.0, -1.0], dtype=dtype)
    b = np.array([2.0, -2.0, 3.0, -1.0, 1.0, -2.0, 2.0, np.inf, np.inf], dtype=dtype)
    want = np.remainder(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
    got = bz.remainder(bz.tensor(a), bz.tensor(b))
    assert_matches(got, want)
    np.testing.assert_array_equal(np.signbit(got.numpy().astype(np.float64)), np.signbit(want.astype(np.float64)))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_round_half_to_even(dtype):
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49], dtype=dtype)
    assert_matches(bz.round(bz.tensor(a)), np.round(a.astype(np.float64)).astype(dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_maximum_minimum_propagate_nan(dtype):
    a = np.array([np.nan, 1.0, np.nan, -np.inf], dtype=dtype)
    b = np.array([1.0, np.nan, np.nan, np.nan], dtype=dtype)
    assert np.isnan(bz.maximum(bz.tensor(a), bz.tensor(b)).numpy().astype(np.float64)).all()
    assert np.isnan(bz.minimum(bz.tensor(a), bz.tensor(b)).numpy().astype(np.float64)).all()


def test_integer_divide_gives_float32():
    a, b = np.array([1, 7, -7, 0], dtype=np.int32), np.array([2, 2, 2, 0], dtype=np.int32)
    got = bz.tensor(a) / bz.tensor(b)
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        assert_matches(got, (a / b).astype(np.float32))


@pytest.mark.parametrize("op", [o for o in ELEMENTWISE if o["rule"] in ("SameNumeric", "PromoteNumeric")],
                         ids=lambda o: o["api"])
def test_bool_rejection_names_op_and_dtype(op):
    args = [bz.tensor(np.array([True, False]))] * op["arity"]
    with pytest.raises(ValueError, match=rf"^{op['api']}: .*bool"):
        getattr(bz, op["api"])(*args)
    # braze keeps working after the error
    assert_matches(bz.tensor(np.array([1, 2], np.int32)) + 1, np.array([2, 3], np.int32))


def test_rule_model_covers_every_elementwise_rule():
    for o in ELEMENTWISE:
        # Every rule takes int32 (the bitwise ops take no floats).
        dts = [np.dtype(np.int32)] * o["arity"]
        if o["rule"] == "Select":
            dts[0] = BOOL
        assert result_dtype(o["rule"], *dts) is not None, o


# --- library ops: matmul, conv2d ----------------------------------------------------

MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
                 ((2, 1, 3, 4), (3, 4, 2)), ((3, 0), (0, 2)), ((0, 4), (4, 2))]


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != BOOL], ids=str)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul(sa, sb, dtype):
    a = values(dtype, sa, seed=1, specials=False, **({"lo": -3, "hi": 3} if kind(dtype) == 1 else {}))
    b = values(dtype, sb, seed=2, specials=False, **({"lo": 0, "hi": 3} if kind(dtype) == 1 else {}))
    ct = compute_dtype(dtype)
    want = np.matmul(a.astype(ct), b.astype(ct))
    r = {"float16": 4e-3, "bfloat16": 3e-2}.get(np.dtype(dtype).name, 1e-5)
    got = bz.matmul(bz.tensor(a), bz.tensor(b))
    assert_matches(got, want, dtype, rtol=r if is_float(dtype) else None, atol=r * 10 if is_float(dtype) else None)


def test_matmul_of_views_and_mixed_dtypes():
    a = values(np.float32, (4, 3), seed=1, specials=False)
    b = values(np.float32, (5, 4), seed=2, specials=False)
    got = bz.matmul(bz.tensor(a).T, bz.tensor(b).T[::-1])  # (3, 4) @ (4, 5) read through strides
    assert_matches(got, a.T.astype(np.float64) @ b.T[::-1], np.float32, rtol=1e-5, atol=1e-5)
    i = values(np.int32, (4, 2), seed=3)
    got = bz.matmul(bz.tensor(b), bz.tensor(i))  # float32 with int32 -> float32
    assert_matches(got, b.astype(np.float64) @ i, np.float32, rtol=1e-5, atol=1e-4)
    row = bz.broadcast_to(bz.tensor(a[0]), (5, 3))  # stride-0 operand
    assert_matches(bz.matmul(row, bz.tensor(a).T), np.broadcast_to(a[0], (5, 3)).astype(np.float64) @ a.T,
                   np.float32, rtol=1e-5, atol=1e-5)


def np_conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (h + 2 * padding - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * padding - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + dilation * (kh - 1) + 1:dilation,
                           j * stride:j * stride + dilation * (kw - 1) + 1:dilation]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return out


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("cfg", [dict(), dict(stride=2), dict(padding=1), dict(dilation=2), dict(groups=2),
                                 dict(stride=2, padding=2, dilation=2, groups=2, bias=True)], ids=repr)
def test_conv2d(cfg, dtype):
    cfg = dict(cfg)
    groups = cfg.get("groups", 1)
    x = values(dtype, (2, 4, 7, 6), seed=1, specials=False)
    w = values(dtype, (6, 4 // groups, 3, 3), seed=2, specials=False)
    bias = values(dtype, (6,), seed=3, specials=False) if cfg.pop("bias", False) else None
    got = bz.conv2d(bz.tensor(x), bz.tensor(w), bias=None if bias is None else bz.tensor(bias), **cfg)
    want = np_conv2d(x, w, bias, **cfg)
    r = {"float16": 4e-3, "bfloat16": 3e-2}.get(np.dtype(dtype).name, 1e-5)
    assert_matches(got, want, dtype, rtol=r, atol=r * 10)


def test_conv2d_of_transposed_input():
    x = values(np.float32, (1, 2, 5, 6), seed=1, specials=False)
    w = values(np.float32, (3, 2, 2, 2), seed=2, specials=False)
    xt = bz.permute_dims(bz.tensor(np.ascontiguousarray(x.transpose(0, 1, 3, 2))), [0, 1, 3, 2])
    assert_matches(bz.conv2d(xt, bz.tensor(w), padding=(1, 0), stride=(1, 2)),
                   np_conv2d_hw(x, w), np.float32, rtol=1e-5, atol=1e-5)


def np_conv2d_hw(x, w):
    # padding (1, 0), stride (1, 2): pad rows only, then stride along columns.
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (0, 0)))
    full = np_conv2d(xp, w)
    return full[..., ::2]
