"""bz.copyto (NumPy's name and argument order): new values into a realized
tensor's own storage, checked, with no allocation; and a model-shaped loop
that refreshes its input with it and writes its result with bz.jit(out=)
allocates nothing per iteration."""

import math
import os

import numpy as np
import pytest

import braze as bz

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def delta(before, key):
    return bz.stats()[key] - before[key]


def test_copyto_writes_a_numpy_array_in_place_without_allocating():
    x = bz.tensor(rand(3, 5))
    seen = x.numpy()  # a view of x's storage, as np arrays share theirs
    new = rand(3, 5)
    before = bz.stats()
    bz.copyto(x, new)
    assert delta(before, "allocations") == 0
    assert delta(before, "bytes_allocated") == 0
    np.testing.assert_array_equal(x.numpy(), new)
    np.testing.assert_array_equal(seen, new)


@pytest.mark.parametrize("layout", ["transposed", "strided", "broadcast_row", "scalar"])
def test_copyto_takes_any_strides_and_broadcasts_like_numpy(layout):
    x = bz.tensor(np.zeros((4, 6), np.float32))
    src = {
        "transposed": rand(6, 4).T,
        "strided": rand(8, 12)[::2, ::2],
        "broadcast_row": rand(6),
        "scalar": np.float32(2.5),
    }[layout]
    bz.copyto(x, src)
    np.testing.assert_array_equal(x.numpy(), np.broadcast_to(src, (4, 6)))


def test_copyto_keeps_the_dtype_of_every_kind():
    for dt in [np.int32, np.uint8, np.float64, np.bool_, bz.bfloat16]:
        a = (RNG.standard_normal((5, 3)) * 10).astype(dt)
        x = bz.tensor(np.zeros((5, 3), dt))
        bz.copyto(x, a)
        np.testing.assert_array_equal(x.numpy(), a)


def test_copyto_from_tensors_realized_and_lazy():
    x = bz.tensor(np.zeros((3, 4), np.float32))
    a = rand(3, 4)
    ta = bz.tensor(a)
    bz.copyto(x, ta)
    np.testing.assert_array_equal(x.numpy(), a)
    bz.copyto(x, ta * 2.0 + 1.0)  # evaluated straight into x
    np.testing.assert_allclose(x.numpy(), a * 2 + 1, rtol=1e-6)
    bz.copyto(x, bz.tensor(a[0]))  # a row broadcast down
    np.testing.assert_array_equal(x.numpy(), np.broadcast_to(a[0], (3, 4)))


def test_copyto_from_a_lazy_view_of_itself_reads_the_old_values():
    a = rand(4, 4)
    x = bz.tensor(a)
    bz.copyto(x, x.T)
    np.testing.assert_array_equal(x.numpy(), a.T)


def test_copyto_python_numbers_and_lists_take_dst_dtype():
    x = bz.tensor(np.zeros((2, 2), np.int32))
    bz.copyto(x, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(x.numpy(), [[1, 2], [3, 4]])
    bz.copyto(x, 7)
    assert (x.numpy() == 7).all() and x.dtype == np.int32


def test_copyto_refuses_what_it_cannot_do_in_place():
    x = bz.tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="copyto: src is float64 but dst is float32"):
        bz.copyto(x, np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"copyto: src of shape \(4, 3\) does not broadcast to dst's shape \(3, 4\)"):
        bz.copyto(x, np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="copyto: src is int32 but dst is float32"):
        bz.copyto(x, bz.tensor(np.zeros((3, 4), np.int32)))
    with pytest.raises(ValueError, match="copyto: dst is lazy"):
        bz.copyto(x + 1.0, np.zeros((3, 4), np.float32))
    with pytest.raises(TypeError, match="dst must be a braze tensor"):
        bz.copyto(np.zeros((3, 4), np.float32), x)
    np.testing.assert_array_equal(x.numpy(), 0)  # nothing written by a refused call


# --- a model-shaped loop: 0 allocations per iteration ------------------------

B, T, D, H = 2, 16, 32, 2
DH = D // H


def block(x, p, mask):
    """A pre-norm transformer block (examples/transformer_block.py, smaller):
    library calls with epilogues, layer_norm and softmax kernels, views."""
    def heads(t):
        return bz.permute_dims(t.reshape((B, T, H, DH)), (0, 2, 1, 3))

    ln = bz.layer_norm(x, p["g"], p["b"], eps=1e-5)
    q, k, v = (heads(ln @ p["w" + n] + p["b" + n]) for n in "qkv")
    att = bz.softmax(bz.where(mask, (q @ k.mT) * (1.0 / math.sqrt(DH)), -1e30), axis=-1)
    ctx = bz.permute_dims(att @ v, (0, 2, 1, 3)).reshape((B, T, D))
    h = x + ctx @ p["wo"]
    return h + bz.gelu(bz.layer_norm(h, eps=1e-5) @ p["w1"] + p["b1"]) @ p["w2"]


@pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference",
                    reason="BRAZE_BACKEND=reference makes no programs: each realize allocates its values")
def test_a_model_loop_with_copyto_and_out_allocates_nothing_per_iteration():
    names = {"wq": (D, D), "wk": (D, D), "wv": (D, D), "wo": (D, D), "w1": (D, 4 * D), "w2": (4 * D, D),
             "g": (D,), "b": (D,), "bq": (D,), "bk": (D,), "bv": (D,), "b1": (4 * D,)}
    p = {n: bz.tensor(rand(*s) / math.sqrt(s[0])) for n, s in names.items()}
    mask = bz.tensor(np.tril(np.ones((T, T), bool)))
    step = bz.jit(block)
    xt = bz.tensor(rand(B, T, D))
    out = step(xt, p, mask)
    first = out.numpy().copy()
    inputs = [rand(B, T, D) for _ in range(5)]
    before = bz.stats()
    for x in inputs:
        bz.copyto(xt, x)
        step(xt, p, mask, out=out)
    assert delta(before, "allocations") == 0
    assert delta(before, "bytes_allocated") == 0
    assert delta(before, "programs_compiled") == 0
    assert delta(before, "programs_replayed") == 5
    # The last iteration's result is the block of the last input, not a stale one.
    np.testing.assert_allclose(out.numpy(), step(bz.tensor(inputs[-1]), p, mask).numpy(), rtol=1e-5, atol=1e-5)
    assert not np.allclose(out.numpy(), first)


def test_copyto_into_a_device_tensor(monkeypatch):
    # Host emulation of the CUDA device (tests/python/test_cuda.py): no host
    # view of device memory, so the values go in one transfer into the
    # tensor's own device storage, allocating nothing.
    monkeypatch.setenv("BRAZE_CUDA", "emulate")
    x = bz.tensor(np.zeros((3, 4), np.float32), device="cuda")
    a = rand(3, 4)
    bz.reset_stats()
    bz.copyto(x, a)
    assert bz.stats()["allocations"] == 0, bz.stats()
    np.testing.assert_array_equal(x.to("cpu").numpy(), a)
    bz.copyto(x, a[0])  # broadcast
    np.testing.assert_array_equal(x.to("cpu").numpy(), np.broadcast_to(a[0], (3, 4)))
    b = rand(4, 3)
    bz.copyto(x, b.T)  # strided
    np.testing.assert_array_equal(x.to("cpu").numpy(), b.T)
    h = bz.tensor(np.zeros(5, bz.bfloat16), device="cuda")
    bz.copyto(h, np.arange(5).astype(bz.bfloat16))
    np.testing.assert_array_equal(h.numpy().astype(np.float32), np.arange(5, dtype=np.float32))
    y = x * 2.0  # a program reading x sees the new values
    bz.copyto(x, a)
    np.testing.assert_array_equal(y.numpy(), a * 2)
    with pytest.raises(ValueError, match="copyto: dst is lazy"):
        bz.copyto(x + 1.0, a)
    with pytest.raises(ValueError, match="copyto: src is float64"):
        bz.copyto(x, np.zeros((3, 4)))


def test_numpy_copyto_on_tensors_follows_numpy():
    # np.copyto through __array_function__: same_kind casting, where=, and a
    # NumPy array as dst taking a tensor's values.
    a = np.zeros((2, 3), np.float32)
    t = bz.asarray(a.copy())
    src = np.arange(6, dtype=np.int64).reshape(2, 3)
    mask = src % 2 == 0
    np.copyto(a, src, where=mask)
    np.copyto(t, bz.asarray(src), where=bz.asarray(mask))
    np.testing.assert_array_equal(t.numpy(), a)
    np.copyto(a, 2.5)
    np.copyto(t, 2.5)
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(TypeError, match="Cannot cast"):
        np.copyto(np.zeros(3, np.int32), np.ones(3))  # NumPy's own refusal ...
    with pytest.raises(TypeError, match=r"numpy.copyto: cannot cast from dtype\('float64'\) to dtype\('int32'\)"):
        np.copyto(bz.asarray(np.zeros(3, np.int32)), bz.asarray(np.ones(3)))  # ... and braze's
    out = np.zeros(3)
    np.copyto(out, bz.asarray(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_array_equal(out, [1, 2, 3])
