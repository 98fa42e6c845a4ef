"""Programs and replay (docs/programs.md): the same structure compiles once
and replays, a new scalar value replays, a new shape compiles; replays
allocate only the outputs, and nothing with bz.jit(out=...); a loop-carried
lazy tensor stays bounded; bz.explain shows the memory plan."""

import os

import numpy as np
import pytest

import braze as bz

RNG = np.random.default_rng(0)

# BRAZE_BACKEND=reference evaluates each realize on the oracle: no programs
# and no arena, so the counters these tests read stay still.
counts_programs = pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference",
                                     reason="BRAZE_BACKEND=reference makes no programs")


def rand(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


def bias_relu_scale_softmax(x, b, scale):
    return bz.softmax(bz.maximum(x + b, 0.0) * scale, axis=-1)


def np_reference(x, b, scale):
    h = np.maximum(x + b, 0.0) * np.float32(scale)
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def delta(before, key):
    return bz.stats()[key] - before[key]


@counts_programs
def test_the_same_structure_compiles_once_and_replays_with_new_scalars():
    x, b = rand(16, 40), rand(40)
    tx, tb = bz.tensor(x), bz.tensor(b)
    bias_relu_scale_softmax(tx, tb, 0.3).numpy()
    before = bz.stats()
    for i in range(10):
        scale = 0.3 + 0.11 * i  # never 0, 1 or 2: those are structure
        got = bias_relu_scale_softmax(tx, tb, scale).numpy()
        np.testing.assert_allclose(got, np_reference(x, b, scale), rtol=1e-5, atol=1e-6)
    assert delta(before, "programs_compiled") == 0
    assert delta(before, "programs_replayed") == 10
    assert delta(before, "kernels_compiled") == 0
    assert delta(before, "allocations") == 10  # the outputs the user keeps
    assert delta(before, "arena_bytes") == 0


@counts_programs
def test_a_special_scalar_is_a_new_program_and_right():
    tx = bz.tensor(rand(5, 7))
    (tx * 3.0).numpy()
    before = bz.stats()
    np.testing.assert_array_equal((tx * 1.0).numpy(), tx.numpy())
    assert delta(before, "programs_compiled") == 1


@counts_programs
def test_a_new_shape_or_dtype_makes_a_new_program():
    @bz.jit
    def f(x):
        return bz.exp(x) * 0.5

    f(bz.tensor(rand(8, 8)))
    before = bz.stats()
    f(bz.tensor(rand(8, 8)))
    assert delta(before, "programs_compiled") == 0
    f(bz.tensor(rand(8, 9)))
    assert delta(before, "programs_compiled") == 1
    f(bz.tensor(rand(8, 9)).astype(bz.float16))
    assert delta(before, "programs_compiled") == 3  # the astype, then f on float16


@counts_programs
def test_jit_with_out_allocates_nothing_per_call():
    @bz.jit
    def step(x, b, scale):
        return bias_relu_scale_softmax(x, b, scale)

    x, b = rand(64, 100), rand(100)
    tx, tb = bz.tensor(x), bz.tensor(b)
    out = bz.zeros((64, 100)).realize()
    step(tx, tb, 0.45, out=out)
    before = bz.stats()
    for i in range(20):
        step(tx, tb, 0.6 + 0.01 * i, out=out)
    assert delta(before, "allocations") == 0
    assert delta(before, "bytes_allocated") == 0
    assert delta(before, "programs_replayed") == 20
    np.testing.assert_allclose(out.numpy(), np_reference(x, b, 0.6 + 0.01 * 19), rtol=1e-5, atol=1e-6)


@counts_programs
def test_jit_updates_a_weight_in_place():
    @bz.jit
    def sgd(w, g, lr):
        return w - lr * g

    w0, g = rand(32, 32), rand(32, 32)
    w = bz.tensor(w0)
    tg = bz.tensor(g)
    sgd(w, tg, 0.1, out=w)
    want = w0 - np.float32(0.1) * g
    before = bz.stats()
    for lr in (0.1, 0.05, 0.025):
        sgd(w, tg, lr, out=w)
        want = want - np.float32(lr) * g
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-6, atol=1e-6)
    assert delta(before, "allocations") == 0


def test_jit_returns_several_tensors_and_checks_out():
    @bz.jit
    def two(x):
        return x + 1.5, x * 2.5

    tx = bz.tensor(rand(4, 4))
    a, b = two(tx)
    np.testing.assert_allclose(a.numpy(), tx.numpy() + 1.5, rtol=1e-6)
    with pytest.raises(ValueError, match="returned 2 tensor"):
        two(tx, out=bz.zeros((4, 4)).realize())
    with pytest.raises(ValueError, match="lazy"):
        two(tx, out=(bz.zeros((4, 4)), bz.zeros((4, 4))))
    with pytest.raises(ValueError, match=r"target 1 is float32\[4, 5\] but the value is float32\[4, 4\]"):
        two(tx, out=(bz.zeros((4, 4)).realize(), bz.zeros((4, 5)).realize()))


def test_a_loop_carried_accumulator_stays_bounded_and_right():
    x = bz.tensor(np.ones(16, np.float32))
    acc = bz.zeros(16)
    before = bz.stats()
    for _ in range(1000):
        acc = acc + x
    np.testing.assert_array_equal(acc.numpy(), np.full(16, 1000, np.float32))
    assert delta(before, "programs_compiled") <= 3


def test_explain_shows_the_memory_plan():
    tx, tw = bz.tensor(rand(8, 16)), bz.tensor(rand(16, 16))
    y = bz.tanh(bz.exp(tx) @ tw) @ tw
    text = bz.explain(y, file=open("/dev/null", "w"))
    assert "memory plan" in text
    assert "steps" in text and " at " in text
    assert "lower bound" in text and "no reuse" in text


# --- Note [Element reads are inputs] (runtime/lower.cpp) ---------------------------------------------


def test_element_reads_share_one_program():
    """A loop over the elements of a realized matrix (an LU sweep) compiles
    one program: each A[i, j] is read where it is and given to the program
    as an input, not baked in as an offset; the values are NumPy's."""
    a = np.random.default_rng(3).random((40, 40)) + 1
    A, want = bz.asarray(a.copy()), a.copy()
    before = bz.stats()["programs_compiled"]
    for i in range(40):
        for j in range(i):
            A[i, j] /= A[j, j]
            want[i, j] /= want[j, j]
    assert bz.stats()["programs_compiled"] - before <= 1  # 0 where an earlier test compiled it (780 elements)
    np.testing.assert_array_equal(A.numpy(), want)


def test_element_reads_through_views_and_writes():
    m = bz.tensor(np.arange(12.0).reshape(3, 4))
    assert [float(r[1]) for r in m] == [1.0, 5.0, 9.0]
    assert (float(m.T[3, 2]), float(m[1:, ::-2][1, 1]), float(m.reshape(12)[-1]), float(m[None, 2][0, 3])) == \
        (11.0, 9.0, 11.0, 11.0)
    p = bz.pad(m, 1)  # outside a pad's window the element is a zero no memory holds: a view still
    assert (float(p[0, 0]), float(p[1, 1]), float(p[3, 4])) == (0.0, 0.0, 11.0)
    held = m[1, 1] * 2  # recorded before the write: keeps the old value, as NumPy computed it
    m[1, 1] = 50.0
    assert float(m[1, 1]) == 50.0 and float(held) == 10.0
    u = bz.tensor(np.arange(6, dtype=np.uint8))
    assert sum(int(0xFF & b) for b in u) == 15
