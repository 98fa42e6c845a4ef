"""bfloat16 matmul and conv2d: through oneDNN where it runs bfloat16 on this
CPU (oneDNN 2.6 needs AVX-512: bz._core._library_calls()["bfloat16"]), on
the reference interpreter elsewhere, counted in library_calls_reference;
either way against NumPy in float64 on the same bfloat16 values, with the
bias and activation epilogues as post-ops (Note [Library epilogues]).

oneDNN sums the products in float32, applies the post-ops in float32 and
rounds once to bfloat16; the reference rounds after every node (the product,
the bias add, each op of a composite activation). Both stay within a few
bfloat16 roundings (2^-9 relative each) of the values rounded, so the
tolerance is 2^-6 of the magnitudes involved: the result, the product and
the bias (a product cancelled by its bias keeps the product's rounding).
"""

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import braze as bz
from test_library_calls import ACTIVATIONS, np_conv2d

BF16 = ml_dtypes.bfloat16
FUSED = os.environ.get("BRAZE_BACKEND", "cpu") != "reference"
LIB = bz._core._library_calls()


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(BF16)


def f64(a):
    return np.asarray(a).astype(np.float64)


def close_bf16(got, want, *magnitudes):
    assert got.dtype == BF16
    scale = np.abs(want) + sum(np.abs(m) for m in magnitudes)
    bad = np.abs(f64(got) - want) > 2.0 ** -6 * scale + 1e-6
    assert not bad.any(), f"{bad.sum()} of {bad.size} off: got {f64(got)[bad][:5]}, want {want[bad][:5]}"


def run(t):
    """t.numpy(), and whether its library calls ran on the reference interpreter."""
    before = bz.stats()["library_calls_reference"]
    got = t.numpy()
    return got, bz.stats()["library_calls_reference"] > before


def expect_where_it_ran(on_reference):
    if not FUSED:
        return  # BRAZE_BACKEND=reference: every graph on the oracle, nothing counted
    assert on_reference == (not LIB["bfloat16"]), LIB


MATMULS = [
    ((8, 16), (16, 4), False),
    ((2, 5, 6), (6, 4), False),
    ((33, 48), (48, 20), True),       # x @ w.T
    ((200, 30), (30, 17), False),     # 128 rows or more: packed (Note [Packed matmul weights])
    ((2, 130, 20), (3, 1, 20, 9), False),
]


@pytest.mark.parametrize("sa,sb,transposed", MATMULS, ids=str)
def test_bfloat16_matmul_matches_numpy(sa, sb, transposed):
    a = rand(sa, 1)
    if transposed:  # w.T: w's transposed layout goes to the library, not a copy
        wt = rand(sb[::-1], 2)
        b, B = wt.T, bz.tensor(wt).T
    else:
        b = rand(sb, 2)
        B = bz.tensor(b)
    got, on_reference = run(bz.tensor(a) @ B)
    expect_where_it_ran(on_reference)
    close_bf16(got, f64(a) @ f64(b))


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_bfloat16_bias_activation_is_one_library_call(act):
    fn, ref = ACTIVATIONS[act]
    x, w, b = rand((40, 48), 3), rand((48, 24), 4), rand((24,), 5)
    y = fn(bz.tensor(x) @ bz.tensor(w) + bz.tensor(b))
    text = bz.explain(y)
    assert text.startswith("1 step(s): 0 fused kernel(s), 1 library call(s)"), text
    assert "post-op add" in text and "not fused" not in text, text
    got, on_reference = run(y)
    expect_where_it_ran(on_reference)
    product = f64(x) @ f64(w)
    close_bf16(got, ref(product + f64(b)), product, f64(b))


def test_bfloat16_mlp_with_a_kept_packed_weight_replays():
    # 256 rows and input weights: packed once and kept by the program (Note
    # [Kept packed weights]); a replay reads the kept copy, a new weight of
    # the same shape is packed again.
    x, w1, b1, w2 = rand((256, 64), 6), rand((64, 96), 7), rand((96,), 8), rand((96, 32), 9)
    X, B1 = bz.tensor(x), bz.tensor(b1)
    for w1_now in (w1, w1, rand((64, 96), 10)):
        W1, W2 = bz.tensor(w1_now), bz.tensor(w2)
        got, on_reference = run(bz.relu(X @ W1 + B1) @ W2)
        expect_where_it_ran(on_reference)
        h = f64(np.maximum(f64(x) @ f64(w1_now) + f64(b1), 0).astype(BF16))  # bfloat16 between the calls
        close_bf16(got, h @ f64(w2), np.abs(h) @ np.abs(f64(w2)))


CONVS = [
    # x shape, w shape, stride, padding, groups
    ((2, 3, 9, 11), (4, 3, 3, 3), 1, 1, 1),
    ((2, 4, 9, 9), (6, 2, 3, 3), 2, 1, 2),
    ((1, 16, 8, 8), (32, 16, 1, 1), 1, 0, 1),
]


@pytest.mark.parametrize("xs,ws,stride,padding,groups", CONVS, ids=str)
def test_bfloat16_conv2d_bias_relu(xs, ws, stride, padding, groups):
    x, w, b = rand(xs, 11), rand(ws, 12), rand((ws[0],), 13)
    y = bz.relu(bz.conv2d(bz.tensor(x), bz.tensor(w), bz.tensor(b), stride=stride, padding=padding, groups=groups))
    text = bz.explain(y)
    assert text.startswith("1 step(s): 0 fused kernel(s), 1 library call(s)"), text
    got, on_reference = run(y)
    expect_where_it_ran(on_reference)
    product = np_conv2d(f64(x), f64(w), (stride,) * 2, (padding,) * 2, (1, 1), groups)
    bias = f64(b).reshape(-1, 1, 1)
    close_bf16(got, np.maximum(product + bias, 0), product, bias)


def test_bfloat16_refusal_is_said_and_counted():
    # Where oneDNN has no bfloat16 (an AVX2 machine, or DNNL_MAX_CPU_ISA=AVX2),
    # the call runs on the reference and BRAZE_LOG says why.
    if not LIB["onednn"] or LIB["bfloat16"]:
        pytest.skip(f"oneDNN {'runs' if LIB['bfloat16'] else 'is not built in to run'} bfloat16 here")
    program = ("import numpy as np, ml_dtypes, braze as bz\n"
               "a = np.ones((4, 4), ml_dtypes.bfloat16)\n"
               "(bz.tensor(a) @ bz.tensor(a)).numpy()\n")
    env = dict(os.environ, BRAZE_LOG="info", BRAZE_BACKEND="cpu")
    r = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "oneDNN 2.6 runs bfloat16 only with AVX-512" in r.stderr, r.stderr
