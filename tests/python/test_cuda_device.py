"""Targeted device="cuda" cases, each against NumPy in float64 on fresh
random data: the paths a real GPU exercises that the op sweep does not
(vector widths and scalar tails, misaligned views and gathers, row and
column reductions of every shape, integer wrapping, cuBLASLt epilogues,
cuDNN on a misaligned view, replays through out= and copyto, several
threads at once, more than 2^31 elements, DLPack into PyTorch and CuPy, a
clean exit). Every case runs under host emulation at small sizes and,
marked gpu, on the driver at sizes that fill the index math
(conftest.cuda_mode); the cases that only mean something on a GPU are
marked gpu alone.
"""

import os
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

import braze as bz

pytestmark = pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference",
                                reason="BRAZE_BACKEND=reference runs no device programs")


@pytest.fixture
def big(cuda_mode):
    """Whether sizes are a GPU's (True) or emulation's (False)."""
    return cuda_mode == "gpu"


@pytest.fixture
def rng():
    return np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def dev(a):
    return bz.tensor(a, device="cuda")


def close(got, want, rtol, atol=None):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert not np.isnan(got[~np.isnan(want)]).any(), "NaN where the reference has none"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol if atol is None else atol)


def test_elementwise_vector_and_scalar_tail(big, rng):
    n = (1 << 24) + 3 if big else (1 << 12) + 3  # one axis of odd length: vectors, then a scalar tail
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    close((bz.exp(dev(x)) * dev(y) + 1.0).numpy(), np.exp(x.astype(np.float64)) * y + 1, 1e-5)


@pytest.mark.parametrize("dt,tol", [(np.float16, 2e-3), (ml_dtypes.bfloat16, 1.6e-2)], ids=["float16", "bfloat16"])
def test_half_floats_eight_a_thread_with_row_and_column_broadcasts(big, rng, dt, tol):
    r = 4096 if big else 64
    x = rng.standard_normal((r, 520)).astype(dt)
    b = rng.standard_normal((1, 520)).astype(dt)
    s = rng.standard_normal((r, 1)).astype(dt)
    got = (bz.tanh(dev(x) + dev(b)) * dev(s)).numpy()
    close(got, np.tanh(x.astype(np.float64) + b.astype(np.float64)) * s.astype(np.float64), tol, tol)


def test_misaligned_views_and_transposed_reads(big, rng):
    r = 4096 if big else 64
    x = rng.standard_normal((r, 1031), np.float32)
    X = dev(x)
    close((X[1:, 3:] * 2.0 + 1.0).numpy(), x[1:, 3:].astype(np.float64) * 2 + 1, 1e-6)
    sq = rng.standard_normal((r // 2, r // 2), np.float32)
    S = dev(sq)
    close((S.T + S).numpy(), sq.T.astype(np.float64) + sq, 1e-6)
    close((X[:, ::-2] - 1.0).numpy(), x[:, ::-2].astype(np.float64) - 1, 1e-6)


@pytest.mark.parametrize("length", [1000, 1024, 5000])
def test_softmax_layer_norm_rows(big, rng, length):
    x = rng.standard_normal((1024 if big else 16, length), np.float32) * 4
    e = np.exp(x - x.max(-1, keepdims=True))
    close(bz.softmax(dev(x), axis=-1).numpy(), e / e.sum(-1, keepdims=True), 1e-5, 1e-7)
    g, b = rng.standard_normal(length, np.float32), rng.standard_normal(length, np.float32)
    x64 = x.astype(np.float64)
    c = x64 - x64.mean(-1, keepdims=True)
    want = c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g + b
    close(bz.layer_norm(dev(x), dev(g), dev(b), eps=1e-5).numpy(), want, 1e-4, 1e-4)


@pytest.mark.parametrize("rows,cols", [(100000, 7), (20000, 40), (1000, 20000)], ids=["long7", "long40", "wide"])
def test_column_reductions_split_columns_and_argmax(big, rng, rows, cols):
    if not big:
        rows, cols = min(rows, 3000), min(cols, 300)
    x = rng.standard_normal((rows, cols), np.float32)
    X = dev(x)
    close(X.sum(axis=0).numpy(), x.astype(np.float64).sum(0), 1e-4, 1e-3)
    close(bz.max(X, axis=0).numpy(), x.max(0), 0)
    close(bz.var(X, axis=0).numpy(), x.astype(np.float64).var(0), 1e-4, 1e-4)
    assert (bz.argmax(X, axis=0).numpy() == x.argmax(0)).all(), "argmax axis 0"
    assert (bz.argmax(X, axis=1).numpy() == x.argmax(1)).all(), "argmax axis 1"


def test_a_nan_in_a_column_reaches_its_max(cuda_mode, rng):
    x = rng.standard_normal((3000, 9), np.float32)
    x[1234, 3] = np.nan
    got = bz.max(dev(x), axis=0).numpy()
    assert np.isnan(got[3]) and not np.isnan(np.delete(got, 3)).any(), got


def test_integers_wrap(big, rng):
    r = 4096 if big else 64
    a = rng.integers(-2**40, 2**40, (r, 333), dtype=np.int64)
    b = rng.integers(1, 1000, (r, 333), dtype=np.int64)
    A, B = dev(a), dev(b)
    assert ((A * B + 7).numpy() == a * b + 7).all()
    assert (A.sum(axis=1).numpy() == a.sum(1)).all()
    c = rng.integers(-128, 127, (r, 4096), dtype=np.int8)
    assert ((dev(c) + dev(c)).numpy() == (c + c)).all(), "int8 wraps"
    assert ((dev(c) > 0).numpy() == (c > 0)).all()


def test_float64_math(big, rng):
    x = rng.standard_normal((4096 if big else 64, 777))
    close((bz.sin(dev(x)) * bz.exp(dev(x) * 0.5)).numpy(), np.sin(x) * np.exp(x * 0.5), 1e-13, 1e-13)


@pytest.mark.parametrize("dt,tol", [(np.float32, 1e-5), (np.float16, 2e-3), (ml_dtypes.bfloat16, 2e-2)],
                         ids=["float32", "float16", "bfloat16"])
def test_matmul_epilogues_and_transposed_weights(big, rng, dt, tol):
    m, k, n = (512, 768, 384) if big else (64, 96, 48)
    x = rng.standard_normal((m, k)).astype(dt)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(dt)
    b = rng.standard_normal(n).astype(dt)
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    t = max(tol * np.sqrt(k) * 4, tol)
    close(bz.relu(dev(x) @ dev(w) + dev(b)).numpy(), np.maximum(x64 @ w64 + b64, 0), t, t)
    z = x64 @ w64 + b64
    close(bz.gelu(dev(x) @ dev(w) + dev(b), approximate="tanh").numpy(),
          0.5 * z * (1 + np.tanh(0.7978845608028654 * (z + 0.044715 * z ** 3))), t, t)
    close((dev(x) @ dev(np.ascontiguousarray(w.T)).T).numpy(), x64 @ w64, t, t)


def test_batched_and_broadcast_matmul(cuda_mode, rng):
    xb = rng.standard_normal((4, 33, 65), np.float32)
    wb = rng.standard_normal((4, 65, 17), np.float32)
    close((dev(xb) @ dev(wb)).numpy(), xb.astype(np.float64) @ wb, 1e-4, 1e-4)
    close((dev(xb) @ dev(wb[0])).numpy(), xb.astype(np.float64) @ wb[0], 1e-4, 1e-4)


def conv_reference(x, w, stride, pad, dil, groups):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    k, cg, r, s = w.shape
    p = (h - dil * (r - 1) - 1) // stride + 1
    q = (wd - dil * (s - 1) - 1) // stride + 1
    out = np.zeros((n, k, p, q))
    kg = k // groups
    for g in range(groups):
        for i in range(r):
            for j in range(s):
                patch = x[:, g * cg:(g + 1) * cg, i * dil: i * dil + stride * (p - 1) + 1: stride,
                          j * dil: j * dil + stride * (q - 1) + 1: stride]
                out[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch, w[g * kg:(g + 1) * kg, :, i, j])
    return out


def test_conv2d_strided_grouped_dilated_and_misaligned_views(cuda_mode, rng):
    x = rng.standard_normal((2, 8, 19, 23), np.float32)
    w = rng.standard_normal((12, 4, 3, 3), np.float32) * 0.3
    close(bz.conv2d(dev(x), dev(w), stride=2, padding=1, dilation=2, groups=2).numpy(),
          conv_reference(x, w, 2, 1, 2, 2), 1e-4, 1e-4)
    xs = rng.standard_normal((2, 8, 19, 46), np.float32)
    close(bz.conv2d(dev(xs)[:, :, :, ::2], dev(w), padding=1, groups=2).numpy(),
          conv_reference(xs[:, :, :, ::2], w, 1, 1, 1, 2), 1e-4, 1e-4)
    # A view 4 bytes past its buffer's start: cuDNN is never handed it
    # (Note [cuDNN convolutions]: a misaligned input is copied first).
    close(bz.conv2d(dev(xs)[:, :, :, 1::2], dev(w), padding=1, groups=2).numpy(),
          conv_reference(xs[:, :, :, 1::2], w, 1, 1, 1, 2), 1e-4, 1e-4)
    h, wh = x.astype(np.float16), w.astype(np.float16)
    close(bz.conv2d(dev(h), dev(wh), padding=1, groups=2).numpy(), conv_reference(h, wh, 1, 1, 1, 2), 3e-2, 3e-2)


def test_replays_with_out_and_copyto_see_fresh_inputs(big, rng):
    rows = 1024 if big else 32
    f = bz.jit(lambda x, b: bz.softmax(bz.relu(x + b), axis=-1))
    b = rng.standard_normal(300, np.float32)
    X, B = dev(rng.standard_normal((rows, 300), np.float32)), dev(b)
    out = f(X, B)
    for _ in range(20):
        x = rng.standard_normal((rows, 300), np.float32)
        bz.copyto(X, x)
        f(X, B, out=out)
        z = np.maximum(x.astype(np.float64) + b, 0)
        e = np.exp(z - z.max(-1, keepdims=True))
        close(out.numpy(), e / e.sum(-1, keepdims=True), 1e-5, 1e-7)


def test_four_threads_realize_at_once(cuda_mode):
    errors = []

    def work(i):
        try:
            rng = np.random.default_rng(i)
            for _ in range(3):
                x = rng.standard_normal((300 + i, 257), np.float32)
                close((bz.exp(dev(x)) + float(i)).sum(axis=1).numpy(), (np.exp(x.astype(np.float64)) + i).sum(1), 1e-5)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# --- on a GPU only ------------------------------------------------------------------


@pytest.mark.gpu
def test_more_than_two_to_the_31_elements(gpu):
    n = (1 << 31) + 67
    x = bz.full((n,), 3, dtype=bz.int8, device="cuda")
    y = (x * 2 + 1).realize()  # constant-folded: a 64-bit store-only kernel
    z = (y + 1).realize()  # reads a buffer of 2^31 + 67 elements: 64-bit loads
    assert (z[-100:].numpy() == 8).all() and (z[:100].numpy() == 8).all()
    assert int(bz.sum(bz.astype(z, bz.int64)).numpy()) == 8 * n


@pytest.mark.gpu
def test_dlpack_into_torch_and_cupy_without_a_copy(gpu, rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((64, 33), np.float32)
    t = bz.exp(dev(a))
    tt = torch.from_dlpack(t)
    assert tt.is_cuda and tuple(tt.shape) == (64, 33)
    close(tt.cpu().numpy(), np.exp(a.astype(np.float64)), 1e-6)
    assert tt.data_ptr() == t.__cuda_array_interface__["data"][0], "copied, not shared"
    tt.mul_(2)  # the consumer writes: braze must see it (Note [Storage versions])
    torch.cuda.synchronize()
    close(t.numpy(), 2 * np.exp(a.astype(np.float64)), 1e-6)
    close((t + 1).numpy(), 2 * np.exp(a.astype(np.float64)) + 1, 1e-6)
    cp = pytest.importorskip("cupy")
    close(cp.asnumpy(cp.asarray(t)), 2 * np.exp(a.astype(np.float64)), 1e-6)


# --- exit -----------------------------------------------------------------------------

EXIT_PROBE = """
import numpy as np, braze as bz
x = bz.tensor(np.ones((64, 100), np.float32), device="cuda")
y = bz.softmax(bz.softmax(x * 2, axis=0), axis=-1)  # two kernels: the cached program's arena is device memory
print(float(y.numpy().sum()))
"""


@pytest.mark.gpu
def test_a_process_that_used_the_gpu_exits_cleanly(gpu):
    # Note [Tables live until exit]: the program cache frees its device
    # memory at exit through the driver table, which must still be there.
    r = subprocess.run([sys.executable, "-c", EXIT_PROBE], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert float(r.stdout) == pytest.approx(64.0), r.stdout


def test_exit_after_device_work_is_clean_on_a_fake_driver():
    # The same probe without a GPU: the fake libcuda the C++ checks use
    # (tests/cpp/jit_cuda_fake_libcuda.cpp) runs no kernel, but the program
    # cache still frees a device arena at exit through the driver table.
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(bz.__file__))))
    fake = os.path.join(build, "tests", "cpp", "libbraze_fake_libcuda.so")
    if not os.path.exists(fake):
        pytest.skip("braze is not a build tree with the fake libcuda (tests/cpp)")
    env = dict(os.environ, BRAZE_LIBCUDA=fake)
    env.pop("BRAZE_CUDA", None)
    r = subprocess.run([sys.executable, "-c", EXIT_PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stderr)
