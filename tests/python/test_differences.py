"""NumPy's gradient, convolve, fmod and N-D dot on braze tensors
(python/braze/_differences.py, _ufunc_math.py, _numpy_protocols.py),
against NumPy on the same values."""

import io

import numpy as np
import pytest

import braze as bz

RNG = np.random.default_rng(21)


@pytest.mark.parametrize("kw", [{}, {"edge_order": 2}, {"axis": 1}, {"axis": -2, "edge_order": 2}, {"axis": (0, 1)}])
def test_gradient_is_numpys(kw):
    f = RNG.standard_normal((6, 7))
    got, want = np.gradient(bz.tensor(f), **kw), np.gradient(f, **kw)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, bz.Tensor)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)


def test_gradient_spacings_integers_and_errors():
    f = RNG.standard_normal((5, 4))
    for g, w in zip(np.gradient(bz.tensor(f), 0.5, 2.0), np.gradient(f, 0.5, 2.0)):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)
    np.testing.assert_allclose(np.gradient(bz.tensor(f), 0.25, axis=0).numpy(), np.gradient(f, 0.25, axis=0))
    squares = np.arange(10) ** 2
    got = np.gradient(bz.tensor(squares))
    assert got.dtype == np.float32  # braze's default float (NumPy: float64)
    np.testing.assert_allclose(got.numpy(), np.gradient(squares))
    with pytest.raises(ValueError, match="too short"):
        np.gradient(bz.tensor(np.ones(2)), edge_order=2)
    with pytest.raises(TypeError, match="coordinate arrays"):
        np.gradient(bz.tensor(np.ones(4)), np.arange(4.0))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(50, 5), (5, 50), (7, 7), (30, 1), (40, 100)])
def test_convolve_is_numpys(mode, n, m):
    a, v = RNG.standard_normal(n), RNG.standard_normal(m)
    got = np.convolve(bz.tensor(a), bz.tensor(v), mode)
    assert isinstance(got, bz.Tensor)
    np.testing.assert_allclose(got.numpy(), np.convolve(a, v, mode), rtol=1e-10, atol=1e-12)


def test_convolve_is_one_kernel_and_checks_its_operands():
    a, v = bz.tensor(RNG.standard_normal(64)), bz.tensor(RNG.standard_normal(9))
    assert bz.explain(np.convolve(a, v), file=io.StringIO()).startswith("1 step(s): 1 fused kernel(s)")
    with pytest.raises(ValueError, match="1-D"):
        np.convolve(bz.tensor(np.ones((2, 2))), v)
    with pytest.raises(ValueError, match="mode"):
        np.convolve(a, v, "circular")


def test_fmod_is_numpys():
    a = np.array([5.5, -5.5, 5.5, -5.5, -4.0, 4.0, np.inf, 3.0, 3.0, np.nan, 1e300, -0.0, 7.0, 0.1])
    b = np.array([2.0, 2.0, -2.0, -2.0, 2.0, -2.0, 1.0, np.inf, 0.0, 1.0, 3.0, 1.0, 1e-300, 0.03])
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    got = np.fmod(bz.tensor(a), bz.tensor(b)).numpy()
    np.testing.assert_array_equal(got, want)  # exact, NaN where NumPy's is
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))  # -0.0 kept
    i = np.array([7, -7, 7, -7, 0, np.iinfo(np.int64).min, 5, np.iinfo(np.int64).min], np.int64)
    j = np.array([3, 3, -3, -3, 3, 3, 0, -1], np.int64)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(bz.fmod(bz.tensor(i), bz.tensor(j)).numpy(), np.fmod(i, j))
    np.testing.assert_array_equal(np.fmod(bz.tensor(np.arange(-5, 6, dtype=np.int32)), 3).numpy(),
                                  np.fmod(np.arange(-5, 6, dtype=np.int32), 3))


def test_dot_past_two_axes_is_numpys():
    x, y, z = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal((3, 4, 2))
    for a, b in ((x, y), (x, z), (x, y[:, 0]), (y.T, z), (x, 2.5)):
        got = np.dot(bz.tensor(a), bz.tensor(b) if isinstance(b, np.ndarray) else b)
        np.testing.assert_allclose(got.numpy(), np.dot(a, b), rtol=1e-12)


@pytest.mark.parametrize("mode", ["valid", "same", "full"])
@pytest.mark.parametrize("n,m", [(20, 4), (4, 20), (6, 6), (5, 8), (3, 100)])
def test_correlate_is_numpys(mode, n, m):
    a, v = RNG.standard_normal(n), RNG.standard_normal(m)
    np.testing.assert_allclose(np.correlate(bz.tensor(a), bz.tensor(v), mode).numpy(), np.correlate(a, v, mode),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"return_counts": True}, {"return_index": True, "return_inverse": True},
                                {"return_inverse": True},
                                {"return_index": True, "return_inverse": True, "return_counts": True},
                                {"axis": 0}, {"axis": 1, "return_counts": True}])
def test_unique_returns_what_numpy_returns(kw):
    # Sorted, as NumPy's (NumPy 2's unique_values, hash-based, would give 0 5 2 1 3 here)
    a = np.array([[3, 1, 2, 1, 0, 5], [3, 1, 2, 1, 0, 5], [0, 1, 0, 1, 0, 1]])
    got, want = np.unique(bz.tensor(a), **kw), np.unique(a, **kw)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
