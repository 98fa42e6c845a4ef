"""NumPy's bitwise family (issue 22): & | ^ ~ << >> and their functions, on
integers and bools, against NumPy exactly (values and dtypes), including
the shifts C leaves undefined; floats are a TypeError naming the operator.
test_ops.py covers every row x dtype x layout from the op table; these are
the cases worth naming."""

import operator
import os
import re

import numpy as np
import pytest

import braze as bz
from conftest import BOOL, INTS

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs, no kernels to count
SHIFT_DTYPES = [np.dtype(d) for d in (np.int8, np.uint8, np.int32, np.int64)]


def exact(got, want):
    """Same dtype, same values."""
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def test_and_of_integers_is_bitwise_not_logical():
    for dtype in INTS:
        a, b = np.array([1, 2, 12], dtype), np.array([3, 1, 10], dtype)
        exact(bz.tensor(a) & bz.tensor(b), np.array([1, 0, 8], dtype))
        exact(bz.bitwise_and(a, b), a & b)
        exact(bz.tensor(a) | b, a | b)
        exact(a ^ bz.tensor(b), a ^ b)


def test_bools_stay_bool():
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    ta, tb = bz.tensor(a), bz.tensor(b)
    exact(ta & tb, a & b)
    exact(ta | tb, a | b)
    exact(ta ^ tb, a ^ b)
    exact(~ta, ~a)
    exact(ta & True, a & True)
    exact(False | ta, False | a)
    # NumPy shifts bools as int8: True << True is 2.
    exact(ta << tb, a << b)
    exact(ta >> tb, a >> b)


@pytest.mark.parametrize("dtype", INTS + [BOOL], ids=str)
def test_invert(dtype):
    info = np.iinfo(dtype) if dtype != BOOL else None
    x = np.array([0, 1, 5, info.min, info.max, info.max // 3] if info else [True, False], dtype)
    exact(~bz.tensor(x), ~x)
    exact(bz.bitwise_invert(x), np.invert(x))
    exact(bz.invert(x), np.invert(x))  # NumPy's names for it
    exact(bz.bitwise_not(x), np.bitwise_not(x))
    exact(bz.tensor(x).bitwise_invert(), np.invert(x))


@pytest.mark.parametrize("dtype", SHIFT_DTYPES, ids=str)
def test_shifts_at_and_beyond_the_width(dtype):
    info = np.iinfo(dtype)
    bits = 8 * dtype.itemsize
    x = np.array([1, 3, 5, info.max, info.min, info.min + 1, 0] + ([-1, -5, -7] if info.min else [200 % (info.max + 1)]),
                 dtype)
    counts = [0, 1, bits - 2, bits - 1, bits, bits + 1, 2 * bits, min(100, info.max)] + \
             ([-1, -bits, info.min] if info.min else [info.max])
    xs, ns = np.meshgrid(x, np.array(counts, dtype), indexing="ij")
    xs, ns = xs.ravel(), ns.ravel()
    tx, tn = bz.tensor(xs), bz.tensor(ns)
    exact(tx << tn, np.left_shift(xs, ns))
    exact(tx >> tn, np.right_shift(xs, ns))
    exact(bz.left_shift(xs, ns), xs << ns)
    exact(bz.bitwise_right_shift(xs, ns), xs >> ns)
    # Negative values shift arithmetically; past the width they are their sign.
    if info.min:
        exact(bz.tensor(np.array([-8, -1, -7], dtype)) >> 1, np.array([-4, -1, -4], dtype))
        exact(bz.tensor(np.array([-8, -1], dtype)) >> bits, np.array([-1, -1], dtype))


def test_shifts_with_python_ints_are_weak():
    for dtype in SHIFT_DTYPES:
        x = np.array([1, 2, 7, 100], dtype)
        t = bz.tensor(x)
        exact(t << 3, x << 3)
        exact(t >> 1, x >> 1)
        exact(1 << t % 8, 1 << (x % 8))  # NumPy 2: the Python int takes the tensor's dtype
        exact(100 >> t, 100 >> x)
        exact(t & 3, x & 3)
        k = 0x70 if dtype == np.int8 else 0xF0  # it must fit the dtype
        exact(k ^ t, k ^ x)
    b = np.array([True, False])
    exact(bz.tensor(b) << 2, b << 2)  # a bool beside a Python int: int64, as NumPy
    exact(bz.tensor(b) & 3, b & 3)
    with pytest.raises(OverflowError):  # as NumPy 2: 300 does not fit int8
        bz.tensor(np.array([1], np.int8)) & 300


def test_mixed_dtypes():
    a = np.array([-3, 5, 100, -128], np.int8)
    for other in (np.int32, np.int64, np.uint8, np.int16, np.uint16, np.uint32, np.bool_):
        b = np.array([1, 3, 7, 2], other)
        for fn in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
            exact(fn(bz.tensor(a), bz.tensor(b)), fn(a, b))  # NumPy's types: uint8 with int8 is int16


@pytest.mark.parametrize("symbol,fn", [("&", operator.and_), ("|", operator.or_), ("^", operator.xor),
                                       ("<<", operator.lshift), (">>", operator.rshift)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
def test_float_operands_are_a_type_error_naming_the_operator(symbol, fn, dtype):
    f = bz.tensor(np.ones(3, dtype))
    i = bz.tensor(np.ones(3, np.int32))
    name = np.dtype(dtype).name
    for x, y in ((f, i), (i, f), (f, 1), (1, f), (f, f)):
        with pytest.raises(TypeError, match=rf"^{re.escape(symbol)}: bitwise_\w+ takes integers and bools, not {name}"):
            fn(x, y)
    with pytest.raises(TypeError, match="not a Python float"):
        fn(i, 1.5)


def test_float_arguments_of_the_functions_are_an_error_naming_the_op():
    f = np.ones(3, np.float32)
    for api in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
        with pytest.raises(ValueError, match=rf"{api}: not supported for float inputs.*float32"):
            getattr(bz, api)(f, np.ones(3, np.int32))
    with pytest.raises(ValueError, match=r"bitwise_invert: not supported for float inputs.*bfloat16"):
        bz.bitwise_invert(bz.ones(3, bz.bfloat16))
    with pytest.raises(TypeError, match=r"^~: bitwise_invert takes integers and bools, not float64"):
        ~bz.tensor(np.ones(3))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_a_fused_chain_is_one_generated_kernel(dtype):
    x = np.arange(-60, 60, dtype=np.int64).astype(dtype).reshape(8, 15)
    t = bz.tensor(x)
    y = (t & 0xF) + (t >> 4) ^ (~t << 1) | (t >> 9)
    want = (x & 0xF) + (x >> 4) ^ (~x << 1) | (x >> 9)
    bz.reset_stats()
    exact(y, want)
    s = bz.stats()
    if not REFERENCE:
        assert s["kernels_launched"] == 1
        assert s["kernels_interpreted"] == 0
    # Transposed and broadcast operands in the same chain.
    u = (bz.tensor(np.ascontiguousarray(x.T)).T & bz.tensor(x[0])) << 2
    exact(u, (x & x[0]) << 2)


def test_bitwise_ops_on_emulated_cuda(monkeypatch):
    """Every bitwise op in every integer dtype and bool as CUDA kernels
    (host emulation: the same source NVRTC compiles), one program."""
    monkeypatch.setenv("BRAZE_CUDA", "emulate")
    rng = np.random.default_rng(5)
    cases = []
    with bz.device("cuda"):
        for dtype in INTS + [BOOL]:
            if dtype == BOOL:
                a, b = rng.random((4, 33)) < 0.5, rng.random((4, 33)) < 0.5
            else:
                a = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (4, 33), endpoint=True).astype(dtype)
                b = rng.integers(-3 if np.iinfo(dtype).min else 0, 8 * dtype.itemsize + 3, (4, 33)).astype(dtype)
            ta, tb = bz.tensor(a), bz.tensor(b)
            for fn in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
                cases.append((fn(ta, tb), fn(a, b)))
            cases.append((~ta, ~a))
            cases.append((((ta & 0xF) + (ta >> 4)) if dtype != BOOL else (ta & tb) ^ ~tb,
                          ((a & 0xF) + (a >> 4)) if dtype != BOOL else (a & b) ^ ~b))
    bz.reset_stats()
    bz.realize(*[g for g, _ in cases])
    assert bz.stats()["kernels_interpreted"] == 0
    for got, want in cases:
        assert got.device == "cuda:0"
        exact(got, want)
