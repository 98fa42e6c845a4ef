"""Joining and splitting against NumPy (python/braze/_join.py,
runtime/concatenate.cpp): every dtype and layout, each axis, zero-size
parts, a few parts joined lazily in one kernel (Note [Lazy concatenation])
and many realized (Note [Concatenation realizes]), the NumPy protocol, the
errors, and the CUDA path under host emulation (and on a GPU, marked gpu)."""

import os

import numpy as np
import pytest

import braze as bz
from conftest import BF16, DTYPES, DTYPE_IDS, make_layout, values

JOIN_LAYOUTS = ["contiguous", "transposed", "sliced", "sliced_reversed"]


def same_bits(got, want):
    """Exact, NaN payloads and signed zeros included: joining moves bytes."""
    got = got.numpy() if isinstance(got, bz.Tensor) else got
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("layout", JOIN_LAYOUTS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_matches_numpy(dtype, layout, axis):
    a = values(dtype, (3, 5), seed=1)
    b = values(dtype, (3, 5), seed=2)
    c = values(dtype, (3, 5), seed=3)
    got = bz.concatenate([make_layout(layout, a), bz.tensor(b), make_layout(layout, c)], axis=axis)
    assert not got.is_realized  # a few parts: a lazy join (Note [Lazy concatenation])
    same_bits(got, np.concatenate([a, b, c], axis=axis))
    many = [values(dtype, (3, 5), seed=k) for k in range(10)]
    got = bz.concatenate([make_layout(layout, m) for m in many], axis=axis)
    assert got.is_realized  # many parts: realized and copied (Note [Concatenation realizes])
    same_bits(got, np.concatenate(many, axis=axis))


@pytest.mark.parametrize("axis", [0, 1, 2, -2])
def test_concatenate_parts_of_different_lengths_and_empty_parts(axis):
    rng = np.random.default_rng(0)
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    for s, n in zip(shapes, (1, 0, 5)):
        s[axis] = n
    parts = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    same_bits(bz.concatenate([bz.tensor(p) for p in parts], axis=axis), np.concatenate(parts, axis=axis))


def test_concatenate_specials_keep_their_bits():
    a = np.array([np.nan, -0.0, np.inf, -np.inf, 0.0], np.float32)
    a[0] = np.frombuffer(np.uint32(0x7FC12345).tobytes(), np.float32)[0]  # a NaN with a payload
    same_bits(bz.concatenate([bz.tensor(a), bz.tensor(a[::-1].copy())]), np.concatenate([a, a[::-1]]))


def test_concatenate_of_lazy_parts_is_lazy_and_fuses():
    x = bz.tensor(values(np.float32, (64, 32), seed=4, specials=False))
    y = bz.tensor(values(np.float32, (64, 32), seed=5, specials=False))
    xs, ys = x.numpy(), y.numpy()
    bz.reset_stats()
    got = bz.concatenate([bz.exp(x) * 2.0, y - x, x[:, :5]], axis=1) * 0.5
    assert not got.is_realized
    want = np.concatenate([np.exp(xs) * 2, ys - xs, xs[:, :5]], axis=1) * 0.5
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=1e-7)
    s = bz.stats()
    assert s["realizations"] == 1, s
    if os.environ.get("BRAZE_BACKEND") != "reference":  # the oracle makes no programs
        # Each computed part is under half the result: a kernel of its own,
        # computed once (Note [Padding sinks under a mask]); the slice, the
        # join and the scale are one kernel.
        assert s["kernels_launched"] == 3, s
    two = bz.concatenate([bz.exp(x), y - x], axis=0) * 0.5  # halves: one kernel in all
    bz.reset_stats()
    np.testing.assert_allclose(two.numpy(), np.concatenate([np.exp(xs), ys - xs]) * 0.5, rtol=2e-6, atol=1e-7)
    if os.environ.get("BRAZE_BACKEND") != "reference":
        assert bz.stats()["kernels_launched"] == 1
    e = np.exp(ys - ys.max(-1, keepdims=True))
    sm = bz.concatenate([bz.softmax(y, axis=-1), x], axis=0)
    np.testing.assert_allclose(sm.numpy(), np.concatenate([e / e.sum(-1, keepdims=True), xs]), rtol=2e-6, atol=1e-7)


def test_gradient_flows_through_a_lazy_concatenation():
    x = bz.tensor(np.array([1.0, 2.0, 3.0]))
    g = bz.grad(lambda t: bz.sum(bz.concatenate([t * 2, t[::-1] ** 2, t[:1]]) * bz.arange(0, 7, 1, "float64")))(x)
    # d/dt of sum(w * [2t, t[::-1]^2, t0]): w[0:3] * 2, 2 t reversed * w[3:6] reversed, w[6] on t0
    w = np.arange(7.0)
    want = 2 * w[:3] + 2 * np.array([1.0, 2.0, 3.0]) * w[3:6][::-1]
    want[0] += w[6]
    np.testing.assert_allclose(g.numpy(), want)


def test_concatenate_promotes_dtypes_as_braze_does():
    a = bz.tensor(np.arange(3, dtype=np.int32))
    b = bz.tensor(np.array([0.5, 1.5], np.float32))
    got = bz.concatenate([a, b])
    assert got.dtype == (a + b[:1]).dtype  # braze's promotion (docs/semantics.md)
    np.testing.assert_array_equal(got.numpy(), [0, 1, 2, 0.5, 1.5])
    assert bz.concatenate([a, a], dtype="float64").dtype == np.float64


def test_concatenate_axis_none_flattens():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    same_bits(bz.concatenate([bz.tensor(a), bz.tensor(a.T)], axis=None), np.concatenate([a, a.T], axis=None))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_matches_numpy(axis):
    parts = [values(BF16, (2, 3), seed=i) for i in range(4)]
    same_bits(bz.stack([bz.tensor(p) for p in parts], axis=axis), np.stack(parts, axis=axis))


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 4), (2, 4, 3)], ids=lambda s: f"rank{len(s)}")
def test_stack_helpers_match_numpy(name, shape):
    parts = [values(np.int32, shape, seed=i) for i in range(3)]
    try:
        want = getattr(np, name)(parts)
    except ValueError:
        with pytest.raises(ValueError):
            getattr(bz, name)([bz.tensor(p) for p in parts])
        return
    same_bits(getattr(bz, name)([bz.tensor(p) for p in parts]), want)


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 4), (2, 4, 3)], ids=lambda s: f"rank{len(s)}")
def test_atleast_matches_numpy(name, shape):
    a = values(np.float32, shape, seed=1)
    same_bits(getattr(bz, name)(bz.tensor(a)), getattr(np, name)(a))


@pytest.mark.parametrize("how", [3, [1, 4], [4, 1], [0, 0, 6], [-2]], ids=str)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_array_split_matches_numpy(how, axis):
    a = values(np.float32, (6, 6), seed=2)
    got = bz.array_split(make_layout("transposed", a), how, axis=axis)
    want = np.array_split(a, how, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert not g.is_realized  # views, read when used
        same_bits(g, w)


def test_array_split_uneven_sections_and_split_refuses_them():
    a = np.arange(7)
    for g, w in zip(bz.array_split(bz.tensor(a), 3), np.array_split(a, 3)):
        same_bits(g, w)
    with pytest.raises(ValueError, match="split: array split does not result in an equal division"):
        bz.split(bz.tensor(a), 3)
    for name, shape in (("hsplit", (2, 4)), ("vsplit", (4, 2)), ("dsplit", (2, 2, 4))):
        b = values(np.int8, shape, seed=3)
        for g, w in zip(getattr(bz, name)(bz.tensor(b), 2), getattr(np, name)(b, 2)):
            same_bits(g, w)


def test_numpy_functions_dispatch_to_braze_and_stay_tensors():
    a = values(np.float32, (2, 3), seed=1)
    t = bz.tensor(a)
    for got, want in ((np.concatenate([t, a]), np.concatenate([a, a])), (np.stack([a, t], axis=1), np.stack([a, a], 1)),
                      (np.vstack([t, a]), np.vstack([a, a])), (np.hstack([a, t]), np.hstack([a, a]))):
        assert isinstance(got, bz.Tensor)
        same_bits(got, want)
    parts = np.split(t, 3, axis=1)
    assert all(isinstance(p, bz.Tensor) for p in parts)
    for g, w in zip(parts, np.split(a, 3, axis=1)):
        same_bits(g, w)


@pytest.mark.parametrize("call, exc, message", [
    (lambda: bz.concatenate([]), ValueError, r"^concatenate: needs at least one tensor$"),
    (lambda: bz.concatenate([bz.zeros((2, 3)), bz.zeros((2, 4))]), ValueError,
     r"^concatenate: shapes \[2, 3\] and \[2, 4\] differ in axis 1, not only in the axis 0 they are joined along$"),
    (lambda: bz.concatenate([bz.zeros((2, 3)), bz.zeros(3)]), ValueError,
     r"^concatenate: tensor 0 has 2 dimension\(s\) but tensor 1 has 1 \(shapes \[2, 3\] and \[3\]\)$"),
    (lambda: bz.concatenate([bz.zeros(()), bz.zeros(())]), ValueError, r"^concatenate: zero-dimensional"),
    (lambda: bz.concatenate([bz.zeros(3)], axis=1), IndexError, r"^concatenate: axis 1 is out of range"),
    (lambda: bz.concatenate(bz.zeros(3)), TypeError, r"^concatenate: takes a sequence of tensors, not a Tensor$"),
    (lambda: bz.concatenate([bz.zeros(3)], out=bz.zeros(3)), TypeError, r"^concatenate: out= is not supported"),
    (lambda: bz.stack([bz.zeros(3), bz.zeros(4)]), ValueError,
     r"^stack: all tensors need the same shape; tensor 0 is \[3\] but tensor 1 is \[4\]$"),
    (lambda: bz.stack([bz.zeros(3)], axis=2), IndexError, r"^stack: axis 2 is out of range"),
    (lambda: bz.array_split(bz.zeros(3), 0), ValueError, r"^array_split: number sections must be larger than 0"),
], ids=["empty", "shapes", "ranks", "zero_d", "axis", "not_a_list", "out", "stack_shapes", "stack_axis", "sections"])
def test_bad_input_is_a_clear_error_and_braze_keeps_working(call, exc, message):
    with pytest.raises(exc, match=message):
        call()
    same_bits(bz.concatenate([bz.tensor(np.ones(2, np.float32)), bz.zeros(1)]), np.array([1, 1, 0], np.float32))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concatenate_on_cuda(cuda_mode, axis):
    """On a device a few parts join lazily as on the CPU; many are copied
    each as one block, an inner axis moved to the front and back (Note
    [Concatenation realizes])."""
    parts = [values(np.float32, s, seed=i) for i, s in enumerate([(2, 3, 4), (2, 3, 4)])]
    with bz.device("cuda"):
        ts = [bz.tensor(p) for p in parts]
        got = bz.concatenate([ts[0] * 2.0, ts[1]], axis=axis)
        assert got.device == "cuda:0"
        # NaN * 2 on a GPU keeps no payload: compared as values, zeros by sign.
        want = np.concatenate([parts[0] * 2, parts[1]], axis=axis)
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))
        st = bz.stack(ts, axis=-1)
        assert st.device == "cuda:0"
        same_bits(st, np.stack(parts, axis=-1))
        many = bz.concatenate([ts[0]] * 5 + [ts[1]] * 5, axis=axis)  # past the lazy join's parts: block copies
        assert many.device == "cuda:0"
        same_bits(many, np.concatenate([parts[0]] * 5 + [parts[1]] * 5, axis=axis))
