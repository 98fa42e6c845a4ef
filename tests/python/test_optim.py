"""braze.optim: SGD, Adam and AdamW against NumPy reimplementations of
PyTorch's formulas (torch.optim.SGD, Adam, AdamW, written out here
independently of braze), learning rates changed without recompiling, and
compile_step's one program per training step."""

import math
import os

import numpy as np
import pytest

import braze as bz
import braze.optim as optim

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs to count
counts_programs = pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference makes no programs")

SHAPES = {"w": (3, 4), "b": (4,), "layer": [(2, 3, 2), ()]}


# --- NumPy references of PyTorch's update rules ------------------------------------

def sgd_reference(p, g, state, lr, momentum=0.0, nesterov=False, weight_decay=0.0):
    """torch.optim.SGD's single-tensor step, dampening 0 (state: the buffer or None)."""
    if weight_decay:
        g = g + weight_decay * p
    if momentum:
        buf = g.copy() if state is None else momentum * state + g  # PyTorch starts the buffer at g
        g = g + momentum * buf if nesterov else buf
        state = buf
    return p - lr * g, state


def adam_reference(p, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    """torch.optim.Adam's (decoupled: AdamW's) single-tensor step; state (step, m, v)."""
    beta1, beta2 = betas
    step, m, v = state if state is not None else (0, np.zeros_like(p), np.zeros_like(p))
    step += 1
    if weight_decay:
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    m = m + (1 - beta1) * (g - m)  # exp_avg.lerp_(grad, 1 - beta1)
    v = beta2 * v + (1 - beta2) * g * g
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    denom = np.sqrt(v) / math.sqrt(bias_correction2) + eps
    return p - lr / bias_correction1 * m / denom, (step, m, v)


def leaves(tree):
    return bz.autodiff.tree_flatten(tree)[0]


def make_params(rng, dtype=np.float64, shapes=SHAPES):
    """Random parameters as NumPy arrays, in a tree shaped like `shapes`."""
    return _map_shapes(shapes, lambda s: rng.standard_normal(s).astype(dtype))


def _map_shapes(shapes, f):
    if isinstance(shapes, dict):
        return {k: _map_shapes(v, f) for k, v in shapes.items()}
    if isinstance(shapes, list) and not all(isinstance(d, int) for d in shapes):
        return [_map_shapes(s, f) for s in shapes]
    return f(tuple(shapes))


def to_braze(tree):
    return bz.autodiff.tree_map(lambda a: bz.tensor(a), tree)


def run_against_reference(make_opt, reference, steps=5, dtype=np.float64, rtol=1e-12, atol=1e-14, lrs=None, seed=0):
    """Runs `steps` steps with random gradients on braze and on the NumPy
    reference; checks every parameter after each step. `lrs` gives a
    learning rate per step (set on the optimizer between steps)."""
    rng = np.random.default_rng(seed)
    start = make_params(rng, dtype)
    ref_params = leaves(start)
    ref_state = [None] * len(ref_params)
    params = to_braze(start)
    opt = make_opt(params)
    compiled = []
    for i in range(steps):
        if lrs is not None:
            opt.lr = lrs[i]
        lr = opt.lr
        grads_np = [rng.standard_normal(p.shape).astype(dtype) for p in ref_params]
        grads = bz.autodiff.tree_unflatten(bz.autodiff.tree_flatten(params)[1], [bz.tensor(g) for g in grads_np])
        before = bz.stats()["programs_compiled"]
        opt.step(grads)
        compiled.append(bz.stats()["programs_compiled"] - before)
        for j, (p, g) in enumerate(zip(ref_params, grads_np)):
            ref_params[j], ref_state[j] = reference(p, g, ref_state[j], lr)
        for got, want in zip(leaves(params), ref_params):
            np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol, err_msg=f"step {i}")
    return opt, ref_state, compiled


# --- the optimizers against the references -----------------------------------------

SGD_CASES = {
    "plain": dict(),
    "momentum": dict(momentum=0.9),
    "nesterov": dict(momentum=0.9, nesterov=True),
    "weight_decay": dict(weight_decay=0.1),
    "all": dict(momentum=0.5, nesterov=True, weight_decay=0.01),
}


@pytest.mark.parametrize("case", list(SGD_CASES))
def test_sgd_matches_pytorch_formulas(case):
    kw = SGD_CASES[case]
    opt, ref_state, _ = run_against_reference(lambda p: optim.SGD(p, lr=0.1, **kw),
                                              lambda p, g, s, lr: sgd_reference(p, g, s, lr, **kw))
    if kw.get("momentum"):
        for got, want in zip(leaves(opt.state["momentum_buffer"]), ref_state):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)
    else:
        assert opt.state == {}


ADAM_CASES = {
    "Adam": (optim.Adam, dict(), dict()),
    "Adam_l2": (optim.Adam, dict(weight_decay=0.1), dict(weight_decay=0.1)),
    "Adam_betas": (optim.Adam, dict(betas=(0.5, 0.9), eps=1e-3), dict(betas=(0.5, 0.9), eps=1e-3)),
    "Adam_beta1_zero": (optim.Adam, dict(betas=(0.0, 0.99)), dict(betas=(0.0, 0.99))),
    "AdamW": (optim.AdamW, dict(), dict(weight_decay=1e-2, decoupled=True)),
    "AdamW_strong": (optim.AdamW, dict(weight_decay=0.5), dict(weight_decay=0.5, decoupled=True)),
    "AdamW_no_decay": (optim.AdamW, dict(weight_decay=0.0), dict()),
}


@pytest.mark.parametrize("case", list(ADAM_CASES))
def test_adam_matches_pytorch_formulas(case):
    cls, kw, ref_kw = ADAM_CASES[case]
    opt, ref_state, _ = run_against_reference(lambda p: cls(p, lr=0.01, **kw),
                                              lambda p, g, s, lr: adam_reference(p, g, s, lr, **ref_kw), steps=6)
    assert opt.state["t"].dtype == np.float32 and opt.state["t"].shape == ()
    assert float(opt.state["t"]) == 6
    for m, v, (step, m_ref, v_ref) in zip(leaves(opt.state["exp_avg"]), leaves(opt.state["exp_avg_sq"]), ref_state):
        np.testing.assert_allclose(m.numpy(), m_ref, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(v.numpy(), v_ref, rtol=1e-12, atol=1e-14)


def test_adam_float32_parameters():
    # float32 parameters against the float64 reference: the bias corrections
    # (computed in the parameters' dtype) must not lose precision early on,
    # when 1 - beta2**t is small.
    run_against_reference(lambda p: optim.Adam(p, lr=0.01), lambda p, g, s, lr: adam_reference(
        p.astype(np.float64), g, s, lr), steps=4, dtype=np.float32, rtol=2e-6, atol=1e-7)


def test_adam_mixed_dtypes():
    params = {"a": bz.tensor(np.ones(3, np.float32)), "b": bz.tensor(np.ones(3, np.float64))}
    opt = optim.Adam(params, lr=0.1)
    opt.step({"a": bz.tensor(np.full(3, 2, np.float32)), "b": bz.tensor(np.full(3, -2.0))})
    assert params["a"].dtype == np.float32 and params["b"].dtype == np.float64
    # The first Adam step is lr * g / (|g| + eps), lr * sign(g) but for eps.
    np.testing.assert_allclose(params["a"].numpy(), 0.9, rtol=1e-6)
    np.testing.assert_allclose(params["b"].numpy(), 1 + 0.1 * 2 / (2 + 1e-8), rtol=1e-15)


# --- learning rates, recompiling and allocation ---------------------------------------

LR_SCHEDULE = [0.1, 0.05, 0.0, 1.0, 2.0, 0.3, 0.3, -0.0]


@pytest.mark.parametrize("make_opt,reference", [
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.9), lambda p, g, s, lr: sgd_reference(p, g, s, lr, momentum=0.9)),
    (lambda p: optim.Adam(p, lr=0.1), adam_reference),
    (lambda p: optim.AdamW(p, lr=0.1), lambda p, g, s, lr: adam_reference(p, g, s, lr, weight_decay=1e-2,
                                                                          decoupled=True)),
], ids=["SGD", "Adam", "AdamW"])
def test_lr_changes_without_recompiling(make_opt, reference):
    # 0, 1 and 2 are values braze's passes simplify on (Note [Scalar
    # parameters]), and a learning rate equal to another hyperparameter
    # would share its scalar: none of it may change the program.
    _, _, compiled = run_against_reference(make_opt, reference, steps=len(LR_SCHEDULE), lrs=LR_SCHEDULE)
    if not REFERENCE:
        # (the first step's program may be cached by an earlier test)
        assert compiled[0] <= 1 and compiled[1:] == [0] * (len(LR_SCHEDULE) - 1), compiled


def test_lr_attribute():
    opt = optim.SGD({"w": bz.tensor(np.zeros(2))}, lr=0.5)
    assert opt.lr == 0.5
    opt.lr = 3
    assert opt.lr == 3.0 and isinstance(opt.lr, float)
    with pytest.raises(ValueError, match="learning rate"):
        opt.lr = -1.0
    with pytest.raises(ValueError, match="learning rate"):
        optim.Adam({"w": bz.tensor(np.zeros(2))}, lr=float("nan"))


@counts_programs
def test_step_replays_and_allocates_nothing():
    rng = np.random.default_rng(1)
    params = to_braze(make_params(rng, np.float32))
    opt = optim.Adam(params, lr=0.01)
    grads = bz.autodiff.tree_map(lambda p: bz.tensor(rng.standard_normal(p.shape).astype(np.float32)), params)
    opt.step(grads)
    before = bz.stats()
    for _ in range(3):
        opt.step(grads)
    after = bz.stats()
    assert after["programs_compiled"] == before["programs_compiled"]
    assert after["programs_replayed"] - before["programs_replayed"] == 3
    assert after["allocations"] == before["allocations"]


def test_numpy_gradients_and_lazy_parameters():
    # Parameters still lazy are realized (each on its own: two equal lazy
    # zeros realized together may share a buffer); gradients may be arrays.
    params = {"a": bz.zeros(3, dtype=bz.float64), "b": bz.zeros(3, dtype=bz.float64)}
    opt = optim.SGD(params, lr=1.0)
    opt.step({"a": np.ones(3), "b": np.full(3, 2.0)})
    np.testing.assert_array_equal(params["a"].numpy(), [-1, -1, -1])
    np.testing.assert_array_equal(params["b"].numpy(), [-2, -2, -2])


def test_params_are_updated_in_place_in_lists_and_tuples():
    w, b = bz.tensor(np.ones((2, 2))), bz.tensor(np.ones(2))
    model = [(w, b)]
    opt = optim.SGD(model, lr=0.5)
    opt.step([(np.ones((2, 2)), np.ones(2))])
    assert opt.params is model and model[0][0] is w
    np.testing.assert_array_equal(w.numpy(), np.full((2, 2), 0.5))
    np.testing.assert_array_equal(b.numpy(), [0.5, 0.5])


def test_update_is_functional():
    params = {"w": bz.tensor(np.ones(2))}
    opt = optim.Adam(params, lr=0.1)
    new_params, new_state = opt.update(opt.params, {"w": bz.tensor(np.ones(2))}, opt.state)
    assert not new_params["w"].is_realized
    np.testing.assert_allclose(new_params["w"].numpy(), 0.9)
    assert float(new_state["t"]) == 1
    np.testing.assert_array_equal(params["w"].numpy(), [1, 1])  # nothing written
    assert float(opt.state["t"]) == 0


# --- compile_step --------------------------------------------------------------------

def least_squares(n=64, d=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    w = rng.standard_normal((d, 1)).astype(np.float32)
    y = x @ w + 0.5 + 0.01 * rng.standard_normal((n, 1)).astype(np.float32)
    return bz.tensor(x), bz.tensor(y)


def mse(params, x, y):
    return bz.mean(bz.square(x @ params["w"] + params["b"] - y))


@pytest.mark.parametrize("make_opt", [
    lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
    lambda p: optim.Adam(p, lr=0.1),
    lambda p: optim.AdamW(p, lr=0.1, weight_decay=1e-4),
], ids=["SGD", "nesterov", "Adam", "AdamW"])
def test_compile_step_least_squares(make_opt):
    x, y = least_squares()
    params = {"w": bz.tensor(np.zeros((5, 1), np.float32)), "b": bz.tensor(np.zeros(1, np.float32))}
    opt = make_opt(params)
    step = optim.compile_step(mse, opt)
    first = float(mse(params, x, y))
    losses, compiled, allocations = [], [], []
    for _ in range(100):
        before = bz.stats()
        loss = step(x, y)
        after = bz.stats()
        losses.append(float(loss))
        compiled.append(after["programs_compiled"] - before["programs_compiled"])
        allocations.append(after["allocations"] - before["allocations"])
    assert losses[0] == pytest.approx(first, rel=1e-6)  # the loss before the update
    assert losses[-1] < 1e-3 * losses[0], losses[::10]
    assert float(mse(params, x, y)) < 1e-3 * first
    assert isinstance(loss, bz.Tensor) and loss.is_realized and loss.shape == () and loss.dtype == np.float32
    if not REFERENCE:
        assert compiled[0] >= 1 and sum(compiled[1:]) == 0, compiled[:5]  # one program, replayed from step 2
        assert sum(allocations[1:]) == 0, allocations[:5]


@counts_programs
def test_compile_step_is_one_program_per_step():
    x, y = least_squares()
    params = {"w": bz.tensor(np.zeros((5, 1), np.float32)), "b": bz.tensor(np.zeros(1, np.float32))}
    step = optim.compile_step(mse, optim.Adam(params, lr=0.1))
    step(x, y)
    before = bz.stats()
    step(x, y)
    after = bz.stats()
    assert after["realizations"] - before["realizations"] == 1
    assert after["programs_replayed"] - before["programs_replayed"] == 1


def test_compile_step_matches_step():
    # compile_step's update is the optimizer's: the same parameters as
    # value_and_grad followed by step().
    x, y = least_squares(n=16, d=3)
    init = {"w": np.linspace(-1, 1, 3, dtype=np.float32).reshape(3, 1), "b": np.zeros(1, np.float32)}
    a, b = to_braze(init), to_braze(init)
    opt_a, opt_b = optim.AdamW(a, lr=0.05), optim.AdamW(b, lr=0.05)
    step = optim.compile_step(mse, opt_a)
    for i in range(4):
        loss_a = float(step(x, y))
        loss_b, grads = bz.value_and_grad(mse)(b, x, y)
        loss_b = float(loss_b)
        opt_b.step(grads)
        assert loss_a == pytest.approx(loss_b, rel=1e-6)
        for k in init:
            np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), rtol=1e-6, atol=1e-7)


def test_compile_step_logistic_regression_with_aux():
    rng = np.random.default_rng(3)
    n, d = 128, 4
    x = rng.standard_normal((n, d)).astype(np.float32)
    labels = (x @ rng.standard_normal(d) > 0).astype(np.int64)
    xt, yt = bz.tensor(x), bz.tensor(labels)
    params = {"w": bz.tensor(np.zeros((d, 2), np.float32)), "b": bz.tensor(np.zeros(2, np.float32))}

    def loss_fn(p, x, y):
        logits = x @ p["w"] + p["b"]
        return bz.cross_entropy(logits, y), {"logits": logits}

    step = optim.compile_step(loss_fn, optim.Adam(params, lr=0.1), has_aux=True)
    losses = []
    for _ in range(60):
        loss, aux = step(xt, yt)
        losses.append(float(loss))
    assert losses[0] == pytest.approx(math.log(2), rel=1e-6)
    assert losses[-1] < 0.3 * losses[0], losses[::10]
    logits = aux["logits"]
    assert logits.is_realized and logits.shape == (n, 2)
    accuracy = np.mean(np.argmax(logits.numpy(), axis=1) == labels)
    assert accuracy > 0.95


def test_compile_step_unused_parameter_is_untouched():
    x, y = least_squares(n=8, d=2)
    params = {"w": bz.tensor(np.zeros((2, 1), np.float32)), "b": bz.tensor(np.zeros(1, np.float32)),
              "unused": bz.tensor(np.full(3, 7, np.float32))}
    step = optim.compile_step(mse, optim.SGD(params, lr=0.1, momentum=0.9))
    for _ in range(3):
        step(x, y)
    np.testing.assert_array_equal(params["unused"].numpy(), [7, 7, 7])
    assert np.any(params["w"].numpy() != 0)


# --- errors --------------------------------------------------------------------------

def test_non_float_params_are_refused():
    with pytest.raises(TypeError, match=r"params\['n'\] is int64; only float tensors"):
        optim.SGD({"w": bz.tensor(np.zeros(2)), "n": bz.tensor(np.zeros(2, np.int64))}, lr=0.1)
    with pytest.raises(TypeError, match=r"params\[1\] is a ndarray, not a braze tensor"):
        optim.Adam([bz.tensor(np.zeros(2)), np.zeros(2)])
    with pytest.raises(ValueError, match="holds no tensors"):
        optim.Adam({})
    w = bz.tensor(np.zeros(2))
    with pytest.raises(ValueError, match=r"params\['a'\] and params\['b'\] are the same tensor"):
        optim.SGD({"a": w, "b": w}, lr=0.1)


def test_mismatched_grads_are_refused():
    params = {"w": bz.tensor(np.zeros((2, 3))), "layers": [bz.tensor(np.zeros(3)), bz.tensor(np.zeros(1))]}
    opt = optim.Adam(params)
    good = {"w": np.zeros((2, 3)), "layers": [np.zeros(3), np.zeros(1)]}
    with pytest.raises(ValueError, match=r"grads do not match params: params has keys \['layers', 'w'\] in params "
                                         r"but \['w'\] in grads; missing \['layers'\]"):
        opt.step({"w": good["w"]})
    with pytest.raises(ValueError, match=r"params\['layers'\] has 2 entries in params but 1 in grads"):
        opt.step({"w": good["w"], "layers": [np.zeros(3)]})
    with pytest.raises(ValueError, match=r"params\['layers'\] is a list in params but a tuple in grads"):
        opt.step({"w": good["w"], "layers": (np.zeros(3), np.zeros(1))})
    with pytest.raises(ValueError, match=r"params\['w'\] is a tensor in params but a dict in grads"):
        opt.step({"w": {"x": good["w"]}, "layers": good["layers"]})
    with pytest.raises(ValueError, match=r"the gradient of params\['layers'\]\[0\] has shape \(4,\) but the "
                                         r"parameter \(3,\)"):
        opt.step({"w": good["w"], "layers": [np.zeros(4), np.zeros(1)]})
    with pytest.raises(TypeError, match=r"the gradient of params\['w'\] is None"):
        opt.step({"w": None, "layers": good["layers"]})
    assert float(opt.state["t"]) == 0  # nothing was written
    opt.step(good)
    assert float(opt.state["t"]) == 1


def test_bad_hyperparameters_are_refused():
    p = {"w": bz.tensor(np.zeros(2))}
    with pytest.raises(ValueError, match="nesterov momentum needs momentum > 0"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="invalid momentum"):
        optim.SGD(p, lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="invalid beta parameter at index 1"):
        optim.Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="invalid weight_decay"):
        optim.AdamW(p, weight_decay=-1)
    with pytest.raises(ValueError, match="invalid epsilon"):
        optim.Adam(p, eps=-1e-8)


def test_compile_step_loss_must_be_a_scalar():
    x, y = least_squares(n=8, d=2)
    params = {"w": bz.tensor(np.zeros((2, 1), np.float32)), "b": bz.tensor(np.zeros(1, np.float32))}
    step = optim.compile_step(lambda p, x, y: x @ p["w"] + p["b"] - y, optim.SGD(params, lr=0.1))
    with pytest.raises(TypeError, match="one-element tensor"):
        step(x, y)


# --- on a CUDA device ------------------------------------------------------------------

def test_compile_step_on_cuda(cuda_mode):
    # Host emulation (and a GPU where there is one): the state, the learning
    # rate and the loss live on the parameters' device, and the steps give
    # the CPU's parameters.
    x, y = least_squares(n=16, d=3)
    init = {"w": np.linspace(-1, 1, 3, dtype=np.float32).reshape(3, 1), "b": np.zeros(1, np.float32)}
    on_cpu = to_braze(init)
    on_cuda = {k: bz.tensor(v, device="cuda") for k, v in init.items()}
    opt_cpu, opt_cuda = optim.Adam(on_cpu, lr=0.05), optim.Adam(on_cuda, lr=0.05)
    assert all(t.device.startswith("cuda") for t in leaves(opt_cuda.state))
    step_cpu, step_cuda = optim.compile_step(mse, opt_cpu), optim.compile_step(mse, opt_cuda)
    xc, yc = x.to("cuda"), y.to("cuda")
    compiled = []
    for i, lr in enumerate([0.05, 0.05, 1.0, 0.01]):
        opt_cpu.lr = opt_cuda.lr = lr
        before = bz.stats()["programs_compiled"]
        loss = step_cuda(xc, yc)
        compiled.append(bz.stats()["programs_compiled"] - before)
        assert loss.device.startswith("cuda")
        assert float(loss) == pytest.approx(float(step_cpu(x, y)), rel=1e-5)
        for k in init:
            np.testing.assert_allclose(on_cuda[k].numpy(), on_cpu[k].numpy(), rtol=1e-5, atol=1e-6)
    if not REFERENCE:
        assert compiled[1:] == [0, 0, 0], compiled


def test_compile_step_traces_once_and_replays():
    # Like jax.jit: loss_fn is recorded on the first call; the same tensors
    # (new values copied in) replay the recording; new tensors, a rebound
    # tensor or a changed setting record anew. Each replay computes what a
    # fresh recording would.
    x, y = least_squares(n=16, d=3)
    calls = []

    def loss_fn(p, x, y):
        calls.append(1)
        return mse(p, x, y)

    init = {"w": np.zeros((3, 1), np.float32), "b": np.zeros(1, np.float32)}
    traced, fresh = to_braze(init), to_braze(init)
    opt_t, opt_f = optim.SGD(traced, lr=0.1, momentum=0.9), optim.SGD(fresh, lr=0.1, momentum=0.9)
    step_t = optim.compile_step(loss_fn, opt_t)
    rng = np.random.default_rng(5)
    for i in range(4):
        bz.copyto(x, rng.standard_normal(tuple(x.shape)).astype(np.float32))
        loss = float(step_t(x, y))
        want = float(optim.compile_step(mse, opt_f)(x, y))  # a new step function: recorded every time
        assert loss == pytest.approx(want, rel=1e-6)
        for k in init:
            np.testing.assert_allclose(traced[k].numpy(), fresh[k].numpy(), rtol=1e-6)
    assert len(calls) == 1
    step_t(bz.tensor(x.numpy()), y)  # another tensor
    assert len(calls) == 2
    x2 = bz.tensor(x.numpy())
    step_t(x2, y)
    x2 += 1.0  # rebinds x2 to a new recorded value
    step_t(x2, y)
    assert len(calls) == 4
    opt_t.momentum = 0.5  # recorded into the update
    step_t(x2, y)
    assert len(calls) == 5
    opt_t.lr = 0.01  # a tensor the program reads: no new recording
    step_t(x2, y)
    assert len(calls) == 5
