"""bz.quantize, bz.dequantize and bz.quant (python/braze/quant.py) against
NumPy spellings of the same formulas (and PyTorch's MinMaxObserver's for
qparams), per tensor and per channel, symmetric and asymmetric, int8 and
uint8, with ties, saturation, infinities, NaN, signed zeros, zero-size
and transposed inputs; that they fuse; that bad arguments are errors
naming the function; and on a CUDA device."""
import os

import numpy as np
import pytest

import braze as bz

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no kernels to count

RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


def channels(v, ndim, axis):
    """A scale or zero point as NumPy broadcasts it against an array of
    `ndim` axes: per tensor, or one value per index of `axis`."""
    v = np.asarray(v, np.float32)
    if axis is None or v.ndim == 0:
        return v
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def quantize_np(x, scale, zero, dtype, axis=None):
    x = np.asarray(x, np.float32)
    scale, zero = channels(scale, x.ndim, axis), channels(zero, x.ndim, axis)
    lo, hi = RANGES[dtype]
    q = np.clip(np.round(x / scale) + zero, lo, hi)
    q = np.where(np.isnan(x), zero, q)
    return q.astype(dtype)


def dequantize_np(q, scale, zero, axis=None):
    scale, zero = channels(scale, q.ndim, axis), channels(zero, q.ndim, axis)
    return (q.astype(np.float32) - zero) * scale


SPECIAL = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, 1e-30, 126.6, 127.5, -128.5, 300.0, -300.0,
                    np.inf, -np.inf, np.nan, 3.25], np.float32)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("zero", [0, 3, 128])
def test_quantize_per_tensor_matches_the_formula(dtype, zero):
    for scale in (1.0, 0.5, 0.037):
        got = bz.quantize(SPECIAL, scale, zero, dtype)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.numpy(), quantize_np(SPECIAL, scale, zero, dtype))


def test_quantize_ties_round_to_even_and_nan_is_the_zero_point():
    got = bz.quantize(np.array([0.5, 1.5, 2.5, -0.5, -1.5, np.nan], np.float32), 1.0, 7).numpy()
    np.testing.assert_array_equal(got, [7, 9, 9, 7, 5, 7])


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_per_channel_round_trip(axis, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((6, 5)) * 3).astype(np.float32)
    c = x.shape[axis]
    scale = np.linspace(0.01, 0.2, c).astype(np.float32)
    zero = np.arange(c) * (20 if dtype == "uint8" else 3) + (100 if dtype == "uint8" else -4)
    q = bz.quantize(x, scale, zero, dtype, axis=axis)
    np.testing.assert_array_equal(q.numpy(), quantize_np(x, scale, zero, dtype, axis))
    back = bz.dequantize(q, scale, zero, axis=axis).numpy()
    np.testing.assert_array_equal(back, dequantize_np(q.numpy(), scale, zero, axis))
    # Within the range, the round trip is off by at most half a step.
    inside = (q.numpy() > RANGES[dtype][0]) & (q.numpy() < RANGES[dtype][1])
    step = np.broadcast_to(scale.reshape([-1 if a == axis % 2 else 1 for a in range(2)]), x.shape)
    assert np.all(np.abs(back - x)[inside] <= step[inside] / 2 * (1 + 1e-6))


def test_transposed_sliced_zero_size_and_tensor_parameters():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    t = bz.tensor(x)
    np.testing.assert_array_equal(bz.quantize(t.T[::2], 0.05, 1).numpy(), quantize_np(x.T[::2], 0.05, 1, "int8"))
    scale = bz.tensor(np.linspace(0.02, 0.1, 6, dtype=np.float32))
    np.testing.assert_array_equal(bz.quantize(t, scale, 0, axis=1).numpy(),
                                  quantize_np(x, scale.numpy(), 0, "int8", axis=1))
    assert bz.quantize(np.zeros((0, 3), np.float32), 0.1).shape == (0, 3)
    assert bz.dequantize(np.zeros((0, 3), np.int8), 0.1).dtype == np.float32
    # integers quantize as float32 values
    np.testing.assert_array_equal(bz.quantize(np.array([1, 2, 300]), 2.0).numpy(), [0, 1, 127])


def test_dequantize_to_other_float_types():
    q = np.array([-128, -1, 0, 5, 127], np.int8)
    for dtype in ("float32", "float64", "float16"):
        got = bz.dequantize(q, 0.25, -1, dtype=dtype)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.numpy(), (q.astype(np.float64) + 1) * 0.25, rtol=1e-3)


@pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference launches no kernels")
def test_dequantize_compute_quantize_is_one_kernel():
    rng = np.random.default_rng(3)
    scale = np.linspace(0.01, 0.05, 32).astype(np.float32)
    q = bz.quantize(rng.standard_normal((64, 32)).astype(np.float32), scale, axis=1).realize()
    bz.reset_stats()
    y = bz.quantize(bz.relu(bz.dequantize(q, scale, axis=1) * 2.0 + 1.0), 0.1, 5, "uint8").numpy()
    assert bz.stats()["kernels_launched"] == 1
    want = quantize_np(np.maximum(dequantize_np(q.numpy(), scale, 0, 1) * 2 + 1, 0), 0.1, 5, "uint8")
    np.testing.assert_array_equal(y, want)


def test_qparams_are_minmax_observers():
    # PyTorch's MinMaxObserver, written out.
    for lo, hi in ((-1.0, 2.0), (0.5, 3.0), (-4.0, -1.0), (0.0, 0.0)):
        l, h = min(lo, 0.0), max(hi, 0.0)
        s, z = bz.quant.qparams(lo, hi, "int8")
        assert s == np.float32(max(max(-l, h) / 127.5, np.finfo(np.float32).eps)) and z == 0
        s, z = bz.quant.qparams(lo, hi, "uint8")
        assert z == 128
        s, z = bz.quant.qparams(lo, hi, "uint8", symmetric=False)
        want = max((h - l) / 255, np.finfo(np.float32).eps)
        assert s == np.float32(want) and z == np.clip(0 - np.round(l / want), 0, 255)
        s, z = bz.quant.qparams(lo, hi, "int8", symmetric=False)
        assert z == np.clip(-128 - np.round(l / want), -128, 127)
    s, z = bz.quant.qparams(np.array([-1.0, -2.0]), np.array([1.0, 0.5]), "int8")
    assert s.shape == (2,) and z.shape == (2,)
    # Zero quantizes exactly: the range always holds it.
    s, z = bz.quant.qparams(0.5, 3.0, "uint8", symmetric=False)
    assert bz.quantize(np.float32(0.0), s, z, "uint8").numpy() == z


def test_calibrate_min_max_and_percentiles():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    batches = [rng.standard_normal((32, 16)).astype(np.float32) for _ in range(3)]

    def model(p, b):
        h = bz.relu(bz.tensor(b) @ p)
        return {"x": b, "h": h}

    r = bz.quant.calibrate(model, bz.tensor(w), batches)
    assert r["x"] == (min(b.min() for b in batches), max(b.max() for b in batches))
    hs = [np.maximum(b @ w, 0) for b in batches]
    np.testing.assert_allclose(r["h"][1], max(h.max() for h in hs), rtol=1e-5)
    per = bz.quant.calibrate(model, bz.tensor(w), batches, axis=1)
    np.testing.assert_allclose(per["h"][1], np.max([h.max(0) for h in hs], axis=0), rtol=1e-5)
    np.testing.assert_array_equal(per["x"][0], np.min([b.min(0) for b in batches], axis=0))
    p = bz.quant.calibrate(model, bz.tensor(w), batches, percentile=99.0)
    want = np.mean([np.percentile(b, 99.0) for b in batches])
    np.testing.assert_allclose(p["x"][1], want, rtol=1e-5)
    np.testing.assert_allclose(p["x"][0], np.mean([np.percentile(b, 1.0) for b in batches]), rtol=1e-5)


def test_bad_arguments_name_the_function():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match="quantize: dtype must be int8 or uint8, got int16"):
        bz.quantize(x, 0.1, dtype="int16")
    with pytest.raises(TypeError, match="quantize: dtype must be int8 or uint8, got 'int7'"):
        bz.quantize(x, 0.1, dtype="int7")
    with pytest.raises(IndexError, match="quantize: axis 2 is out of range for a tensor of rank 2"):
        bz.quantize(x, [0.1, 0.2], axis=2)
    with pytest.raises(ValueError, match=r"quantize: scale has shape \(2,\), but axis 1 of shape \(2, 3\) has 3"):
        bz.quantize(x, [0.1, 0.2], axis=1)
    with pytest.raises(ValueError, match="quantize: a scale of shape .* needs axis="):
        bz.quantize(x, [0.1, 0.2, 0.3])
    with pytest.raises(TypeError, match="dequantize: dtype must be a float type"):
        bz.dequantize(x, 0.1, dtype="int32")
    with pytest.raises(ValueError, match="calibrate: no batches"):
        bz.quant.calibrate(lambda p, b: {"x": b}, None, [])
    with pytest.raises(ValueError, match="calibrate: percentile"):
        bz.quant.calibrate(lambda p, b: {"x": b}, None, [x], percentile=20)
    with pytest.raises(TypeError, match="calibrate: model_fn must return a dict"):
        bz.quant.calibrate(lambda p, b: b, None, [x])
    # braze keeps working
    np.testing.assert_array_equal(bz.quantize(x, 0.5).numpy(), np.full((2, 3), 2, np.int8))


def test_quantize_on_cuda(cuda_mode):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((16, 8)) * 2).astype(np.float32)
    scale = np.linspace(0.01, 0.1, 8).astype(np.float32)
    with bz.device("cuda"):
        q = bz.quantize(bz.tensor(x), scale, 2, axis=1)
        back = bz.dequantize(q, scale, 2, axis=1)
    assert q.device.startswith("cuda")
    np.testing.assert_array_equal(q.numpy(), quantize_np(x, scale, 2, "int8", 1))
    np.testing.assert_array_equal(back.numpy(), dequantize_np(q.numpy(), scale, 2, 1))


# --- integer matmul (Note [Integer matmul]) ---------------------------------------------------------


def int8_exact_on_onednn():
    return not REFERENCE and bz._core._library_calls()["int8"]


@pytest.mark.parametrize("left", ["int8", "uint8"])
def test_int8_products_summed_in_int32_match_numpy(left):
    rng = np.random.default_rng(8)
    lo, hi = RANGES[left]
    for shape_a, shape_b in (((3, 7), (7, 5)), ((64, 300), (300, 48)), ((2, 16, 33), (33, 8)), ((1, 1), (1, 1))):
        a = rng.integers(lo, hi + 1, shape_a).astype(left)
        b = rng.integers(-128, 128, shape_b).astype(np.int8)
        a[..., 0], b[0] = lo, -128  # the extremes
        bz.reset_stats()
        got = (bz.tensor(a).astype("int32") @ bz.tensor(b).astype("int32")).numpy()
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, a.astype(np.int32) @ b.astype(np.int32))
        if int8_exact_on_onednn():  # on oneDNN, not the reference interpreter
            assert bz.stats()["library_calls_reference"] == 0


def test_int8_matmul_of_views_and_with_a_bias():
    rng = np.random.default_rng(9)
    a = rng.integers(-128, 128, (40, 24)).astype(np.int8)
    w = rng.integers(-128, 128, (16, 40)).astype(np.int8)
    bias = rng.integers(-1000, 1000, 16).astype(np.int32)
    ta, tw = bz.tensor(a), bz.tensor(w)
    bz.reset_stats()
    got = (ta.astype("int32").T[::2] @ tw.astype("int32").T + bz.tensor(bias)).numpy()
    np.testing.assert_array_equal(got, a.T[::2].astype(np.int32) @ w.T.astype(np.int32) + bias)
    if int8_exact_on_onednn():
        assert bz.stats()["library_calls_reference"] == 0
    # Requantized: dequantize the int32 sums with the two scales, as a quantized layer does.
    sa, sw = 0.02, np.linspace(0.01, 0.02, 16).astype(np.float32)
    acc = ta.astype("int32").T @ tw.astype("int32").T
    y = bz.quantize(bz.relu(bz.dequantize(acc, sa * sw, axis=1)), 0.05, 0, "uint8").numpy()
    ref = quantize_np(np.maximum(dequantize_np(a.T.astype(np.int32) @ w.T.astype(np.int32), sa * sw, 0, 1), 0),
                      0.05, 0, "uint8")
    np.testing.assert_array_equal(y, ref)


def conv2d_np(x, w, stride=1, padding=0):
    """NCHW x OIHW in int64 (no groups, no dilation), the reference for
    integer convolutions."""
    x = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    kh, kw = w.shape[2:]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", win, w.astype(np.int64))


@pytest.mark.parametrize("left", ["int8", "uint8"])
def test_int8_convolutions_summed_in_int32_match_numpy(left):
    rng = np.random.default_rng(11)
    lo, hi = RANGES[left]
    for n, c, h, o, k, stride, padding in ((2, 3, 9, 4, 3, 1, 1), (1, 32, 14, 64, 3, 2, 1), (3, 16, 8, 8, 1, 1, 0)):
        x = rng.integers(lo, hi + 1, (n, c, h, h)).astype(left)
        w = rng.integers(-128, 128, (o, c, k, k)).astype(np.int8)
        x[:, :, 0], w[0] = hi, -128  # the extremes
        bz.reset_stats()
        got = bz.conv2d(bz.tensor(x).astype("int32"), bz.tensor(w).astype("int32"), stride=stride, padding=padding)
        got = got.numpy()
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, conv2d_np(x, w, stride, padding).astype(np.int32))
        if int8_exact_on_onednn():  # one oneDNN call, not the reference interpreter
            assert bz.stats()["library_calls_reference"] == 0


def test_int8_convolution_replayed_and_dequantized():
    """A quantized conv layer, twice (the second run replays the program
    with the weights packed once): the int32 sums dequantized per output
    channel, relu, requantized."""
    rng = np.random.default_rng(12)
    w = rng.integers(-128, 128, (8, 4, 3, 3)).astype(np.int8)
    sx, sw = 0.03, np.linspace(0.01, 0.02, 8).astype(np.float32)
    tw = bz.tensor(w)
    for seed in (1, 2):
        x = np.random.default_rng(seed).integers(0, 256, (2, 4, 10, 10)).astype(np.uint8)
        acc = bz.conv2d(bz.tensor(x).astype("int32"), tw.astype("int32"), padding=1)
        y = bz.quantize(bz.relu(bz.dequantize(acc, sx * sw, axis=1)), 0.05, 0, "uint8").numpy()
        want_acc = conv2d_np(x, w, 1, 1).astype(np.int32)
        want = quantize_np(np.maximum(dequantize_np(want_acc, sx * sw, 0, 1), 0), 0.05, 0, "uint8")
        np.testing.assert_array_equal(y, want)


def test_other_integer_matmuls_keep_numpy_types():
    rng = np.random.default_rng(10)
    a = rng.integers(-128, 128, (5, 6)).astype(np.int8)
    b = rng.integers(-128, 128, (6, 4)).astype(np.int8)
    u = rng.integers(0, 256, (6, 4)).astype(np.uint8)
    # int8 @ int8 wraps in int8, as NumPy; uint8 weights go to the reference interpreter.
    np.testing.assert_array_equal((bz.tensor(a) @ bz.tensor(b)).numpy(), a @ b)
    got = (bz.tensor(a).astype("int32") @ bz.tensor(u).astype("int32")).numpy()
    np.testing.assert_array_equal(got, a.astype(np.int32) @ u.astype(np.int32))
