"""NumPy programs braze did not write, run on braze tensors unchanged
(tests/python/programs/): their functions call np.* and index as NumPy
code does, and NumPy's protocols bring every call to braze."""

import os
import subprocess
import sys

import numpy as np
import pytest

import braze as bz
from programs import heat_equation, min_char_rnn, picogpt_gpt2, shallow_water, two_layer_net_numpy


def gpt2_params(rng, n_vocab=64, n_ctx=32, n_embd=32, n_head=4, n_layer=2):
    """Random weights in the layout of OpenAI's released GPT-2 checkpoints,
    as picoGPT's utils.load_encoder_hparams_and_params gives them."""
    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def ln():
        return {"g": 1.0 + w(n_embd, scale=0.05), "b": w(n_embd, scale=0.05)}

    blocks = [{
        "mlp": {"c_fc": {"w": w(n_embd, 4 * n_embd), "b": w(4 * n_embd)},
                "c_proj": {"w": w(4 * n_embd, n_embd), "b": w(n_embd)}},
        "attn": {"c_attn": {"w": w(n_embd, 3 * n_embd), "b": w(3 * n_embd)},
                 "c_proj": {"w": w(n_embd, n_embd), "b": w(n_embd)}},
        "ln_1": ln(), "ln_2": ln(),
    } for _ in range(n_layer)]
    params = {"wte": w(n_vocab, n_embd, scale=0.5), "wpe": w(n_ctx, n_embd, scale=0.1), "blocks": blocks,
              "ln_f": ln()}
    return params, n_head


def to_braze(tree):
    if isinstance(tree, dict):
        return {k: to_braze(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [to_braze(v) for v in tree]
    return bz.tensor(tree)


def test_picogpt_forward_pass_matches_numpy():
    params, n_head = gpt2_params(np.random.default_rng(0))
    inputs = [5, 17, 3, 60, 9, 9, 41]
    want = picogpt_gpt2.gpt2(inputs, **params, n_head=n_head)
    got = picogpt_gpt2.gpt2(inputs, **to_braze(params), n_head=n_head)
    assert isinstance(got, bz.Tensor)
    assert got.dtype == want.dtype and tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-4, atol=2e-4)


def test_picogpt_greedy_generation_matches_numpy():
    params, n_head = gpt2_params(np.random.default_rng(1))
    want = picogpt_gpt2.generate([1, 2, 3], params, n_head, 6)
    got = picogpt_gpt2.generate([1, 2, 3], to_braze(params), n_head, 6)
    assert got == want


@pytest.mark.parametrize("name", ["gelu", "softmax"])
def test_picogpt_elementwise_helpers_stay_lazy_and_fuse(name):
    x = bz.tensor(np.random.default_rng(2).standard_normal((8, 16)).astype(np.float32))
    y = getattr(picogpt_gpt2, name)(x)
    assert isinstance(y, bz.Tensor) and not y.is_realized
    np.testing.assert_allclose(y.numpy(), getattr(picogpt_gpt2, name)(x.numpy()), rtol=1e-5, atol=1e-6)


# --- more programs: the helpers below run each one the same way on NumPy
# arrays and on braze tensors (`convert`), so the BRAZE_STRICT run at the end
# reuses them.

def _braze(a):
    return bz.asarray(a)


def _same(a):
    return np.array(a, copy=True)


def run_min_char_rnn(convert, steps=3, seed=0):
    """min-char-rnn's training loop for a few steps (lossFun, then the
    Adagrad update of the module's parameters), then sample(): the gist's
    model parameters are module globals, set here from made-up values."""
    rng = np.random.default_rng(seed)
    v, h = 11, 16
    min_char_rnn.vocab_size, min_char_rnn.hidden_size = v, h
    for name, shape in (("Wxh", (h, v)), ("Whh", (h, h)), ("Why", (v, h))):
        setattr(min_char_rnn, name, convert(rng.standard_normal(shape) * 0.01))
    min_char_rnn.bh, min_char_rnn.by = convert(np.zeros((h, 1))), convert(np.zeros((v, 1)))
    data = rng.integers(0, v, 40).tolist()  # the characters' indices
    params = [getattr(min_char_rnn, n) for n in ("Wxh", "Whh", "Why", "bh", "by")]
    mems = [np.zeros_like(p) for p in params]  # memory variables for Adagrad, as the gist makes them
    hprev, losses, p = convert(np.zeros((h, 1))), [], 0
    for _ in range(steps):
        inputs, targets = data[p:p + min_char_rnn.seq_length], data[p + 1:p + min_char_rnn.seq_length + 1]
        loss, dWxh, dWhh, dWhy, dbh, dby, hprev = min_char_rnn.lossFun(inputs, targets, hprev)
        min_char_rnn.adagrad_update(dWxh, dWhh, dWhy, dbh, dby, *mems)
        losses.append(loss)
        p = (p + 5) % 10
    np.random.seed(seed)
    ixes = min_char_rnn.sample(hprev, data[0], 12)
    return losses, params, mems, [dWxh, dby, hprev], ixes


def test_min_char_rnn_trains_and_samples_as_numpy():
    want = run_min_char_rnn(_same)
    got = run_min_char_rnn(_braze)
    losses, params, mems, last, ixes = got
    for g in losses + params + mems + last:  # the gradients, memories and parameters stay braze tensors
        assert isinstance(g, bz.Tensor)
    assert all(p is getattr(min_char_rnn, n) for p, n in zip(params, ("Wxh", "Whh", "Why", "bh", "by")))
    for g, w in zip(losses + params + mems + last, want[0] + want[1] + want[2] + want[3]):
        assert g.dtype == np.float64 and tuple(g.shape) == np.shape(w)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-9, atol=1e-15)
    assert [int(i) for i in ixes] == [int(i) for i in want[4]]  # np.random.choice, seeded alike


def run_two_layer_net(convert, steps=8, seed=0):
    rng = np.random.default_rng(seed)
    N, D_in, H, D_out = 64, 1000, 100, 10  # the script's sizes
    x, y = rng.standard_normal((N, D_in)), rng.standard_normal((N, D_out))
    w1, w2 = rng.standard_normal((D_in, H)), rng.standard_normal((H, D_out))
    return two_layer_net_numpy.train(convert(x), convert(y), convert(w1), convert(w2), steps)


def test_two_layer_net_trains_as_numpy():
    want_w1, want_w2, want_losses = run_two_layer_net(_same)
    w1, w2, losses = run_two_layer_net(_braze)
    assert all(isinstance(t, bz.Tensor) for t in [w1, w2] + losses)
    np.testing.assert_allclose(w1.numpy(), want_w1, rtol=1e-9)
    np.testing.assert_allclose(w2.numpy(), want_w2, rtol=1e-9)
    np.testing.assert_allclose([float(l) for l in losses], want_losses, rtol=1e-9)
    assert want_losses[-1] < want_losses[0]  # it learns


def run_shallow_water(convert, steps=12):
    state = {k: convert(v) for k, v in shallow_water.model(24, 24).items()}  # float32, as benchpress's default
    held = dict(state)
    shallow_water.simulate(state, steps)
    assert all(state[k] is held[k] for k in state)  # written in place, as NumPy's
    return state


def test_shallow_water_simulates_as_numpy():
    want = run_shallow_water(_same)
    got = run_shallow_water(_braze)
    for k in "HUV":
        assert isinstance(got[k], bz.Tensor) and got[k].dtype == np.float32
        np.testing.assert_allclose(got[k].numpy(), want[k], rtol=2e-5, atol=2e-5)


def run_heat_equation(convert, iterations=30):
    grid = convert(heat_equation.init_grid(14, 18))
    return heat_equation.jacobi(grid, max_iterations=iterations)


def test_heat_equation_jacobi_as_numpy():
    # jacobi assigns center[:] = work where center = grid[1:-1, 1:-1]: the
    # write reaches grid, and the other views of grid see it next iteration
    # (python/braze/_views.py).
    want = run_heat_equation(_same)
    got = run_heat_equation(_braze)
    assert isinstance(got, bz.Tensor)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)


STRICT_RUN = """
import sys
sys.path.insert(0, {tests!r})
import braze as bz
import test_programs as p
result = p.run_{program}(p._braze)
tensors = [t for t in bz.autodiff.tree_flatten(result)[0] if isinstance(t, bz.Tensor)]
bz.realize(*tensors)
print("done")
"""

@pytest.mark.parametrize("program", ["min_char_rnn", "two_layer_net",
                                     "shallow_water", "heat_equation"])
def test_programs_take_no_slow_path(program):
    """Note [No silent slow paths] (runtime/slow_paths.h): under
    BRAZE_STRICT=1 any work that would fall back to the reference
    interpreter is an error, and nothing is said on stderr. A process of its
    own: BRAZE_STRICT is read once, and the warning is once per process."""
    env = dict(os.environ, BRAZE_STRICT="1")
    env.pop("BRAZE_BACKEND", None)  # the reference backend asks for the interpreter: nothing to report
    tests = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, "-c", STRICT_RUN.format(tests=tests, program=program)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "done", p.stderr
    assert "braze: warning:" not in p.stderr, p.stderr


# --- CS231n-style layers (tests/python/programs/cs231n_layers.py) ---------------------------


def _cs231n_calls():
    rng = np.random.default_rng(3)
    W, X, y = rng.standard_normal((20, 5)) * 0.01, rng.standard_normal((30, 20)), rng.integers(0, 5, 30)
    X_test = rng.standard_normal((8, 20))
    x, w, b = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    return [
        ("svm_loss_vectorized", (W, X, y, 0.1)),
        ("softmax_loss_vectorized", (W, X, y, 0.1)),
        ("compute_distances_no_loops", (X, X_test)),
        ("predict_labels", (np.abs(rng.standard_normal((8, 30))), y, 3)),
        ("batchnorm_forward", (X, np.ones(20), np.zeros(20))),
        ("conv_forward_naive", (x, w, b, {"stride": 1, "pad": 1})),
        ("conv_forward_naive", (x, w, b, {"stride": 2, "pad": 1})),
        ("max_pool_forward_naive", (x, {"pool_height": 2, "pool_width": 2, "stride": 2})),
    ]


@pytest.mark.parametrize("as_numpy", [False, True], ids=["protocols", "braze_as_np"])
@pytest.mark.parametrize("name, args", _cs231n_calls(), ids=lambda v: v if isinstance(v, str) else "")
def test_cs231n_layers_match_numpy(name, args, as_numpy):
    import types
    from programs import cs231n_layers
    fn = getattr(cs231n_layers, name)
    want = fn(*args)
    if as_numpy:  # the module's np is braze: np.zeros, np.pad, np.bincount are braze's
        fn = types.FunctionType(fn.__code__, {**fn.__globals__, "np": bz}, fn.__name__, fn.__defaults__)
    got = fn(*[bz.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        g = g.numpy() if isinstance(g, bz.Tensor) else np.asarray(g)
        assert g.shape == np.shape(w)
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=2e-5, atol=1e-6)
