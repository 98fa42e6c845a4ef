"""Held values are kept (Note [Held values are kept] in runtime/lower.h):
a lazy value that user code still holds, computed on the way to what was
realized, is stored when a later read would redo a reduction, a library
call or a long chain; short element-wise chains, views and leaves stay
fused and are not written."""

import os

import numpy as np
import pytest

import braze as bz

pytestmark = pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference",
                                reason="the reference backend keeps only what it was asked for")
RNG = np.random.default_rng(3)


def rand(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


def delta(before, key):
    return bz.stats()[key] - before[key]


def test_a_loop_reading_a_scalar_of_its_state_replays_one_program():
    # Issue 22's loop: each step read the sum of an unrealized state, and
    # every read recomputed the whole history (17,802 launches for 300).
    n, steps = 64, 40
    S = rand(n, n) / np.float32(np.sqrt(n))
    u0 = rand(n, 1)
    s = bz.tensor(S)
    u, v = bz.tensor(u0), u0.astype(np.float64)
    before = bz.stats()
    sums = []
    for _ in range(steps):
        u = bz.tanh(s @ u)
        sums.append(float(u.sum()))
        v = np.tanh(S.astype(np.float64) @ v)
        assert u.is_realized, "the state was not kept"
    np.testing.assert_allclose(u.numpy(), v, rtol=1e-4, atol=1e-5)
    assert delta(before, "values_kept") == steps
    assert delta(before, "programs_compiled") <= 1  # the first step's structure, then replays
    assert delta(before, "programs_replayed") >= steps - 1
    assert delta(before, "kernels_launched") == 2 * steps  # the matmul (tanh its epilogue) and the sum


def test_the_kept_state_gives_numpys_sums():
    n, steps = 32, 25
    S = rand(n, n) / np.float32(np.sqrt(n))
    u0 = rand(n, 1)
    s, u = bz.tensor(S), bz.tensor(u0)
    v = u0.astype(np.float64)
    got, want = [], []
    for _ in range(steps):
        u = bz.tanh(s @ u)
        v = np.tanh(S.astype(np.float64) @ v)
        got.append(float(u.sum()))
        want.append(float(v.sum()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_short_elementwise_chain_held_in_a_variable_stays_fused():
    x = bz.tensor(rand(1000))
    d = x * 2.0 + 1.0  # held, but one fused pass to redo
    before = bz.stats()
    y = float((d * d).sum())
    assert not d.is_realized
    assert delta(before, "values_kept") == 0
    assert delta(before, "kernels_launched") == 1
    xn = x.numpy().astype(np.float64)
    assert y == pytest.approx(float(((xn * 2 + 1) ** 2).sum()), rel=1e-5)
    np.testing.assert_allclose(d.numpy(), x.numpy() * 2 + 1)  # still right when read later


def test_held_values_standing_on_a_reduction_are_kept():
    a = rand(8, 33)
    x = bz.tensor(a)
    m = x.max(axis=1, keepdims=True)
    e = bz.exp(x - m)
    before = bz.stats()
    total = float(e.sum())
    assert m.is_realized and e.is_realized
    assert delta(before, "values_kept") == 2
    want = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(e.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(m.numpy(), a.max(axis=1, keepdims=True))
    assert total == pytest.approx(float(want.sum()), rel=1e-5)


def test_views_and_leaves_are_not_kept():
    a, w = rand(6, 5), rand(5, 4)
    x, wt = bz.tensor(a), bz.tensor(w)
    t = (x @ wt).T  # the view is held, the product under it is not
    z = bz.zeros((4, 6))
    before = bz.stats()
    r = (t + z + 1).numpy()
    assert not t.is_realized and not z.is_realized
    assert delta(before, "values_kept") == 0
    np.testing.assert_allclose(r, (a @ w).T + 1, rtol=1e-5)
    np.testing.assert_allclose(t.numpy(), (a @ w).T, rtol=1e-5)


def test_a_long_held_chain_is_kept_and_a_short_one_is_not():
    x = bz.tensor(rand(100))
    short = x
    for _ in range(3):
        short = short * 0.5 + 1.0
    long = short
    for _ in range(10):
        long = long * 0.5 + 1.0  # 26 ops deep: past kKeepDepth
    (long + 1).realize()
    assert long.is_realized and not short.is_realized
    want = x.numpy().astype(np.float64)
    for _ in range(13):
        want = want * 0.5 + 1
    np.testing.assert_allclose(long.numpy(), want, rtol=1e-6)


def test_values_held_by_another_lazy_tensor_are_kept():
    a, w = rand(4, 8), rand(8, 8)
    h = bz.tensor(a) @ bz.tensor(w)  # only the lazy `later` holds it once `h` is gone
    first, later = h.sum(), h * 2.0
    del h
    float(first)
    before = bz.stats()
    np.testing.assert_allclose(later.numpy(), 2 * (a @ w), rtol=1e-5)
    assert delta(before, "library_calls_reference") == 0
    assert delta(before, "kernels_launched") == 1  # the product was not redone


def test_the_results_equal_those_of_a_realize_that_keeps_nothing():
    a, w, b = rand(16, 32), rand(32, 8), rand(8)
    x, wt, bt = bz.tensor(a), bz.tensor(w), bz.tensor(b)
    h = bz.maximum(x @ wt + bt, 0.0)
    y = bz.softmax(h, axis=-1)
    kept = y.numpy()
    fresh = bz.softmax(bz.maximum(x @ wt + bt, 0.0), axis=-1).numpy()
    np.testing.assert_array_equal(kept, fresh)
    assert h.is_realized
