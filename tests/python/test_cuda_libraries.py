"""matmul through cuBLASLt and conv2d through cuDNN on device="cuda" (Note
[CUDA library calls] in jit_cuda/executor.h), against NumPy in float64.

Every test runs twice: under host emulation (BRAZE_CUDA=emulate), where the
calls are planned as on a GPU (the same schedule, the same post-ops left to
kernels, the same refusals) and run by the CPU's library on the emulated
memory; and, marked `gpu`, on the driver, where cuBLASLt and cuDNN run them
(skipped without a GPU: written on a machine with none, never run there).
"""

import math
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import braze as bz
from test_library_calls import ACTIVATIONS, CONVS, MATMUL_SHAPES, np_conv2d, rand

FUSED = os.environ.get("BRAZE_BACKEND", "cpu") != "reference"
counts = pytest.mark.skipif(not FUSED, reason="BRAZE_BACKEND=reference makes no programs")

# Activations the matmul call applies itself (cuBLASLt's RELU and GELU epilogues).
IN_THE_CALL = {"relu", "maximum0", "gelu_tanh"}


@pytest.fixture
def mode(cuda_mode):
    return cuda_mode


def cuda(a):
    return bz.tensor(a, device="cuda")


DTYPES = {
    "float32": (np.float32, 1e-5),
    "float64": (np.float64, 1e-12),
    "float16": (np.float16, 2e-3),
    "bfloat16": (ml_dtypes.bfloat16, 2e-2),
}


def close(got, want, k, tol=1e-5):
    # Products summed over k terms: the error grows like sqrt(k) roundings.
    t = tol * math.sqrt(max(k, 1)) * 4
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=t, atol=t)


def steps(t):
    text = bz.explain(t)
    return text, int(text.split(" step(s)")[0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_on_cuda_matches_numpy(mode, sa, sb, dtype):
    np_dtype, tol = DTYPES[dtype]
    a, b = rand(sa, 1).astype(np_dtype), rand(sb, 2).astype(np_dtype)
    got = (cuda(a) @ cuda(b)).numpy()
    assert got.dtype == np.dtype(np_dtype)
    close(got, a.astype(np.float64) @ b.astype(np.float64), sa[-1], tol)


@pytest.mark.parametrize("layout", ["a.T", "b.T", "both.T", "batch_transposed", "offset", "broadcast_outer"])
def test_matmul_on_cuda_reads_views_in_place(mode, layout):
    a64, b64 = rand((4, 24, 40), 3), rand((4, 40, 24), 4)
    A, B = cuda(a64), cuda(b64)
    if layout == "a.T":
        x, y, want = cuda(a64[0].T.copy()).T, B[0], a64[0] @ b64[0]
    elif layout == "b.T":
        x, y, want = A[0], cuda(b64[0].T.copy()).T, a64[0] @ b64[0]
    elif layout == "both.T":
        x, y, want = B[1].T, A[1].T, b64[1].T @ a64[1].T
    elif layout == "batch_transposed":
        b2 = rand((40, 24, 6), 5)  # batch axis in the middle of memory on both sides
        x, y = bz.permute_dims(A, (1, 0, 2)), bz.permute_dims(cuda(b2), (1, 0, 2))[:, :, :4]
        want = np.transpose(a64, (1, 0, 2)) @ np.transpose(b2, (1, 0, 2))[:, :, :4]
    elif layout == "broadcast_outer":  # w broadcast over the outer batch axis only: a loop of strided calls
        a4, w3 = rand((2, 3, 5, 40), 6), rand((3, 40, 7), 7)
        x, y, want = cuda(a4), cuda(w3), a4 @ w3
    else:
        x, y, want = A[2, 5:9], B[3], a64[2, 5:9] @ b64[3]
    close((x @ y).numpy(), want.astype(np.float64), 40)


def test_what_cuda_libraries_cannot_read_is_copied_dense_first(mode):
    # Note [Library capabilities]: a step slice of a matrix's inner axis, a
    # broadcast constant, an OHWI weight: a copy kernel writes each dense.
    a, b = rand((4, 24, 40), 3), rand((4, 40, 24), 4)
    y = cuda(a)[:, ::2, 1::3] @ cuda(b)[:, 3:16, ::2]
    text, n = steps(y)
    if FUSED:
        assert n == 3 and text.count("Copy#") >= 2, text  # two copies, then the call
    close(y.numpy(), (a[:, ::2, 1::3] @ b[:, 3:16, ::2]).astype(np.float64), 13)
    ones = cuda(a[0]) @ bz.ones((40, 5), device="cuda")
    close(ones.numpy(), a[0].astype(np.float64) @ np.ones((40, 5)), 40)
    w = rand((3, 3, 3, 4), 5)  # stored OHWI
    x = rand((1, 4, 6, 6), 6)
    got = bz.conv2d(cuda(x), bz.permute_dims(cuda(w), (0, 3, 1, 2)))
    close(got.numpy(), np_conv2d(x, np.transpose(w, (0, 3, 1, 2)), (1, 1), (0, 0), (1, 1), 1), 36)


@pytest.mark.skipif(not FUSED, reason="BRAZE_BACKEND=reference computes every dtype itself, calling no library")
def test_integer_matmul_is_generated_code_on_cuda_and_mixed_floats_promote(mode):
    # No library multiplies int32 matrices: a sum of products, generated
    # (Note [Integer matmul as a sum]).
    a, b = np.arange(12, dtype=np.int32).reshape(3, 4), np.arange(8, dtype=np.int32).reshape(4, 2) - 3
    np.testing.assert_array_equal((cuda(a) @ cuda(b)).numpy(), a @ b)
    # and a convolution of integers, matmuls of its taps (Note [Convolutions as matmuls])
    x = np.arange(2 * 3 * 5 * 5, dtype=np.int32).reshape(2, 3, 5, 5) % 7 - 3
    w = np.arange(4 * 3 * 3 * 3, dtype=np.int32).reshape(4, 3, 3, 3) % 5 - 2
    want = np_conv2d(x.astype(np.float64), w.astype(np.float64), (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_array_equal(bz.conv2d(cuda(x), cuda(w), padding=1).numpy(), want.astype(np.int32))
    # Two float dtypes meet in their promotion before the call (Note
    # [Library operands share a dtype]): cuBLASLt runs it.
    mixed = cuda(np.ones((3, 4), np.float16)) @ cuda(np.ones((4, 2), np.float32))
    assert mixed.dtype == np.float32
    np.testing.assert_array_equal(mixed.numpy(), np.full((3, 2), 4.0, np.float32))


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("transposed", [False, True], ids=["w", "w.T"])
def test_bias_and_activation_on_cuda(mode, act, transposed):
    fn, ref = ACTIVATIONS[act]
    x, w, b = rand((33, 48), 9), rand((48, 20), 10), rand((20,), 11)
    W = cuda(np.ascontiguousarray(w.T)).T if transposed else cuda(w)
    y = fn(cuda(x) @ W + cuda(b))
    text, n = steps(y)
    if FUSED:
        assert "post-op add" in text, text
        if act in IN_THE_CALL:
            assert n == 1 and "not fused" not in text, text
        else:  # a kernel after the call, and explain() says why
            assert n == 2 and "cuBLASLt" in text.split("not fused:")[1], text
    bz.reset_stats()
    got = y.numpy()
    if FUSED:
        assert bz.stats()["kernels_launched"] == (1 if act in IN_THE_CALL else 2)
    close(got, ref(x.astype(np.float64) @ w + b), 48)


@counts
def test_scale_residual_bias_relu_is_one_call_on_cuda(mode):
    x, w, r, b = rand((2, 16, 24), 20), rand((24, 12), 21), rand((2, 16, 12), 22), rand((12,), 23)
    X, W, R, B = cuda(x), cuda(w), cuda(r), cuda(b)
    want = lambda s: np.maximum((x.astype(np.float64) @ w) * s + r + b, 0)
    for s in [0.5, 0.25, -2.0]:  # a scalar parameter: alpha, read at each run
        bz.reset_stats()
        got = bz.relu((X @ W) * s + R + B).numpy()
        assert bz.stats()["kernels_launched"] == 1, bz.stats()
        close(got, want(s), 24)
    got = ((X @ W) - R).numpy()  # beta = -1
    close(got, x.astype(np.float64) @ w - r, 24)


def test_two_products_summed_on_cuda(mode):
    # a @ a + a @ a.T: only the later call takes the add (it crashed when both did).
    a, x, h, wx, wh, b = (rand(s, 50 + i) for i, s in enumerate([(9, 9), (4, 9), (4, 7), (9, 7), (7, 7), (7,)]))
    A = cuda(a)
    close((A @ A + A @ A.T).numpy(), a.astype(np.float64) @ a + a.astype(np.float64) @ a.T, 9)
    y = bz.tanh(cuda(x) @ cuda(wx) + cuda(h) @ cuda(wh) + cuda(b))
    close(y.numpy(), np.tanh(x.astype(np.float64) @ wx + h.astype(np.float64) @ wh + b), 9)


@counts
def test_replays_allocate_only_their_output_on_cuda(mode):
    X, W, B = cuda(rand((64, 32), 24)), cuda(rand((32, 16), 25)), cuda(rand((16,), 26))
    bz.relu(X @ W + B).numpy()
    bz.reset_stats()
    for _ in range(3):
        bz.relu(X @ W + B).numpy()
    s = bz.stats()
    assert s["programs_replayed"] == 3 and s["library_primitives_created"] == 0, s
    assert s["allocations"] == 3 * 2, s  # per run: the device output and its host copy


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CONVS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv2d_on_cuda_matches_numpy(mode, xs, ws, stride, padding, dilation, groups, dtype):
    np_dtype, tol = DTYPES[dtype]
    pair = lambda v: (v, v) if isinstance(v, int) else v
    x, w = rand(xs, 5).astype(np_dtype), rand(ws, 6).astype(np_dtype)
    got = bz.conv2d(cuda(x), cuda(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    want = np_conv2d(x, w, pair(stride), pair(padding), pair(dilation), groups)
    close(got.numpy(), want, ws[1] * ws[2] * ws[3], tol)


def test_conv2d_on_cuda_reads_a_strided_input_and_leaves_bias_relu_to_a_kernel(mode):
    xm, w, b = rand((3, 2, 8, 12), 7), rand((4, 3, 3, 3), 8), rand((4,), 9)
    X = bz.permute_dims(cuda(xm), (1, 0, 2, 3))[:, :, :, ::2]  # N and C swapped in memory, every other column
    y = bz.relu(bz.conv2d(X, cuda(w), cuda(b), padding=1) * 0.5)
    text, n = steps(y)
    if FUSED:
        assert n == 2 and "cuDNN's convolution takes a scale" in text, text
    conv = np_conv2d(np.transpose(xm, (1, 0, 2, 3))[:, :, :, ::2], w, (1, 1), (1, 1), (1, 1), 1)
    close(y.numpy(), np.maximum((conv + b.reshape(4, 1, 1)) * 0.5, 0), 27)


@counts
def test_tf32_is_an_explicit_option_and_part_of_the_program(mode, monkeypatch):
    a, b = rand((64, 256), 30), rand((256, 32), 31)
    A, B = cuda(a), cuda(b)
    exact = (A @ B).numpy()
    close(exact, a.astype(np.float64) @ b, 256)  # float32 is float32 by default
    bz.reset_stats()
    monkeypatch.setenv("BRAZE_ALLOW_TF32", "1")
    fast = (A @ B).numpy()
    assert bz.stats()["programs_compiled"] == 1, bz.stats()
    # TF32 rounds the inputs to 10 mantissa bits: ~1e-3 relative per term.
    close(fast, a.astype(np.float64) @ b, 256, tol=1e-3)


@pytest.mark.gpu
def test_a_missing_cublaslt_is_a_clear_error_and_kernels_still_run(gpu):
    # cuBLASLt is loaded once per process: a fresh one that cannot find it.
    code = """
import numpy as np, braze as bz
x = bz.tensor(np.ones((4, 4), np.float32), device="cuda")
assert ((x * 2).numpy() == 2).all()
try:
    (x @ x).numpy()
except RuntimeError as e:
    print("ERROR:", e)
assert ((x + 1).numpy() == 2).all()
"""
    env = dict(os.environ, BRAZE_LIBCUBLASLT="/nonexistent/libcublasLt.so")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "matmul on cuda needs cuBLASLt" in r.stdout and "libcublasLt was not found" in r.stdout, r.stdout
    assert "BRAZE_LIBCUBLASLT" in r.stdout, r.stdout
