"""matmul and conv2d (oneDNN where braze is built with it, the reference
interpreter otherwise) against NumPy in float64, over shapes, strides,
transposed operands, batch broadcasting, groups and dilation; and the
epilogues that fuse into the call (Note [Library epilogues])."""

import ctypes
import math
import os
import re

import numpy as np
import pytest

import braze as bz
from conftest import BF16  # noqa: E402

_erf = np.vectorize(math.erf, otypes=[np.float64])


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(got, want, k):
    # float32 products summed over k terms: error grows like sqrt(k) ulps
    # of the magnitudes summed.
    tol = 1e-5 * math.sqrt(max(k, 1)) * 4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


MATMUL_SHAPES = [
    ((1, 1), (1, 1)),
    ((5, 7), (7, 3)),
    ((64, 33), (33, 17)),
    ((7,), (7, 4)),
    ((3, 7), (7,)),
    ((7,), (7,)),
    ((2, 5, 6), (6, 4)),
    ((5, 6), (3, 6, 4)),
    ((2, 1, 5, 6), (3, 6, 4)),
    ((4, 3, 5, 6), (4, 3, 6, 2)),
    # 128 rows or more: a row-major right operand is packed first (Note [Packed matmul weights])
    ((200, 30), (30, 17)),
    ((2, 130, 20), (20, 9)),
    ((130, 20), (3, 20, 9)),
    ((2, 1, 128, 8), (3, 8, 5)),
    ((3, 0), (0, 2)),  # an empty sum: zeros
    ((0, 4), (4, 2)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_matches_numpy(sa, sb):
    a, b = rand(sa, 1), rand(sb, 2)
    close((bz.tensor(a) @ bz.tensor(b)).numpy(), a.astype(np.float64) @ b.astype(np.float64), sa[-1])


@pytest.mark.parametrize("layout", ["a.T", "b.T", "both.T", "sliced", "batch_transposed", "offset"])
def test_matmul_reads_strided_operands(layout):
    a64, b64 = rand((4, 24, 40), 3), rand((4, 40, 24), 4)
    A, B = bz.tensor(a64), bz.tensor(b64)
    if layout == "a.T":
        x, y, want = bz.tensor(a64[0].T.copy()).T, B[0], a64[0] @ b64[0]
    elif layout == "b.T":
        x, y, want = A[0], bz.tensor(b64[0].T.copy()).T, a64[0] @ b64[0]
    elif layout == "both.T":
        x, y, want = B[1].T, A[1].T, b64[1].T @ a64[1].T
    elif layout == "sliced":
        x, y, want = A[:, ::2, 1::3], B[:, 3:16, ::2], a64[:, ::2, 1::3] @ b64[:, 3:16, ::2]
    elif layout == "batch_transposed":
        b2 = rand((40, 24, 6), 5)  # batch axis in the middle of memory on both sides
        x, y = bz.permute_dims(A, (1, 0, 2)), bz.permute_dims(bz.tensor(b2), (1, 0, 2))[:, :, :4]
        want = np.transpose(a64, (1, 0, 2)) @ np.transpose(b2, (1, 0, 2))[:, :, :4]
    else:
        x, y, want = A[2, 5:9], B[3], a64[2, 5:9] @ b64[3]
    close((x @ y).numpy(), want.astype(np.float64), 40)


def np_conv2d(x, w, stride, padding, dilation, groups):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    oc, icg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, oc, oh, ow))
    ocg = oc // groups
    for g in range(groups):
        xs = xp[:, g * icg:(g + 1) * icg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dilation[0], j * dilation[1]
                patch = xs[:, :, r0:r0 + stride[0] * (oh - 1) + 1:stride[0], c0:c0 + stride[1] * (ow - 1) + 1:stride[1]]
                out[:, g * ocg:(g + 1) * ocg] += np.einsum("nchw,oc->nohw", patch, w[g * ocg:(g + 1) * ocg, :, i, j])
    return out


CONVS = [
    # x shape, w shape, stride, padding, dilation, groups
    ((1, 1, 5, 5), (1, 1, 3, 3), 1, 0, 1, 1),
    ((2, 3, 9, 11), (4, 3, 3, 3), 1, 1, 1, 1),
    ((2, 4, 9, 9), (6, 2, 3, 3), 2, 1, 1, 2),
    ((1, 6, 10, 8), (6, 1, 3, 3), 1, 1, 1, 6),   # depthwise
    ((1, 3, 12, 12), (5, 3, 3, 3), 1, 2, 2, 1),  # dilation
    ((2, 3, 7, 9), (4, 3, 1, 3), (2, 1), (0, 1), (1, 2), 1),
    ((1, 2, 5, 5), (3, 2, 2, 2), 2, 0, 1, 1),    # stride leaves an input row unread
]


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CONVS, ids=str)
def test_conv2d_matches_numpy(xs, ws, stride, padding, dilation, groups):
    pair = lambda v: (v, v) if isinstance(v, int) else v
    x, w = rand(xs, 5), rand(ws, 6)
    got = bz.conv2d(bz.tensor(x), bz.tensor(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    want = np_conv2d(x, w, pair(stride), pair(padding), pair(dilation), groups)
    close(got.numpy(), want, ws[1] * ws[2] * ws[3])


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.int16, np.int64, np.uint8], ids=str)
@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CONVS, ids=str)
def test_conv2d_of_what_onednn_does_not_run(xs, ws, stride, padding, dilation, groups, dtype):
    """float64 and integer convolutions are matmuls of the kernel's taps
    (Note [Convolutions as matmuls]): BLAS calls and sums of products;
    float16 ones oneDNN's float32 convolution (Note [Half library calls in
    float32]); never the reference interpreter. Integers wrap as NumPy's
    sums do; float16 integers sum exactly in float32 and round once."""
    pair = lambda v: (v, v) if isinstance(v, int) else v
    rng = np.random.default_rng(11)
    if dtype == np.float64:
        x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    elif dtype == np.float16:
        x, w = rng.integers(-8, 8, xs).astype(dtype), rng.integers(-8, 8, ws).astype(dtype)
    else:
        lo = 0 if np.dtype(dtype).kind == "u" else -60
        x, w = rng.integers(lo, 60, xs).astype(dtype), rng.integers(lo, 60, ws).astype(dtype)
    before = bz.stats()
    got = bz.conv2d(bz.tensor(x), bz.tensor(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    got = got.numpy()
    want = np_conv2d(x, w, pair(stride), pair(padding), pair(dilation), groups)  # exact in float64 for these integers
    assert got.dtype == dtype
    if dtype == np.float64:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    elif dtype == np.float16:
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        np.testing.assert_array_equal(got, want.astype(np.int64).astype(dtype))
    after = bz.stats()
    if os.environ.get("BRAZE_BACKEND") != "reference":
        assert after["library_calls_reference"] == before["library_calls_reference"]
        assert after["kernels_interpreted"] == before["kernels_interpreted"]


def test_conv2d_reads_a_strided_input():
    xm, w = rand((3, 2, 8, 12), 7), rand((4, 3, 3, 3), 8)
    X = bz.permute_dims(bz.tensor(xm), (1, 0, 2, 3))  # N=2, C=3, with N and C swapped in memory
    want = np_conv2d(np.transpose(xm, (1, 0, 2, 3))[:, :, :, ::2], w, (1, 1), (1, 1), (1, 1), 1)
    close(bz.conv2d(X[:, :, :, ::2], bz.tensor(w), padding=1).numpy(), want, 27)


# --- epilogues ----------------------------------------------------------------------


def np_gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


ACTIVATIONS = {
    "relu": (bz.relu, lambda v: np.maximum(v, 0)),
    "maximum0": (lambda t: bz.maximum(t, 0.0), lambda v: np.maximum(v, 0)),
    "gelu": (bz.gelu, np_gelu),
    "gelu_tanh": (lambda t: bz.gelu(t, approximate="tanh"),
                  lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))),
    "silu": (bz.silu, lambda v: v / (1 + np.exp(-v))),
    "sigmoid": (bz.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
    "tanh": (bz.tanh, np.tanh),
}


# BRAZE_BACKEND=reference evaluates whole graphs on the oracle: no steps to count.
FUSED = os.environ.get("BRAZE_BACKEND", "cpu") != "reference"


def library_steps(t):
    text = bz.explain(t)
    return text, int(text.split(" step(s)")[0])


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("transposed", [False, True], ids=["w", "w.T"])
def test_bias_activation_is_one_library_call(act, transposed):
    fn, ref = ACTIVATIONS[act]
    x, w, b = rand((33, 48), 9), rand((48, 20), 10), rand((20,), 11)
    W = bz.tensor(np.ascontiguousarray(w.T)).T if transposed else bz.tensor(w)
    y = fn(bz.tensor(x) @ W + bz.tensor(b))
    text, steps = library_steps(y)
    assert steps == 1 and "0 fused kernel(s), 1 library call(s)" in text, text
    assert "post-op add" in text and "not fused" not in text, text
    bz.reset_stats()
    got = y.numpy()
    assert bz.stats()["kernels_launched"] == (1 if FUSED else 0)
    close(got, ref(x.astype(np.float64) @ w + b), 48)


@pytest.mark.parametrize("dtype", [np.float32, "bfloat16"])
def test_two_products_summed_are_two_calls_and_the_later_takes_the_add(dtype):
    # a @ a + a @ a.T and an RNN cell tanh(x @ Wx + h @ Wh + b): both
    # calls' chains reach the add; only the later one may take it.
    import ml_dtypes
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    a, x, h = rand((9, 9), 40).astype(dt), rand((4, 9), 41).astype(dt), rand((4, 7), 42).astype(dt)
    wx, wh, b = rand((9, 7), 43).astype(dt), rand((7, 7), 44).astype(dt), rand((7,), 45).astype(dt)
    A = bz.tensor(a)
    f = lambda v: np.asarray(v, np.float64)
    cases = [
        (A @ A + A @ A.T, f(a) @ f(a) + f(a) @ f(a).T, 9),
        (bz.tanh(bz.tensor(x) @ bz.tensor(wx) + bz.tensor(h) @ bz.tensor(wh) + bz.tensor(b)),
         np.tanh(f(x) @ f(wx) + f(h) @ f(wh) + f(b)), 9),
    ]
    for y, want, k in cases:
        text, steps = library_steps(y)
        assert steps == 2 and "is computed after this library call" in text, text
        got = np.asarray(y.numpy(), np.float64)
        if dtype == "bfloat16":
            np.testing.assert_allclose(got, want, rtol=0.05, atol=0.05 * math.sqrt(k))
        else:
            close(got, want, k)


def test_empty_sum_with_epilogue():
    # K = 0: the product is zeros, and the bias and relu still apply.
    b = rand((6,), 34)
    y = bz.relu(bz.tensor(np.ones((5, 0), np.float32)) @ bz.tensor(np.ones((0, 6), np.float32)) + bz.tensor(b))
    np.testing.assert_array_equal(y.numpy(), np.broadcast_to(np.maximum(b, 0), (5, 6)))


def test_packed_operand_with_epilogue():
    x, w, b, r = rand((2, 160, 24), 30), rand((24, 40), 31), rand((40,), 32), rand((2, 160, 40), 33)
    y = bz.silu(bz.tensor(x) @ bz.tensor(w) + bz.tensor(b)) + bz.tensor(r)
    v = x.astype(np.float64) @ w + b
    close(y.numpy(), v / (1 + np.exp(-v)) + r, 24)


def test_relu_of_affine_is_one_call_with_no_elementwise_kernel():
    x, w, b = rand((16, 32), 12), rand((32, 8), 13), rand((8,), 14)
    y = bz.relu(bz.tensor(x) @ bz.tensor(w) + bz.tensor(b))
    text = bz.explain(y)
    assert text.startswith("1 step(s): 0 fused kernel(s), 1 library call(s)"), text
    assert "post-op relu" in text
    bz.reset_stats()
    got = y.numpy()
    s = bz.stats()
    assert s["kernels_launched"] == (1 if FUSED else 0) and s["kernels_compiled"] == 0, s
    close(got, np.maximum(x.astype(np.float64) @ w + b, 0), 32)


def heads(t, h):  # [B, T, D] -> [B, H, T, D / H], a view
    b, n, d = t.shape
    return bz.permute_dims(t.reshape((b, n, h, d // h)), (0, 2, 1, 3))


def np_heads(t, h):
    b, n, d = t.shape
    return t.reshape(b, n, h, d // h).transpose(0, 2, 1, 3)


def test_bias_before_a_head_reshape_stays_on_the_matmul():
    # The views of heads() stay above the bias add (Note [Views sink to the
    # leaves]), so each projection is one call with its bias as a post-op and
    # the scores read both through the heads view: three calls, no kernel.
    x, wq, wk, bq, bk = rand((2, 16, 32), 40), rand((32, 32), 41), rand((32, 32), 42), rand((32,), 43), rand((32,), 44)
    X = bz.tensor(x)
    q, k = heads(X @ bz.tensor(wq) + bz.tensor(bq), 4), heads(X @ bz.tensor(wk) + bz.tensor(bk), 4)
    scores = q @ k.mT
    text, steps = library_steps(scores)
    assert text.startswith("3 step(s): 0 fused kernel(s), 3 library call(s)"), text
    assert text.count("post-op add") == 2, text
    x64 = x.astype(np.float64)
    want = np_heads(x64 @ wq + bq, 4) @ np_heads(x64 @ wk + bk, 4).transpose(0, 1, 3, 2)
    close(scores.numpy(), want, 32)


def test_element_wise_after_a_head_reshape_reads_the_epilogue_through_the_view():
    # gelu and the bias join the call; the scale after the view is a kernel
    # reading the call's result through the heads view, as before.
    x, w, b = rand((2, 8, 16), 45), rand((16, 16), 46), rand((16,), 47)
    y = heads(bz.gelu(bz.tensor(x) @ bz.tensor(w) + bz.tensor(b)), 2) * 3.0
    text, steps = library_steps(y)
    assert text.startswith("2 step(s): 1 fused kernel(s), 1 library call(s)"), text
    assert "post-op add" in text and "post-op gelu" in text, text
    v = x.astype(np.float64) @ w + b
    close(y.numpy(), np_heads(0.5 * v * (1 + _erf(v / math.sqrt(2))), 2) * 3.0, 16)


def test_a_head_view_of_a_shared_product_still_fuses_into_its_readers():
    # The product is read twice, so no epilogue: views sink to the leaves as
    # for any kernel, and each head-view add is one kernel reading the call.
    x, w, b = rand((2, 8, 16), 48), rand((16, 16), 49), rand((16,), 50)
    def both(p):  # p is no variable of the caller's (Note [Held values are kept])
        return heads(p + bz.tensor(b), 2), p * 2.0
    y, z = both(bz.tensor(x) @ bz.tensor(w))
    text = bz.explain(y, z)
    assert text.startswith("3 step(s): 2 fused kernel(s), 1 library call(s)"), text
    p64 = x.astype(np.float64) @ w
    gy, gz = bz.realize(y, z)
    close(gy.numpy(), np_heads(p64 + b, 2), 16)
    close(gz.numpy(), p64 * 2.0, 16)


def test_conv_bias_relu_fuse_and_the_residual_follows():
    """Note [Convolution bias]: the bias is oneDNN's bias argument and relu a
    post-op; a residual add, which oneDNN's gemm convolution applies slowly,
    is a kernel after the call."""
    x, w, b = rand((2, 4, 8, 8), 15), rand((4, 4, 3, 3), 16), rand((4,), 17)
    X = bz.tensor(x)
    y = bz.relu(bz.conv2d(X, bz.tensor(w), bz.tensor(b), padding=1))
    assert bz.explain(y).startswith("1 step(s): 0 fused kernel(s), 1 library call(s)"), bz.explain(y)
    z = bz.relu(bz.conv2d(X, bz.tensor(w), bz.tensor(b), padding=1)) + X  # y, held, would be kept: a result
    text = bz.explain(z)
    assert text.startswith("2 step(s): 1 fused kernel(s), 1 library call(s)"), text
    assert "its other post-ops ran on a slow path" in text, text
    want = np.maximum(np_conv2d(x, w, (1, 1), (1, 1), (1, 1), 1) + b.reshape(4, 1, 1), 0)
    close(y.numpy(), want, 36)
    close(z.numpy(), want + x, 36)


def test_unfused_edges_say_why():
    x, w = rand((8, 8), 18), rand((8, 8), 19)
    X, W = bz.tensor(x), bz.tensor(w)
    y = bz.exp(X @ W)
    text = bz.explain(y)
    assert "Exp is not a post-op the library applies" in text, text
    z = (lambda h: bz.relu(h) + bz.sum(h))(X @ W)  # h read twice: the library must write it
    assert "the value is read by 2 ops" in bz.explain(z)
    h = X @ W  # held: realize keeps it (Note [Held values are kept]), and explain says so
    assert "the value is also a result, so the library writes it" in bz.explain(bz.exp(h))
    np.testing.assert_allclose(y.numpy(), np.exp(x.astype(np.float64) @ w), rtol=1e-4)


def test_primitives_are_created_once_per_shape():
    x, w = rand((32, 64), 20), rand((64, 16), 21)
    before = bz.stats()
    for k in range(3):
        (bz.tensor(x + k) @ bz.tensor(w)).numpy()
    after = bz.stats()
    if not FUSED:
        pytest.skip("BRAZE_BACKEND=reference: no library calls")
    if after["library_calls_reference"] > before["library_calls_reference"]:
        pytest.skip("braze is built without oneDNN: matmul runs on the reference interpreter")
    created = after["library_primitives_created"] - before["library_primitives_created"]
    assert created <= 1  # 0 when an earlier test made this shape
    (bz.tensor(x) @ bz.tensor(w[:, :8])).numpy()  # a new shape: a new primitive
    assert bz.stats()["library_primitives_created"] - before["library_primitives_created"] == created + 1


@pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference", reason="the reference backend makes no programs")
def test_a_library_calls_workspace_is_in_the_arena_and_explained():
    # 256 rows and a row-major right operand computed by a kernel: oneDNN
    # reads it packed, a copy that lives in the program's arena for that
    # step only (Note [Step workspaces]). The second call's weight is an
    # input: packed once and kept (Note [Kept packed weights]).
    x, w, v = rand((256, 64), 21), rand((64, 96), 22), rand((96, 8), 23)
    tx, tw, tv = bz.tensor(x), bz.tensor(w), bz.tensor(v)
    before = bz.stats()
    (tx @ tw).numpy()
    if bz.stats()["library_calls_reference"] > before["library_calls_reference"]:
        pytest.skip("braze is built without oneDNN: no workspaces")
    y = lambda: bz.tanh(tx @ bz.exp(tw * 0.5)) @ tv
    with open(os.devnull, "w") as quiet:
        text = bz.explain(y(), file=quiet)
    workspace_lines = [line for line in text.splitlines() if " workspace " in line]
    assert any("steps 1..1" in line for line in workspace_lines), text
    assert all(re.search(r"steps (\d+)\.\.\1 ", line) for line in workspace_lines), text  # its own step only
    y().numpy()
    before = bz.stats()
    got = [y().numpy() for _ in range(3)]
    assert bz.stats()["allocations"] - before["allocations"] == 3  # one output per run, nothing else
    want = np.tanh(x.astype(np.float64) @ np.exp(w.astype(np.float64) * 0.5)) @ v
    for g in got:
        close(g, want, 96)


def test_attention_scale_is_a_post_op_read_at_run_time():
    # (q @ k.T) * s: s is a scalar parameter (Note [Scalar parameters]), a
    # oneDNN binary post-op reading it from memory, so every value replays
    # the same program and primitive with its own value.
    q, k = rand((2, 4, 32, 16), 40), rand((2, 4, 32, 16), 41)
    tq, tk = bz.tensor(q), bz.tensor(k)
    text, steps = library_steps((tq @ tk.mT) * 0.25)
    # explain shows what realize runs (Note [One schedule]): the scale is
    # the parameter, read by the post-op at run time.
    assert steps == 1 and "post-op mul Input#" in text, text
    before = bz.stats()
    for s in [0.25, 0.125, -3.5, 1 / math.sqrt(16)]:
        bz.reset_stats()
        got = ((tq @ tk.mT) * s).numpy()
        if FUSED:
            assert bz.stats()["kernels_launched"] == 1, bz.stats()  # no element-wise kernel
        close(got, (q.astype(np.float64) @ k.transpose(0, 1, 3, 2)) * s, 16)
    # Special values stay constants: eltwise_linear, two in a row folded into one.
    r = q.astype(np.float64) @ k.transpose(0, 1, 3, 2)
    close(((tq @ tk.mT) * 2.0 + 2.0).numpy(), r * 2 + 2, 16)
    close(((tq @ tk.mT) * 0.5 + 2.0).numpy(), r * 0.5 + 2, 16)
    divided = (tq @ tk.mT) / 3.0
    close(divided.numpy(), (q.astype(np.float64) @ k.transpose(0, 1, 3, 2)) / 3.0, 16)


def test_a_kept_packed_weight_follows_copyto_and_new_weights():
    # 200 rows and a row-major weight that is an input: the program packs it
    # once and keeps it (Note [Kept packed weights]); an in-place write or
    # another weight of the same shape is packed again.
    x, w, w2 = rand((200, 24), 50), rand((24, 40), 51), rand((24, 40), 52)
    tx, tw = bz.tensor(x), bz.tensor(w)
    for _ in range(2):
        close((tx @ tw).numpy(), x.astype(np.float64) @ w, 24)
    bz.copyto(tw, w2)
    close((tx @ tw).numpy(), x.astype(np.float64) @ w2, 24)
    close((tx @ bz.tensor(w)).numpy(), x.astype(np.float64) @ w, 24)
    step = bz.jit(lambda a, b: a @ b)
    out = step(tx, tw)
    bz.copyto(tw, w)
    step(tx, tw, out=out)
    close(out.numpy(), x.astype(np.float64) @ w, 24)


def test_a_weight_updated_in_place_by_its_own_step_is_packed_again():
    # w = step(w, out=w): the step reads w packed (200 rows) while its new
    # value is staged; the next call must see the new w, not the kept copy.
    x, w = rand((200, 16), 60) / 4, rand((16, 12), 61)

    @bz.jit
    def step(w, x):
        return w - 0.05 * (x.T @ (x @ w))

    tw, tx = bz.tensor(w), bz.tensor(x)
    want = w.astype(np.float64)
    for _ in range(4):
        step(tw, tx, out=tw)
        want = want - 0.05 * (x.T @ (x @ want))
    close(tw.numpy(), want, 200)


def test_a_weight_written_through_dlpack_is_packed_again():
    # A storage handed out by __dlpack__ can be written by its consumer
    # behind braze's back: a kept packed copy of it is never trusted
    # (Note [Storage versions]).
    x, w, w2 = rand((200, 24), 70), rand((24, 40), 71), rand((24, 40), 72)
    tx, tw = bz.tensor(x), bz.tensor(w)
    close((tx @ tw).numpy(), x.astype(np.float64) @ w, 24)
    shared = np.from_dlpack(tw)  # read-only in NumPy; PyTorch's would be writable:
    ctypes.memmove(shared.ctypes.data, np.ascontiguousarray(w2, np.float32).ctypes.data, shared.nbytes)
    close((tx @ tw).numpy(), x.astype(np.float64) @ w2, 24)


# --- float64: a BLAS call (jit_cpu/blas_matmul.h) ------------------------------

needs_blas = pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference" or not bz._core._library_calls()["blas"],
                                reason="braze built without oneDNN and OpenBLAS, or the reference backend")


def f64(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


@needs_blas
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_float64_matmul_is_a_blas_call_matching_numpy(sa, sb):
    # Issue 22: float64 matmul ran on the reference interpreter, silently
    # (256x256 A @ A: 144 ms against NumPy's 0.67).
    a, b = f64(sa, 1), f64(sb, 2)
    before = bz.stats()["library_calls_reference"]
    got = (bz.tensor(a) @ bz.tensor(b)).numpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)
    empty = 0 in sa or 0 in sb  # an empty sum is written by the reference: nothing to compute
    assert empty or bz.stats()["library_calls_reference"] == before


@needs_blas
@pytest.mark.parametrize("layout", ["a.T", "b.T", "both.T", "sliced", "stepped", "negative", "broadcast_batch"])
def test_float64_matmul_reads_views_or_copies_them(layout):
    a, b = f64((3, 9, 12), 3), f64((3, 12, 9), 4)
    A, B = bz.tensor(a), bz.tensor(b)
    x, y, want = {
        "a.T": lambda: (bz.permute_dims(A, (0, 2, 1))[:, :9, :], B[:, :9, :], np.transpose(a, (0, 2, 1))[:, :9] @ b[:, :9]),
        "b.T": lambda: (A[:, :, :9], bz.permute_dims(B, (0, 2, 1)), a[:, :, :9] @ np.transpose(b, (0, 2, 1))),
        "both.T": lambda: (A.mT, B.mT, np.swapaxes(a, 1, 2) @ np.swapaxes(b, 1, 2)),
        "sliced": lambda: (A[1, 2:7, 1:10], B[2, 1:10, :5], a[1, 2:7, 1:10] @ b[2, 1:10, :5]),
        "stepped": lambda: (A[0, :, ::2], B[0, ::2, :], a[0, :, ::2] @ b[0, ::2, :]),  # a copy first
        "negative": lambda: (A[0, ::-1], B[0], a[0, ::-1] @ b[0]),
        "broadcast_batch": lambda: (A[None, :, :, :], B[0], a[None] @ b[0]),
    }[layout]()
    before = bz.stats()["library_calls_reference"]
    np.testing.assert_allclose((x @ y).numpy(), want, rtol=1e-12, atol=1e-12)
    assert bz.stats()["library_calls_reference"] == before


@needs_blas
def test_float64_matmul_epilogue_is_a_generated_kernel_after_the_call():
    x, w, b = f64((17, 30), 5), f64((30, 11), 6), f64(11, 7)
    text = bz.explain(bz.relu(bz.tensor(x) @ bz.tensor(w) + bz.tensor(b)))
    assert "BLAS call, which applies no post-ops" in text, text
    before = bz.stats()
    got = bz.gelu(bz.tensor(x) @ bz.tensor(w) + bz.tensor(b)).numpy()
    np.testing.assert_allclose(got, 0.5 * (x @ w + b) * (1 + _erf((x @ w + b) / np.sqrt(2))), rtol=1e-12, atol=1e-12)
    after = bz.stats()
    assert after["library_calls_reference"] == before["library_calls_reference"]
    assert after["kernels_interpreted"] == before["kernels_interpreted"]
    assert after["kernels_launched"] - before["kernels_launched"] == 2  # the call and one fused kernel


@needs_blas
def test_float64_matmul_of_special_values():
    a = np.array([[np.inf, 1.0], [np.nan, -0.0], [-0.0, -0.0]])
    b = np.array([[0.0, 1.0], [2.0, -0.0]])
    got = (bz.tensor(a) @ bz.tensor(b)).numpy()
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(a @ b))
        np.testing.assert_array_equal(got[~np.isnan(got)], (a @ b)[~np.isnan(a @ b)])


@needs_blas
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["Av", "A.T v", "vA", "v A.T", "strided v", "sliced A", "dot", "A (v as [k, 1])",
                                  "row-of-one A"])
def test_matrix_vector_products_are_blas_gemv_calls(case, dtype):
    # cpu_blas_matmul: oneDNN 2.6 ran [1024, 1024] @ [1024, 1] in float32
    # with a matrix kernel, 0.73 ms where NumPy's sgemv takes 0.03; float64
    # as a dgemm with one column, 3x NumPy's dgemv (blas_matmul.cpp).
    A, v = rand((40, 24), 8).astype(dtype), rand((48,), 9).astype(dtype)
    a, x = bz.tensor(A), bz.tensor(v)
    got, want = {
        "Av": lambda: (a @ x[:24], A @ v[:24]),
        "A.T v": lambda: (a.T @ x[:40], A.T @ v[:40]),
        "vA": lambda: (x[:40] @ a, v[:40] @ A),
        "v A.T": lambda: (x[:24] @ a.T, v[:24] @ A.T),
        "strided v": lambda: (a @ x[::2], A @ v[::2]),
        "sliced A": lambda: (a[3:10, 2:20] @ x[:18], A[3:10, 2:20] @ v[:18]),
        "dot": lambda: (x[:24] @ x[24:], v[:24] @ v[24:]),
        "A (v as [k, 1])": lambda: (a @ bz.reshape(x[:24], (24, 1)), A @ v[:24].reshape(24, 1)),
        "row-of-one A": lambda: (a[:1] @ bz.reshape(x[:24], (24, 1)), A[:1] @ v[:24].reshape(24, 1)),
    }[case]()
    before = bz.stats()["library_calls_reference"]
    close(got.numpy(), want.astype(np.float64), 40)
    assert bz.stats()["library_calls_reference"] == before


@needs_blas
def test_a_float32_matrix_vector_epilogue_fuses_with_what_follows():
    A, v, b = rand((64, 32), 10), rand((32, 1), 11), rand((64, 1), 12)
    text = bz.explain(bz.tanh(bz.tensor(A) @ bz.tensor(v) + bz.tensor(b)).sum())
    assert "float32 matrix-vector product is a BLAS call" in text, text
    before = bz.stats()["kernels_launched"]
    got = float(bz.tanh(bz.tensor(A) @ bz.tensor(v) + bz.tensor(b)).sum())
    assert bz.stats()["kernels_launched"] - before == 2  # the call, then bias, tanh and sum in one kernel
    assert got == pytest.approx(float(np.tanh(A.astype(np.float64) @ v + b).sum()), rel=1e-4, abs=1e-4)


@pytest.mark.parametrize("da, db", [(np.float32, np.float64), (BF16, np.float32), (np.float64, np.float32)],
                         ids=["f32@f64", "bf16@f32", "f64@f32"])
def test_operands_of_two_dtypes_meet_in_their_promotion(da, db):
    """Note [Library operands share a dtype]: the narrower operand is cast
    first, so the call goes to a library, never to the reference."""
    if os.environ.get("BRAZE_BACKEND") == "reference":
        pytest.skip("the reference backend runs every call itself")
    if np.float64 in (da, db) and not bz._core._library_calls()["blas"]:
        pytest.skip("a build without OpenBLAS runs float64 matmul on the reference")
    if BF16 in (da, db) and not bz._core._library_calls()["bfloat16"]:
        pytest.skip("oneDNN here has no bfloat16 matmul")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 24)).astype(da)
    b = rng.standard_normal((24, 8)).astype(db)
    bz.reset_stats()
    got = bz.tensor(a) @ bz.tensor(b)
    want_dtype = np.promote_types(np.float32 if da == BF16 else da, np.float32 if db == BF16 else db)
    assert got.dtype == want_dtype
    np.testing.assert_allclose(got.numpy(), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-2 if BF16 in (da, db) else 1e-5, atol=1e-2 if BF16 in (da, db) else 1e-5)
    assert bz.stats()["library_calls_reference"] == 0, bz.stats()


@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((2, 4, 33), (33, 17)), ((130, 70), (70, 90)), ((9,), (9, 4))],
                         ids=str)
def test_float16_matmul_is_a_float32_call(sa, sb):
    """Note [Half library calls in float32]: oneDNN's float32 matmul between
    casts, its epilogue in the kernel after it, no reference interpreter;
    against float64 sums rounded once to float16 (the reference's), within
    float32 rounding of the sum."""
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal(sa).astype(np.float16), rng.standard_normal(sb).astype(np.float16)
    before = bz.stats()
    got = (bz.tensor(a) @ bz.tensor(b) + np.float16(0.5)).numpy()
    after = bz.stats()
    assert got.dtype == np.float16
    want = (a.astype(np.float64) @ b.astype(np.float64) + 0.5).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3)
    if os.environ.get("BRAZE_BACKEND") != "reference":
        assert after["library_calls_reference"] == before["library_calls_reference"]
        assert after["kernels_interpreted"] == before["kernels_interpreted"]
