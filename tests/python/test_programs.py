"""NumPy programs braze did not write, run on braze tensors unchanged
(tests/python/programs/): their functions call np.* and index as NumPy
code does, and NumPy's protocols bring every call to braze."""

import numpy as np
import pytest

import braze as bz
from programs import picogpt_gpt2


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
