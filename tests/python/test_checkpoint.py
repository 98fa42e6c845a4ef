"""bz.checkpoint (Note [Checkpoints], runtime/autodiff.h; docs/autodiff.md):
the gradient of a checkpointed function equals the plain function's, for
trees of arguments, closures, several outputs, repeated and non-tensor
arguments, nesting, second derivatives and the PyTorch-style backward();
the function runs once; and the memory plan of a training step keeps less
(the recomputation runs in the backward, as its own nodes)."""

import os
import re

import numpy as np
import pytest

import braze as bz
import braze.optim as optim

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs, no memory plan


def tensor(rng, *shape):
    return bz.tensor(rng.standard_normal(shape))


def block(h, w, b):
    a = h @ w + b
    return bz.tanh(a) * bz.sigmoid(a) + h


def assert_same_gradients(g1, g2):
    l1, s1 = bz.autodiff.tree_flatten(g1)
    l2, s2 = bz.autodiff.tree_flatten(g2)
    assert s1 == s2
    for a, b in zip(l1, l2):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)


POLICIES = ["nothing_saveable", "dots_saveable", "dots_and_reductions_saveable"]


def both(loss, *args, argnums=0):
    """The value and gradient of loss(..., ck) without checkpoints and with
    them under every policy: the same."""
    plain = bz.value_and_grad(lambda *a: loss(*a, lambda f: f), argnums=argnums)(*args)
    for policy in POLICIES:
        ck = lambda f: bz.checkpoint(f, policy=policy)
        checked = bz.value_and_grad(lambda *a: loss(*a, ck), argnums=argnums)(*args)
        np.testing.assert_allclose(float(plain[0]), float(checked[0]), rtol=1e-14)
        assert_same_gradients(plain[1], checked[1])


def test_a_chain_of_blocks_with_a_tree_of_parameters():
    rng = np.random.default_rng(0)
    params = [{"w": tensor(rng, 6, 6) * 0.4, "b": tensor(rng, 6)} for _ in range(4)]
    x = tensor(rng, 5, 6)

    def loss(params, x, ck):
        h = x
        for p in params:
            h = ck(lambda h, p: block(h, p["w"], p["b"]))(h, p)
        return (h * h).mean()

    both(loss, params, x, argnums=(0, 1))


def test_closed_over_variables_get_their_gradient_once():
    # w is read by every block from the closure, and also reaches later
    # blocks through their argument: a partial derivative, not counted twice.
    rng = np.random.default_rng(1)
    w, b, x = tensor(rng, 4, 4) * 0.5, tensor(rng, 4), tensor(rng, 3, 4)

    def loss(w, b, x, ck):
        h = x
        for i in range(3):
            h = ck(lambda t: block(t, w, b))(h) if i != 1 else block(h, w, b)
        return (h * h).sum()

    both(loss, w, b, x, argnums=(0, 1, 2))


def test_several_outputs_one_unused_and_a_repeated_argument():
    rng = np.random.default_rng(2)
    x, y = tensor(rng, 3, 4), tensor(rng, 4)

    def f(a, b, c):
        return {"s": bz.sin(a) * b, "t": (a * c).sum(axis=0), "unused": bz.exp(a)}

    def loss(x, y, ck):
        out = ck(f)(x, y, x)
        return (out["s"] ** 2).sum() + out["t"].sum() * 3.0

    both(loss, x, y, argnums=(0, 1))


def test_non_tensor_and_integer_arguments_pass_through():
    rng = np.random.default_rng(3)
    x = tensor(rng, 4, 5)
    mask = bz.tensor(rng.integers(0, 2, (4, 5)).astype(bool))
    counts = bz.tensor(rng.integers(-3, 4, 5).astype(np.int64))

    def f(x, mask, scale, name, counts):
        assert name == "a label" and scale == 2
        return bz.where(mask, x * scale, bz.cos(x)) * counts

    def loss(x, ck):
        return (ck(f)(x, mask, 2, "a label", counts) ** 2).sum()

    both(loss, x)


def test_nested_checkpoints():
    rng = np.random.default_rng(4)
    w, x = tensor(rng, 5, 5) * 0.5, tensor(rng, 2, 5)

    def loss(w, x, ck):
        inner = ck(lambda h, w: bz.tanh(h @ w))
        outer = ck(lambda h, w: inner(inner(h, w), w) * h)
        return outer(outer(x, w), w).sum()

    both(loss, w, x, argnums=(0, 1))


@pytest.mark.parametrize("policy", POLICIES)
def test_second_derivatives(policy):
    rng = np.random.default_rng(5)
    x, w, m = tensor(rng, 4), tensor(rng, 4), tensor(rng, 4, 4)

    def hess_vec(ck):
        f = lambda x: ck(lambda t: bz.sin(t * w) * t @ m)(x).sum() * ck(lambda t: bz.exp(t).max())(x)
        return bz.grad(lambda x: (bz.grad(f)(x) * w).sum())(x)

    assert_same_gradients(hess_vec(lambda f: f), hess_vec(lambda f: bz.checkpoint(f, policy=policy)))


def test_vjp_and_has_aux():
    rng = np.random.default_rng(6)
    x = tensor(rng, 3, 3)
    f = lambda x: (bz.checkpoint(lambda t: bz.tanh(t @ t))(x), bz.sum(x))
    out, vjp_fn, aux = bz.vjp(f, x, has_aux=True)
    plain_out, plain_vjp, _ = bz.vjp(lambda x: (bz.tanh(x @ x), bz.sum(x)), x, has_aux=True)
    c = tensor(rng, 3, 3)
    np.testing.assert_allclose(out.numpy(), plain_out.numpy(), rtol=1e-14)
    assert_same_gradients(vjp_fn(c), plain_vjp(c))
    assert float(aux) == pytest.approx(float(x.numpy().sum()))


def test_pytorch_style_backward():
    rng = np.random.default_rng(7)
    grads = []
    for ck in (lambda f: f, bz.checkpoint):
        w = bz.tensor(np.random.default_rng(8).standard_normal((4, 4))).requires_grad_()
        x = tensor(np.random.default_rng(9), 2, 4)
        loss = (ck(lambda h: bz.tanh(h @ w) * h)(x) ** 2).sum()
        loss.backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
    del rng


def test_the_function_runs_once_and_without_gradients_is_the_function():
    rng = np.random.default_rng(10)
    x = tensor(rng, 3)
    calls = []

    def f(t):
        calls.append(1)
        return bz.exp(t) * t

    g = bz.grad(lambda x: bz.checkpoint(f)(x).sum())(x)
    assert len(calls) == 1  # the backward copies the ops it recorded
    np.testing.assert_allclose(g.numpy(), np.exp(x.numpy()) * (x.numpy() + 1), rtol=1e-14)
    y = bz.checkpoint(f)(x)  # nothing requires a gradient: f's value, nothing kept
    np.testing.assert_allclose(y.numpy(), np.exp(x.numpy()) * x.numpy(), rtol=1e-15)
    with bz.no_grad():
        np.testing.assert_allclose(bz.checkpoint(f)(x).numpy(), y.numpy(), rtol=0)


def test_zero_size_and_float32():
    rng = np.random.default_rng(11)
    empty = bz.tensor(np.zeros((0, 3)))
    g = bz.grad(lambda x: bz.checkpoint(lambda t: bz.sin(t) * 2.0)(x).sum())(empty)
    assert g.shape == (0, 3)
    x = bz.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    g32 = bz.grad(lambda x: (bz.checkpoint(lambda t: bz.tanh(t) * t)(x) ** 2).sum())(x)
    assert g32.dtype == np.float32
    x64 = x.numpy().astype(np.float64)
    t = np.tanh(x64)
    want = 2 * (t * x64) * ((1 - t * t) * x64 + t)
    np.testing.assert_allclose(g32.numpy(), want, rtol=2e-5, atol=1e-6)


def test_errors():
    x = bz.tensor(np.ones(3))
    with pytest.raises(TypeError, match="checkpoint: the function must return tensors"):
        bz.grad(lambda x: bz.checkpoint(lambda t: (t.sum(), 1.5))(x)[0])(x)
    with pytest.raises(ValueError, match="checkpoint: unknown policy 'dots'"):
        bz.checkpoint(bz.sin, policy="dots")
    # braze keeps working afterwards
    np.testing.assert_allclose(bz.grad(lambda x: bz.checkpoint(bz.sin)(x).sum())(x).numpy(), np.cos(np.ones(3)))


def _plan(*tensors):
    text = bz.explain(*tensors)
    arena = int(re.search(r"arena (\d+) B", text).group(1))
    kernels, calls = map(int, re.search(r"(\d+) fused kernel\(s\), (\d+) library call", text).groups())
    return arena, kernels, calls


@pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference plans no memory")
def test_the_backward_recomputes_and_the_arena_shrinks():
    # Six [256, 512] blocks, each a matmul and an element-wise tail. Plain,
    # the plan keeps every block's activations for the backward; with a
    # checkpoint per block only the block inputs, and the forward's matmuls
    # run again (one library call more per block).
    rng = np.random.default_rng(12)
    x = bz.tensor(rng.standard_normal((256, 512)).astype(np.float32))
    ws = [bz.tensor((rng.standard_normal((512, 512)) / 22).astype(np.float32)) for _ in range(6)]
    zero = bz.zeros(512, dtype=np.float32)

    def loss(ws, x, ck):
        h = x
        for w in ws:
            h = ck(lambda h, w: block(h, w, zero))(h, w)
        return (h * h).mean()

    plans, results = [], []
    for ck in (lambda f: f, bz.checkpoint, lambda f: bz.checkpoint(f, policy="dots_saveable")):
        value, grads = bz.value_and_grad(loss)(ws, x, ck)
        plans.append(_plan(value, *grads))
        results.append([value.numpy()] + [g.numpy() for g in grads])
    (arena, kernels, calls), (arena_ck, _, calls_ck), (arena_dots, kernels_dots, calls_dots) = plans
    assert calls_ck == calls + len(ws)
    assert arena_ck < 0.6 * arena, (arena, arena_ck)
    # dots_saveable keeps the matmuls' results and recomputes the tails in
    # the backward's kernels: no matmul again, fewer kernels, less memory.
    assert calls_dots == calls and kernels_dots < kernels, (calls, calls_dots, kernels, kernels_dots)
    assert arena_dots < arena, (arena, arena_dots)
    for r in results[1:]:
        for a, b in zip(results[0], r):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference makes no programs")
def test_compile_step_with_checkpoints_replays_one_program():
    rng = np.random.default_rng(13)
    x = bz.tensor(rng.standard_normal((32, 8)).astype(np.float32))
    y = bz.tensor(rng.standard_normal((32, 1)).astype(np.float32))
    init = {"w1": rng.standard_normal((8, 16)) * 0.3, "w2": rng.standard_normal((16, 1)) * 0.3}

    def make_loss(ck):
        def loss(p, x, y):
            h = ck(lambda x, w: bz.tanh(x @ w) * 2.0)(x, p["w1"])
            return ((h @ p["w2"] - y) ** 2).mean()
        return loss

    losses = []
    for ck in (lambda f: f, bz.checkpoint):
        params = {k: bz.tensor(v.astype(np.float32)) for k, v in init.items()}
        step = optim.compile_step(make_loss(ck), optim.Adam(params, lr=0.05))
        losses.append([float(step(x, y)) for _ in range(3)])
        before = bz.stats()
        step(x, y)
        after = bz.stats()
        assert after["programs_compiled"] == before["programs_compiled"]
        assert after["programs_replayed"] - before["programs_replayed"] == 1
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
