"""Padding as a view (Note [Windows] in graph/shape.h; Note [Masked loads] in
fusion/lower_windows.h): NumPy's pad (python/braze/_pad.py), every mode,
against NumPy over dtypes and layouts, with NaN, +-Inf and -0.0 inside
(padding is +0.0); that it stays lazy and fuses (a stencil over a padded
array is one kernel); reductions across the padding; the window's edges at
every vector position; errors; and CUDA (host emulation, a GPU where there
is one)."""

import os

import numpy as np
import pytest

import braze as bz
from conftest import BF16, LAYOUTS, logical_values, make_layout, values

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int8, np.uint8, np.bool_, np.float16,
                                np.int64)] + [BF16]
MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "empty"]


def _np(a):
    """NumPy's pad computes bfloat16 as its bits would not: through float32."""
    return a.astype(np.float32) if a.dtype == BF16 else a


def expected(a, width, mode, **kw):
    want = np.pad(_np(a), width, mode="constant" if mode == "empty" else mode, **kw)
    return want.astype(a.dtype)


def check(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    g = got.numpy()
    np.testing.assert_array_equal(_np(g), _np(want))
    if want.dtype.kind == "f" or want.dtype == BF16:  # signed zeros kept, and padding's zeros are +0.0
        np.testing.assert_array_equal(np.signbit(_np(g)), np.signbit(_np(want)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_pad_matches_numpy(dtype, mode):
    for shape, width in [((5,), 2), ((3, 4), ((1, 2), (3, 0))), ((2, 3, 4), 1), ((1, 6), (2, 5)), ((4, 1), 3),
                         ((3, 37), ((0, 1), (5, 19)))]:
        a = values(dtype, shape)
        got = bz.pad(bz.tensor(a), width, mode=mode)
        check(got, expected(a, width, mode))
        check(np.pad(bz.tensor(a), width, mode=mode), expected(a, width, mode))  # through NumPy's protocol


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_of_every_layout(layout, mode):
    a = logical_values(np.dtype(np.float32), layout)
    t = make_layout(layout, a)
    if layout == "scalar":
        with pytest.raises(ValueError, match="pad: a 0-d array"):
            bz.pad(t, 1, mode=mode)
        return
    if layout == "zero_size" and mode != "constant":
        with pytest.raises(ValueError, match="can't extend empty axis 0"):
            bz.pad(t, 1, mode=mode)
        return
    check(bz.pad(t, ((2, 1), (1, 3)), mode=mode), expected(a, ((2, 1), (1, 3)), mode))
    check(bz.pad(t, ((2, 1), (1, 3)), mode=mode) * 2 + 1, expected(a, ((2, 1), (1, 3)), mode) * 2 + 1)


def test_constant_values_per_axis_fill_corners_as_numpy_does():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    for values in [7, (1, 2), ((1, 2), (3, 4)), -0.0, np.nan]:
        check(bz.pad(bz.tensor(a), ((1, 2), (2, 1)), constant_values=values),
              np.pad(a, ((1, 2), (2, 1)), constant_values=values))
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    check(bz.pad(bz.tensor(i), 1, constant_values=2.7), np.pad(i, 1, constant_values=2.7))  # cast, as NumPy


def test_widths_past_the_array_repeat_as_numpy_does():
    for mode in ["reflect", "symmetric", "wrap", "edge"]:
        for n in [1, 2, 3, 5]:
            a = np.arange(n, dtype=np.float32) + 1
            for width in [(n + 2, 2 * n + 1), (0, 3 * n), 7]:
                check(bz.pad(bz.tensor(a), width, mode=mode), np.pad(a, width, mode=mode))


def test_windows_edges_at_every_vector_position():
    # Each lo/hi offset against the 8- and 16-lane vectors and the tail,
    # along the row and down the columns, float32 and float64 (wide kernels).
    rng = np.random.default_rng(0)
    for dtype in [np.float32, np.float64, np.int8]:
        a = (rng.standard_normal((5, 45)) * 9).astype(dtype)
        for lo in range(0, 18, 3):
            for hi in [0, 1, 15, 16, 17]:
                t = bz.pad(bz.tensor(a), ((1, 2), (lo, hi)))
                w = np.pad(a, ((1, 2), (lo, hi)))
                check(t, w)
                got = bz.sum(bz.astype(t, "float64"), axis=1).numpy()
                np.testing.assert_allclose(got, w.astype(np.float64).sum(1), rtol=1e-12)


def test_reductions_and_rows_across_the_padding():
    a = np.random.default_rng(1).standard_normal((37, 45)).astype(np.float32)
    p, P = bz.pad(bz.tensor(a), ((3, 4), (5, 2))), np.pad(a, ((3, 4), (5, 2)))
    np.testing.assert_allclose(bz.sum(p, axis=0).numpy(), P.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bz.sum(p, axis=1).numpy(), P.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bz.max(p, axis=1).numpy(), P.max(1))
    e = np.exp(P - P.max(-1, keepdims=True))
    np.testing.assert_allclose(bz.softmax(p, axis=-1).numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose((p - bz.mean(p, axis=0, keepdims=True)).numpy(), P - P.mean(0, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    col = bz.pad(bz.tensor(a[:, 0]), (2, 3))  # a padded column read once per row (a row constant)
    np.testing.assert_array_equal((bz.reshape(col, (-1, 1)) * bz.ones((1, 45))).numpy(),
                                  np.pad(a[:, 0], (2, 3))[:, None] * np.ones((1, 45), np.float32))


def laplacian(u):
    """A Jacobi/Laplace stencil as NumPy programs write it: a padded array,
    five shifted slices."""
    p = np.pad(u, 1)
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]


def test_a_stencil_over_a_padded_array_is_one_kernel():
    u = np.random.default_rng(2).standard_normal((64, 70)).astype(np.float32)
    t = bz.tensor(u)
    got = laplacian(t)
    assert isinstance(got, bz.Tensor) and not got.is_realized
    bz.reset_stats()
    np.testing.assert_allclose(got.numpy(), laplacian(u), rtol=1e-5, atol=1e-5)
    if not REFERENCE:
        assert bz.stats()["kernels_launched"] == 1
        edge = bz.pad(t, 2, mode="edge")
        bz.reset_stats()
        np.testing.assert_array_equal((edge * 2).numpy(), np.pad(u, 2, mode="edge") * 2)
        assert bz.stats()["kernels_launched"] == 1  # a lazy concatenation of views


def test_pad_of_a_computed_value_and_of_constants():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    # exp(0) is 1, not 0: the pad stays above the exp, which is written out first.
    np.testing.assert_allclose(bz.pad(bz.exp(bz.tensor(a)), ((2, 0), (0, 3))).numpy(), np.pad(np.exp(a), ((2, 0), (0, 3))),
                               rtol=1e-6)
    check(bz.pad(bz.ones((3, 3)), ((1, 0), (0, 2))), np.pad(np.ones((3, 3), np.float32), ((1, 0), (0, 2))))
    check(bz.pad(bz.arange(0, 4, 1, "int32"), (1, 2)), np.pad(np.arange(4, dtype=np.int32), (1, 2)))
    check(bz.pad(bz.tensor(np.float32(3.0)).reshape(1), (0, 3)), np.array([3, 0, 0, 0], np.float32))


def test_bad_pad_is_a_clear_error_and_braze_goes_on():
    t = bz.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="pad: index can't contain negative values"):
        bz.pad(t, -1)
    with pytest.raises(ValueError, match=r"pad: pad_width .* cannot broadcast to \(2, 2\)"):
        bz.pad(t, ((1, 2, 3),))
    with pytest.raises(TypeError, match="pad: mode 'maximum' is not supported"):
        bz.pad(t, 1, mode="maximum")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        bz.pad(t, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match=r"pad: axis 0 of \[2, 3\] padded by"):
        bz._core._pad(t, [2**62, 0], [2**62, 0])
    assert float(bz.sum(bz.pad(t, 1))) == 6.0


def test_pad_on_cuda(cuda_mode):
    a = np.random.default_rng(3).standard_normal((33, 40)).astype(np.float32)
    with bz.device("cuda"):
        t = bz.tensor(a)
        got = laplacian(t)
        e = bz.pad(t, ((1, 2), (3, 4)), mode="reflect")
        s = bz.sum(bz.pad(t, ((4, 1), (2, 2))), axis=0)
    np.testing.assert_allclose(got.numpy(), laplacian(a), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(e.numpy(), np.pad(a, ((1, 2), (3, 4)), mode="reflect"))
    np.testing.assert_allclose(s.numpy(), np.pad(a, ((4, 1), (2, 2))).sum(0), rtol=1e-5, atol=1e-5)


def diffusion(u, steps):
    """Explicit diffusion with insulated edges, recorded lazily step after step."""
    for _ in range(steps):
        p = np.pad(u, 1, mode="edge")
        u = u + 0.1 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u)
    return u


def test_a_lazy_stencil_chain_computes_each_step_a_bounded_number_of_times():
    # Note [Recomputing under views is bounded] (fusion/passes.h): each step
    # reads the last through five views; pushed through every earlier step,
    # twenty steps would be 5^20 trees.
    u = np.random.default_rng(4).random((48, 40)).astype(np.float32)
    bz.reset_stats()
    got = diffusion(bz.tensor(u), 20)
    np.testing.assert_allclose(got.numpy(), diffusion(u, 20), rtol=1e-5, atol=1e-6)
    if not REFERENCE:
        assert bz.stats()["kernels_launched"] <= 20 * 6
    plain = bz.tensor(u)  # the same without padding: slices of the last step only
    for _ in range(12):
        plain = plain[1:-1, 1:-1] + 0.1 * (plain[:-2, 1:-1] + plain[2:, 1:-1] - 2 * plain[1:-1, 1:-1])
    want = u.astype(np.float64)
    for _ in range(12):
        want = want[1:-1, 1:-1] + 0.1 * (want[:-2, 1:-1] + want[2:, 1:-1] - 2 * want[1:-1, 1:-1])
    bz.reset_stats()
    np.testing.assert_allclose(plain.numpy(), want, rtol=1e-5, atol=1e-6)
    if not REFERENCE:
        assert bz.stats()["kernels_launched"] <= 12 * 3
