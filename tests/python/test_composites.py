"""Composite ops (built from primitives in the graph) against NumPy formulas
computed in float64: softmax, log_softmax, layer_norm, rms_norm, gelu, silu,
mse_loss, cross_entropy. Large inputs check numerical stability; views check
that the composites read through strides."""

import math

import numpy as np
import pytest

import braze as bz
from conftest import F32, FLOATS, assert_matches, is_float, make_layout, values

_erf = np.vectorize(math.erf, otypes=[np.float64])

# Composites round each intermediate to the input's dtype, so half types get
# a looser bound than one rounding.
RTOL = {"float64": 1e-12, "float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}
COMPOSITE_DTYPES = FLOATS + [np.dtype(np.int32)]


def out_dtype(dt):
    return np.dtype(dt) if is_float(dt) else F32


def check(got, want, dtype, scale=1.0):
    r = RTOL[out_dtype(dtype).name]
    assert_matches(got, want, out_dtype(dtype), rtol=r, atol=r * scale)


def inputs(dtype, shape=(4, 6), seed=1, scale=1.0):
    x = values(dtype, shape, seed=seed, specials=False)
    return (x * np.asarray(scale).astype(x.dtype)).astype(x.dtype) if is_float(dtype) else x


# --- references, in float64 ---------------------------------------------------------


def np_softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    x = x.astype(np.float64)
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_layer_norm(x, w=None, b=None, eps=1e-5):
    x = x.astype(np.float64)
    axes = tuple(range(x.ndim - (w.ndim if w is not None else 1), x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def np_rms_norm(x, w=None, eps=1e-6):
    x = x.astype(np.float64)
    axes = tuple(range(x.ndim - (w.ndim if w is not None else 1), x.ndim))
    y = x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    return y * w if w is not None else y


def np_gelu(x, approximate="none"):
    x = x.astype(np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def np_silu(x):
    x = x.astype(np.float64)
    return x / (1 + np.exp(-x))


def np_cross_entropy(logits, labels):
    lsm = np_log_softmax(logits)
    picked = np.take_along_axis(lsm, labels[..., None].astype(np.int64), axis=-1)[..., 0]
    return -picked.mean()


# --- softmax / log_softmax -------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
@pytest.mark.parametrize("dtype", COMPOSITE_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name, dtype, axis):
    x = inputs(dtype)
    ref = np_softmax if name == "softmax" else np_log_softmax
    got = getattr(bz, name)(bz.tensor(x), axis=axis)
    check(got, ref(x, axis), dtype, scale=1.0 if name == "softmax" else 10.0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_large_inputs_are_stable(name):
    x = inputs(np.float32, scale=1e4)
    x[0] += 3e4
    ref = np_softmax if name == "softmax" else np_log_softmax
    got = getattr(bz, name)(bz.tensor(x))
    assert np.isfinite(got.numpy()).all()
    check(got, ref(x), np.float32, scale=1e4 if name == "log_softmax" else 1)
    if name == "softmax":
        assert_matches(bz.sum(got, axis=-1), np.ones(4), np.float32, rtol=1e-5, atol=1e-6)


def test_softmax_of_minus_inf_entries():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]], np.float32)
    check(bz.softmax(bz.tensor(x)), np_softmax(x), np.float32)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "sliced_reversed", "broadcast"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_views(name, layout):
    from conftest import logical_values
    x = logical_values(np.float32, layout, seed=3, specials=False)
    ref = np_softmax if name == "softmax" else np_log_softmax
    for axis in (0, -1):
        check(getattr(bz, name)(make_layout(layout, x), axis=axis), ref(x, axis), np.float32, scale=10)


def test_softmax_of_empty_axis_is_empty():
    x = np.zeros((3, 0), np.float32)
    assert_matches(bz.softmax(bz.tensor(x)), x)
    assert_matches(bz.log_softmax(bz.tensor(x)), x)
    assert_matches(bz.softmax(bz.tensor(x), axis=0), x)


# --- layer_norm / rms_norm ------------------------------------------------------------------


@pytest.mark.parametrize("affine", ["none", "weight", "weight_bias", "bias_only", "weight_2d"])
@pytest.mark.parametrize("dtype", COMPOSITE_DTYPES, ids=str)
def test_layer_norm(dtype, affine):
    x = inputs(dtype, (2, 3, 6))
    w = values(np.float32, (3, 6) if affine == "weight_2d" else (6,), seed=7, specials=False)
    b = values(np.float32, (6,), seed=8, specials=False)
    w = w.astype(out_dtype(dtype))
    b = b.astype(out_dtype(dtype))
    kw = {"weight": {"weight": w, "weight_bias": w, "weight_2d": w}.get(affine),
          "bias": b if affine in ("weight_bias", "bias_only") else None}
    got = bz.layer_norm(bz.tensor(x), **{k: (None if v is None else bz.tensor(v)) for k, v in kw.items()})
    want = np_layer_norm(x, kw["weight"], kw["bias"])
    check(got, want, dtype, scale=10)


def test_layer_norm_eps_and_large_inputs():
    x = inputs(np.float32, (4, 8), scale=1e3) + np.float32(1e4)
    got = bz.layer_norm(bz.tensor(x), eps=1e-3)
    check(got, np_layer_norm(x, eps=1e-3), np.float32, scale=100)
    const = np.full((2, 5), 7.0, np.float32)  # zero variance: eps keeps it finite
    assert_matches(bz.layer_norm(bz.tensor(const)), np.zeros((2, 5), np.float32))


@pytest.mark.parametrize("with_weight", [False, True])
@pytest.mark.parametrize("dtype", COMPOSITE_DTYPES, ids=str)
def test_rms_norm(dtype, with_weight):
    x = inputs(dtype, (3, 8))
    w = values(out_dtype(dtype), (8,), seed=7, specials=False) if with_weight else None
    got = bz.rms_norm(bz.tensor(x), None if w is None else bz.tensor(w))
    check(got, np_rms_norm(x, w), dtype, scale=10)
    got = bz.rms_norm(bz.tensor(x), weight=None if w is None else bz.tensor(w), eps=0.5)
    check(got, np_rms_norm(x, w, eps=0.5), dtype, scale=10)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "sliced_reversed"])
def test_norms_of_views(layout):
    from conftest import logical_values
    x = logical_values(np.float32, layout, seed=3, specials=False)
    w = values(np.float32, (5,), seed=7, specials=False)
    check(bz.layer_norm(make_layout(layout, x), bz.tensor(w)), np_layer_norm(x, w), np.float32, scale=10)
    check(bz.rms_norm(make_layout(layout, x), bz.tensor(w)), np_rms_norm(x, w), np.float32, scale=10)


def test_norm_errors():
    x = bz.zeros((2, 6))
    with pytest.raises(ValueError, match=r"layer_norm: weight of shape \[5\] does not match the trailing axes \[6\]"):
        bz.layer_norm(x, bz.ones(5))
    with pytest.raises(ValueError, match=r"rms_norm: weight of shape \[3, 6\] does not match"):
        bz.rms_norm(x, bz.ones((3, 6)))
    with pytest.raises(ValueError, match=r"layer_norm: input of shape \[\] has fewer than 1 axes"):
        bz.layer_norm(bz.tensor(np.float32(1)))


# --- gelu / silu -------------------------------------------------------------------------


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", COMPOSITE_DTYPES, ids=str)
def test_gelu(dtype, approximate):
    x = inputs(dtype, (4, 6), scale=2.0)
    check(bz.gelu(bz.tensor(x), approximate=approximate), np_gelu(x, approximate), dtype, scale=1)
    if approximate == "none":
        check(bz.gelu(bz.tensor(x)), np_gelu(x), dtype, scale=1)


def test_gelu_large_and_special_inputs():
    x = np.array([-1e4, -40.0, -0.0, 0.0, 40.0, 1e4, np.inf, -np.inf, np.nan], np.float32)
    for approximate in ("none", "tanh"):
        with np.errstate(all="ignore"):
            want = np_gelu(x, approximate)
        want[np.isneginf(x)] = np.nan if approximate == "none" else want[np.isneginf(x)]
        got = bz.gelu(bz.tensor(x), approximate=approximate).numpy()
        np.testing.assert_allclose(got[:6], want[:6].astype(np.float32), rtol=1e-6, atol=1e-6)
        assert got[6] == np.inf and np.isnan(got[8])


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match=r"gelu: approximate must be 'none' or 'tanh', got 'fast'"):
        bz.gelu(bz.zeros(3), approximate="fast")


@pytest.mark.parametrize("dtype", COMPOSITE_DTYPES, ids=str)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_silu(dtype):
    x = inputs(dtype, (4, 6), scale=3.0)
    check(bz.silu(bz.tensor(x)), np_silu(x), dtype)
    check(bz.silu(bz.tensor(x).T), np_silu(x.T), dtype)


def test_silu_large_inputs():
    x = np.array([-1e4, -100.0, 100.0, 1e4], np.float32)
    with np.errstate(over="ignore"):
        check(bz.silu(bz.tensor(x)), np_silu(x), np.float32)


# --- losses -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPOSITE_DTYPES, ids=str)
def test_mse_loss(dtype):
    p, t = inputs(dtype, (4, 6), seed=1), inputs(dtype, (4, 6), seed=2)
    got = bz.mse_loss(bz.tensor(p), bz.tensor(t))
    assert got.shape == ()
    want = np.mean((p.astype(np.float64) - t.astype(np.float64)) ** 2)
    check(got, want, dtype, scale=10)
    check(bz.mse_loss(bz.tensor(p).T, bz.tensor(t).T), want, dtype, scale=10)


def test_mse_loss_broadcasts_and_errors():
    p, t = inputs(np.float32, (4, 6)), inputs(np.float32, (6,), seed=2)
    check(bz.mse_loss(bz.tensor(p), bz.tensor(t)), np.mean((p.astype(np.float64) - t) ** 2), np.float32)
    with pytest.raises(ValueError, match=r"subtract: shapes \[4, 6\] and \[5\] do not broadcast"):
        bz.mse_loss(bz.tensor(p), bz.zeros(5))


@pytest.mark.parametrize("label_dtype", [np.int64, np.int32, np.uint8, np.int8], ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cross_entropy(dtype, label_dtype):
    logits = inputs(dtype, (5, 7), seed=1)
    labels = np.array([0, 6, 3, 3, 1], dtype=label_dtype)
    got = bz.cross_entropy(bz.tensor(logits), bz.tensor(labels))
    assert got.shape == ()
    check(got, np_cross_entropy(logits, labels), dtype, scale=10)


def test_cross_entropy_batched_transposed_and_large():
    logits = inputs(np.float32, (3, 2, 4), seed=1, scale=1e3)
    labels = np.array([[0, 3], [2, 1], [3, 3]])
    check(bz.cross_entropy(bz.tensor(logits), bz.tensor(labels)), np_cross_entropy(logits, labels), np.float32,
          scale=1e3)
    lt = np.ascontiguousarray(logits.reshape(6, 4).T)  # stored (4, 6): the logits are lt.T
    got = bz.cross_entropy(bz.tensor(lt).T, bz.tensor(labels.reshape(6)))
    check(got, np_cross_entropy(logits.reshape(6, 4), labels.reshape(6)), np.float32, scale=1e3)
    assert np.isfinite(got.numpy())


def test_cross_entropy_errors():
    logits = bz.zeros((4, 3))
    with pytest.raises(ValueError, match=r"cross_entropy: labels must be integer class indices, got float32"):
        bz.cross_entropy(logits, bz.zeros(4))
    with pytest.raises(ValueError, match=r"cross_entropy: labels of shape \[5\] do not match logits of shape \[4, 3\]"):
        bz.cross_entropy(logits, bz.tensor(np.zeros(5, np.int64)))
    with pytest.raises(ValueError, match=r"cross_entropy: logits need a class axis"):
        bz.cross_entropy(bz.tensor(np.float32(1)), bz.tensor(np.int64(0)))


def test_composites_are_lazy():
    x = bz.tensor(inputs(np.float32))
    for y in (bz.softmax(x), bz.log_softmax(x), bz.layer_norm(x), bz.rms_norm(x), bz.gelu(x), bz.silu(x),
              bz.mse_loss(x, x), bz.cross_entropy(x, bz.tensor(np.zeros(4, np.int64)))):
        assert not y.is_realized
