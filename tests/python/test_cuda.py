"""device="cuda": placement, transfers, programs and generated kernels.

No GPU is needed: these run under host emulation (BRAZE_CUDA=emulate, set
in-process; Note [CUDA executors] in runtime/cuda_executors.h), where CUDA
tensors live in host memory and the generated CUDA kernels are compiled by
the host C++ compiler (~1 s per program), so the op sweep realizes all its
cases as one program. Tests marked `gpu` need the driver and a device:
they skip without them, and fail instead under BRAZE_REQUIRE_GPU=1
(conftest.py); the op sweep runs both ways.
"""

import io
import re
import os
import subprocess
import sys

import numpy as np
import pytest

import braze as bz
from conftest import BF16, BOOL, DTYPES, DTYPE_IDS, assert_matches, is_float, logical_values, make_layout, values
from test_ops import BY_ARITY, expected, operand_values
from conftest import result_dtype

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
counts_kernels = pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference makes no programs")


@pytest.fixture
def emulate(monkeypatch):
    monkeypatch.setenv("BRAZE_CUDA", "emulate")


# --- without CUDA ----------------------------------------------------------------


def test_cuda_without_a_driver_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("BRAZE_CUDA", raising=False)
    if bz._core._cuda_absent() is None:
        pytest.skip("this machine has a CUDA driver and device")
    with pytest.raises(RuntimeError, match=r"(?s)device .cuda:0. is not available.*libcuda.*BRAZE_CUDA=emulate"):
        bz.tensor(np.ones(3, np.float32), device="cuda")
    with pytest.raises(RuntimeError, match="not available"):
        bz.zeros((2, 2), device="cuda")
    with pytest.raises(RuntimeError, match="not available"):
        bz.tensor([1.0]).to("cuda")
    with pytest.raises(RuntimeError, match="not available"):
        with bz.device("cuda"):
            pass
    with pytest.raises(RuntimeError, match="not available"):
        bz.synchronize("cuda")
    bz.synchronize()  # the default device is the CPU: nothing to wait for
    bz.synchronize("cpu")
    assert bz.device is not None and (bz.tensor([1.0, 2.0]) * 2).numpy().tolist() == [2.0, 4.0]  # the CPU works


def test_bad_cuda_mode_is_an_error(monkeypatch):
    monkeypatch.setenv("BRAZE_CUDA", "fast")
    with pytest.raises(ValueError, match="BRAZE_CUDA='fast' is not a mode"):
        bz.zeros(1, device="cuda")


# --- placement and transfers ---------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_round_trip_is_exact(emulate, dtype):
    x = values(dtype, (4, 7), seed=2)
    t = bz.tensor(x, device="cuda")
    assert t.device == "cuda:0" and t.is_realized
    back = t.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy().view(np.uint8), x.view(np.uint8))  # bit for bit, NaNs too
    np.testing.assert_array_equal(t.numpy().view(np.uint8), x.view(np.uint8))
    assert t.device == "cuda:0"  # .numpy() copied, the tensor stayed
    again = bz.tensor(x).to("cuda").to("cuda:0")
    np.testing.assert_array_equal(again.numpy().view(np.uint8), x.view(np.uint8))


def test_creation_on_cuda(emulate):
    assert_matches(bz.zeros((2, 3), device="cuda"), np.zeros((2, 3), np.float32))
    assert_matches(bz.ones(4, dtype=bz.int32, device="cuda"), np.ones(4, np.int32))
    assert_matches(bz.full((2, 2), 2.5, device="cuda"), np.full((2, 2), 2.5, np.float32))
    assert_matches(bz.arange(1, 11, 3, device="cuda"), np.arange(1, 11, 3))
    for t in (bz.zeros(3, device="cuda"), bz.arange(5, device="cuda"), bz.asarray([1, 2], device="cuda")):
        assert t.device == "cuda:0"
    assert bz.asarray(bz.tensor([1.0]), device="cuda").device == "cuda:0"
    with bz.device("cuda"):
        t = bz.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        u = bz.exp(t) + 1
        assert t.device == u.device == "cuda:0" and bz.zeros(1).device == "cuda:0"
    assert bz.zeros(1).device == "cpu"
    assert_matches(u, np.exp(np.arange(6, dtype=np.float64).reshape(2, 3)) + 1, np.float32)
    assert_matches(bz.zeros_like(u), np.zeros((2, 3), np.float32))
    assert bz.zeros_like(u).device == "cuda:0"


def test_item_and_scalars_on_cuda(emulate):
    t = bz.tensor(np.array([3.5], np.float32), device="cuda")
    assert t.item() == 3.5 and float(t.sum()) == 3.5
    s = bz.tensor(np.float32(2.0), device="cuda")  # a 0-d device tensor read by a kernel as a scalar
    assert_matches(t * s, np.array([7.0], np.float32))


def test_synchronize_waits_for_the_device(emulate):
    x = bz.tensor(np.arange(6, dtype=np.float32), device="cuda")
    y = (x * 2.0).realize()
    bz.synchronize("cuda")
    with bz.device("cuda"):
        bz.synchronize()  # the scope's device
    with pytest.raises(ValueError, match="device"):
        bz.synchronize("tpu")
    assert y.numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_ops_on_two_devices_are_an_error(emulate):
    a = bz.tensor([1.0, 2.0])
    b = bz.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(ValueError, match=r"different devices \(cpu and cuda:0\)"):
        a + b
    with pytest.raises(ValueError, match="different devices"):
        bz.where(b > 1, a, 0.0)
    assert_matches(a + b.to("cpu"), np.array([2.0, 4.0], np.float32))


def test_realize_tensors_on_two_devices_together(emulate):
    a = bz.tensor([1.0, 2.0]) * 2
    b = bz.tensor([1.0, 2.0], device="cuda") * 3
    bz.realize(a, b)
    assert a.device == "cpu" and b.device == "cuda:0"
    assert a.numpy().tolist() == [2.0, 4.0] and b.numpy().tolist() == [3.0, 6.0]


def test_emulated_memory_is_not_exported(emulate):
    t = bz.tensor([1.0], device="cuda")
    assert t.__dlpack_device__() == (2, 0)
    with pytest.raises(BufferError, match="emulated host memory"):
        t.__dlpack__()
    with pytest.raises(AttributeError, match="emulated host memory"):
        t.__cuda_array_interface__
    assert not hasattr(t, "__cuda_array_interface__") and not hasattr(bz.tensor([1.0]), "__cuda_array_interface__")


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != BF16], ids=[n for n in DTYPE_IDS if n != "bfloat16"])
def test_cpu_tensors_export_dlpack_without_a_copy(dtype):  # (NumPy cannot import bfloat16)
    x = values(dtype, (3, 4), seed=5)
    t = bz.exp(bz.tensor(x)) if is_float(dtype) else bz.tensor(x)
    got = np.from_dlpack(t)
    assert t.__dlpack_device__() == (1, 0)
    assert got.dtype == dtype and got.shape == (3, 4)
    np.testing.assert_array_equal(got.view(np.uint8), t.numpy().view(np.uint8))
    assert got.ctypes.data == t.numpy().ctypes.data  # the tensor's own memory


# --- the op sweep: op x dtype x layout, one program ------------------------------------


SWEEP_DTYPES = [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.int32), np.dtype(np.float64),
                np.dtype(np.int8), BOOL, np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.uint16),
                np.dtype(np.uint32)]
SWEEP_LAYOUTS = ["contiguous", "transposed", "sliced_reversed", "broadcast", "scalar", "zero_size"]


def rule_dtypes(op, dtype):
    """The operand dtypes of a sweep case: `where` takes a bool condition."""
    return [BOOL, dtype, dtype] if op["api"] == "where" else [dtype] * op["arity"]


def sweep_cases():
    """(id, op, dtype, layout): every element-wise op, with dtypes and
    layouts turning so that each op meets several of each and every dtype
    and layout is met many times, as the C++ NVRTC sweep does."""
    cases = []
    n = 0
    for arity in (1, 2, 3):
        for op in BY_ARITY[arity]:
            # Only dtypes the op accepts (bitwise ops refuse floats, negative
            # refuses bool): a rejected case would skip, and a GPU run
            # (BRAZE_REQUIRE_GPU=1) counts a skip as a failure.
            accepted = [d for d in SWEEP_DTYPES if result_dtype(op["rule"], *rule_dtypes(op, d)) is not None]
            for k in range(3):
                dtype = accepted[(n + 3 * k) % len(accepted)]
                layout = SWEEP_LAYOUTS[(n + k) % len(SWEEP_LAYOUTS)]
                cases.append((f"{op['api']}-{dtype.name}-{layout}", op, dtype, layout))
            n += 1
    return cases


CASES = sweep_cases()


@pytest.fixture(scope="module", params=["emulate", pytest.param("gpu", marks=pytest.mark.gpu)])
def sweep(request):
    """Every case recorded on cuda (emulated, or marked gpu on the driver)
    and realized as one program."""
    previous = os.environ.get("BRAZE_CUDA")
    if request.param == "emulate":
        os.environ["BRAZE_CUDA"] = "emulate"
    else:
        os.environ.pop("BRAZE_CUDA", None)
    try:
        if request.param == "gpu" and (why := bz._core._cuda_absent()) is not None:
            pytest.skip(f"no GPU here: {why}")
        results = {}
        with bz.device("cuda"):
            lazy = []
            for name, op, dtype, layout in CASES:
                args = [operand_values(op, i, dtype, layout, seed=i + 1) for i in range(op["arity"])]
                out = result_dtype(op["rule"], *rule_dtypes(op, dtype))
                got = getattr(bz, op["api"])(*[make_layout(layout, a) for a in args])
                assert got.device == "cuda:0"
                results[name] = (got, expected(op, args, out), out)
                lazy.append(got)
        bz.reset_stats()
        bz.realize(*lazy)
        results["_stats"] = bz.stats()
        yield results
    finally:
        if previous is None:
            os.environ.pop("BRAZE_CUDA", None)
        else:
            os.environ["BRAZE_CUDA"] = previous


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_elementwise_on_cuda_matches_numpy(sweep, case):
    got, want, out = sweep[case[0]]
    assert got.device == "cuda:0" and got.is_realized
    assert_matches(got, want, out)


@counts_kernels
def test_sweep_ran_generated_cuda_kernels(sweep):
    s = sweep["_stats"]
    n = sum(1 for k in sweep if k != "_stats")
    assert s["programs_compiled"] == 1
    assert s["kernels_interpreted"] == 0
    assert n / 2 < s["kernels_launched"] <= n  # a few cases share a kernel (interned), none runs on the CPU


REDUCTIONS = [("sum", np.float32, (1,)), ("max", np.float16, (0,)), ("mean", np.float64, (0, 1)),
              ("min", np.int32, (1,)), ("prod", np.int8, (0,)), ("sum", np.dtype(BF16), (0, 1))]


def test_reductions_on_cuda(emulate):
    cases = []
    with bz.device("cuda"):
        for name, dtype, axis in REDUCTIONS:
            x = logical_values(dtype, "contiguous", seed=4, specials=False, lo=-3, hi=3, shape=(6, 9))
            for layout in ("contiguous", "transposed"):
                t = make_layout(layout, x.T.copy() if layout == "transposed" else x)
                t = t.T if layout == "transposed" else t
                cases.append((getattr(bz, name)(t, axis=axis), name, x, axis))
    bz.realize(*[c[0] for c in cases])
    for got, name, x, axis in cases:
        want = getattr(np, name)(x.astype(np.float64), axis=axis)
        scale = 1e-2 if x.dtype in (np.float16, BF16) else 1e-5
        np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=scale, atol=scale)


# One identity for a float sum on both backends: -0.0, so a sum of -0.0s is
# -0.0 as the reference and the CPU kernels give it (every kernel shape:
# along rows, split columns, one thread per column, everything; NumPy
# itself gives -0.0 along rows and +0.0 down columns); a sum of nothing is
# +0.0, as NumPy's.
def test_signed_zero_sums_on_cuda_match_the_cpu(emulate):
    for dtype in (np.float32, np.float64, np.float16):
        for shape, axis in [((4, 300), 1), ((300, 4), 0), ((3, 20000), 0), ((5, 6), None), ((0, 3), 0), ((3, 0), 1)]:
            x = np.full(shape, -0.0, dtype)
            want = bz.sum(bz.tensor(x), axis=axis).numpy()
            with bz.device("cuda"):
                got = bz.sum(bz.tensor(x), axis=axis).numpy()
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"{dtype} {shape} {axis}")
            np.testing.assert_array_equal(np.signbit(want), x.size > 0)


def test_vector_access_and_split_columns_on_cuda(emulate):
    """Views at aligned and odd element offsets of device memory (vector
    loads or gathers; emulation aborts on a misaligned vector access),
    float16 rows read 8 at a time, and few long columns split across a
    block (jit_cuda/README.md), in one program against NumPy."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 260)).astype(np.float32)
    h = rng.standard_normal((32, 1000)).astype(np.float16)
    c = rng.standard_normal((20000, 7)).astype(np.float32)
    c[123, 3] = np.nan
    with bz.device("cuda"):
        t, th, tc = bz.tensor(x), bz.tensor(h), bz.tensor(c)
        got = [t[:, 4:] + 1.0, t[:, 1:] * 2.0, bz.exp(t[1:]), bz.softmax(th, axis=-1),
               bz.sum(tc, axis=0), bz.max(tc, axis=0), bz.var(tc, axis=0), tc - bz.mean(tc, axis=0)]
        bz.realize(*got)
    e = np.exp(h.astype(np.float32) - h.astype(np.float32).max(axis=-1, keepdims=True))
    c64 = c.astype(np.float64)
    want = [x[:, 4:] + 1, x[:, 1:] * 2, np.exp(x[1:]), e / e.sum(axis=-1, keepdims=True),
            c64.sum(axis=0), c64.max(axis=0), c64.var(axis=0), c64 - c64.mean(axis=0)]
    for g, w in zip(got, want):
        tol = 2e-3 if g.dtype == "float16" else 1e-4
        np.testing.assert_allclose(g.numpy().astype(np.float64), w, rtol=tol, atol=tol)


# --- composites and programs ---------------------------------------------------------


def graph_stats():
    s = bz.stats()
    return s["graphs_captured"], s["graphs_launched"], s["graph_nodes_updated"]


def softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@counts_kernels
def test_replays_are_one_cuda_graph(cuda_mode):
    # Note [Programs as CUDA graphs]: run once, a program launches its
    # kernels; at its second run it is captured; from then on a run with
    # the same addresses and values launches the graph as it is, and one
    # with others sets the parameters of the nodes that changed.
    a = np.linspace(-1, 1, 4096, dtype=np.float32)
    x = bz.tensor(a, device="cuda")
    f = bz.jit(lambda x: bz.softmax(bz.softmax(x.reshape((64, 64)), axis=0) * 2.0, axis=-1))
    want = softmax_np(softmax_np(a.reshape(64, 64), 0) * 2.0, -1)
    bz.reset_stats()
    out = f(x)
    assert graph_stats() == (0, 0, 0)
    for captured in (1, 0, 0):
        bz.reset_stats()
        np.testing.assert_allclose(f(x, out=out).numpy(), want, rtol=1e-5, atol=1e-7)
        assert graph_stats() == (captured, 1, 0)
    bz.reset_stats()
    np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-5, atol=1e-7)  # a new output: its writer patched
    assert graph_stats() == (0, 1, 1)
    # New contents at the same address: the graph reads them.
    b = np.linspace(2, -3, 4096, dtype=np.float32)
    bz.copyto(x, bz.tensor(b, device="cuda"))
    bz.reset_stats()
    np.testing.assert_allclose(f(x, out=out).numpy(), softmax_np(softmax_np(b.reshape(64, 64), 0) * 2.0, -1),
                               rtol=1e-5, atol=1e-7)
    assert graph_stats() == (0, 1, 1)  # out= is the graph's output again
    # A scalar parameter (Note [Scalar parameters]) is a kernel's by-value
    # argument: a new value patches the node reading it.
    for s, patched in ((2.5, None), (2.5, None), (3.5, 1)):
        bz.reset_stats()
        got = (bz.softmax(x.reshape((64, 64)) * s, axis=-1) + 0.25).numpy()
        np.testing.assert_allclose(got, softmax_np(b.reshape(64, 64) * s, -1) + 0.25, rtol=1e-5, atol=1e-6)
        if patched is not None:
            assert graph_stats()[1:] == (1, 1), "one kernel reads the scalar and writes the new output"


@counts_kernels
def test_cuda_graphs_off(cuda_mode, monkeypatch):
    monkeypatch.setenv("BRAZE_CUDA_GRAPHS", "0")
    x = bz.tensor(np.ones(4096, np.float32), device="cuda")
    f = bz.jit(lambda x: bz.exp(x * 3.0).sum())
    for _ in range(3):
        bz.reset_stats()
        np.testing.assert_allclose(f(x).numpy(), 4096 * np.exp(3.0), rtol=1e-5)
        assert graph_stats() == (0, 0, 0) and bz.stats()["kernels_launched"] >= 1


@counts_kernels
def test_library_calls_in_cuda_graphs(cuda_mode):
    # On a GPU a cuBLASLt call is captured with the kernels around it, and
    # captured again where its operands moved (each input is kept, so the
    # next one is other memory); an input at the same address is only
    # launched. Host emulation runs matmul on the host's library, so its
    # programs run step by step.
    rng = np.random.default_rng(7)
    w = bz.tensor(rng.standard_normal((64, 32)).astype(np.float32), device="cuda")
    f = bz.jit(lambda a, w: bz.softmax(bz.relu(a @ w + 1.0), axis=-1))
    kept = []
    for i in range(5):
        a = rng.standard_normal((16, 64)).astype(np.float32)
        if i < 4:
            kept.append(bz.tensor(a, device="cuda"))
        else:
            bz.copyto(kept[-1], bz.tensor(a, device="cuda"))  # the last input's memory, new values
        bz.reset_stats()
        got = f(kept[-1], w).numpy()
        np.testing.assert_allclose(got, softmax_np(np.maximum(a @ w.numpy() + 1.0, 0), -1), rtol=1e-4, atol=1e-6)
        captured, launched, _ = graph_stats()
        if cuda_mode == "emulate" or i == 0:
            assert (captured, launched) == (0, 0)
        else:
            assert (captured, launched) == ((1 if i < 4 else 0), 1), i


@counts_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_reductions_with_few_results_split_in_two_on_cuda(cuda_mode, dtype):
    # Note [Split reductions]: one result of 2^17 values, and 64 columns of
    # 4096, are two kernels each (partial results, then their combination);
    # float16 sums stay one kernel (a float16 partial sum would round).
    rng = np.random.default_rng(5)
    flat = (rng.standard_normal(1 << 17) * 4).astype(dtype)
    flat[7] = -0.0 if np.issubdtype(dtype, np.floating) else flat[7]
    cols = (rng.standard_normal((4096, 64)) * 4).astype(dtype)
    near_one = (1 + rng.standard_normal(1 << 17) * 1e-4).astype(np.float64)
    tol = dict(rtol=1e-2, atol=1e-1) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-3)
    cases = [
        ("sum", lambda m, x: m.sum(x), flat, 1 if dtype == np.float16 else 2),
        ("max", lambda m, x: m.max(x), flat, 2),
        ("min of columns", lambda m, x: m.min(x, axis=0), cols, 2),
        ("sum of columns", lambda m, x: m.sum(x, axis=0), cols, 1 if dtype == np.float16 else 2),
        ("mean of squares", lambda m, x: m.mean(x * x), flat, 2),  # a float16 mean sums in float32
        ("prod", lambda m, x: m.prod(x), near_one, 2),
    ]
    for what, f, x, kernels in cases:
        t = bz.tensor(x, device="cuda")
        bz.reset_stats()
        got = f(bz, t).numpy()
        assert bz.stats()["kernels_launched"] == kernels, what
        want = f(np, x.astype(np.float64)).astype(got.dtype) if np.issubdtype(x.dtype, np.floating) else f(np, x)
        np.testing.assert_allclose(got, want, **tol, err_msg=what)
    # A NaN anywhere is the max, whichever part it falls in.
    if np.issubdtype(dtype, np.floating):
        flat[100000] = np.nan
        assert np.isnan(bz.max(bz.tensor(flat, device="cuda")).numpy())


@counts_kernels
def test_softmax_and_layer_norm_are_one_kernel_each_on_cuda(emulate):
    x = np.random.default_rng(0).standard_normal((16, 40)).astype(np.float32)
    t = bz.tensor(x, device="cuda")
    bz.reset_stats()
    y = bz.softmax(t * 2.0, axis=-1)
    got = y.numpy()
    assert bz.stats()["kernels_launched"] == 1
    e = np.exp(2.0 * x - (2.0 * x).max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)
    w = bz.tensor(np.linspace(0.5, 1.5, 40, dtype=np.float32), device="cuda")
    bz.reset_stats()
    ln = bz.layer_norm(t, w).numpy()
    assert bz.stats()["kernels_launched"] == 1
    mu = x.mean(axis=-1, keepdims=True)
    ref = (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5) * np.linspace(0.5, 1.5, 40)
    np.testing.assert_allclose(ln, ref, rtol=1e-4, atol=1e-5)


@counts_kernels
def test_program_replays_with_no_device_allocation_but_its_output(emulate):
    x = bz.tensor(np.linspace(-1, 1, 64 * 33, dtype=np.float32).reshape(64, 33), device="cuda")
    results = []
    for i in range(5):
        bz.reset_stats()
        scale = 0.3 + 0.15 * i  # a parameter: changing it recompiles nothing (0.5 would be structure)
        y = bz.sum(bz.exp(x * scale) + x, axis=1) / 33.0
        results.append(y.numpy())
        s = bz.stats()
        if i == 0:
            assert s["programs_compiled"] == 1 and s["device_bytes_allocated"] > 0
        else:
            assert s["programs_compiled"] == 0 and s["programs_replayed"] == 1, s
            assert s["kernels_compiled"] == 0 and s["arena_bytes"] == 0, s
            # the output kept on the device, and its copy to the host for .numpy()
            assert s["allocations"] == 2 and s["device_bytes_allocated"] == 64 * 4, s
        assert s["kernels_launched"] >= 1
    xs = np.linspace(-1, 1, 64 * 33).reshape(64, 33)
    for i, r in enumerate(results):
        np.testing.assert_allclose(r, (np.exp(xs * (0.3 + 0.15 * i)) + xs).sum(axis=1) / 33.0, rtol=1e-5)


@counts_kernels
def test_arena_on_the_device(emulate):
    x = bz.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device="cuda")
    bz.reset_stats()
    # Kernels, a library call, a kernel: bz.ones is a broadcast constant,
    # which cuBLASLt reads from a dense copy (Note [Library capabilities]).
    y = bz.softmax(bz.exp(x) @ bz.ones((4, 4), device="cuda"), axis=-1)
    plan = bz.explain(y, file=io.StringIO())
    assert "alignment 256" in plan  # the device's plan
    assert int(re.search(r"arena (\d+) B", plan).group(1)) > 0
    got = y.numpy()
    s = bz.stats()
    # arena_bytes counts arenas obtained now: 0 when an earlier test left an
    # idle one that fits in the pool (Note [Arena pool]).
    assert s["kernels_launched"] == 4 and s["device_bytes_allocated"] >= s["arena_bytes"]
    m = np.exp(np.arange(12.0).reshape(3, 4)) @ np.ones((4, 4))
    e = np.exp(m - m.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5)


@counts_kernels
def test_ten_op_chain_is_one_launch_on_cuda(emulate):
    x = bz.tensor(np.linspace(0.1, 2, 50, dtype=np.float32), device="cuda")
    bz.reset_stats()
    y = x
    for _ in range(5):
        y = bz.sqrt(y * 1.5 + 0.25)
    got = y.numpy()
    assert bz.stats()["kernels_launched"] == 1
    want = np.linspace(0.1, 2, 50)
    for _ in range(5):
        want = np.sqrt(want * 1.5 + 0.25)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_assign_on_cuda_updates_in_place(emulate):
    w = bz.tensor(np.ones(8, np.float32), device="cuda")
    g = bz.tensor(np.full(8, 0.5, np.float32), device="cuda")
    for i in range(3):
        bz.reset_stats()
        bz.assign([w], [w - 0.1 * g])  # reads the old w, writes w's own device memory
        if i > 0 and not REFERENCE:
            assert bz.stats()["allocations"] == 0
    assert w.device == "cuda:0"
    np.testing.assert_allclose(w.numpy(), np.full(8, 1 - 0.15), rtol=1e-6)
    with pytest.raises(ValueError, match="assign: target 0 is on cuda:0 but the value is on cpu"):
        bz.assign([w], [bz.zeros(8)])


@counts_kernels
def test_gpu_benchmark_runs_under_emulation():
    # bench/gpu_fused.py is meant for a GPU; here it runs on the emulated
    # device at 1/1024 of its sizes, so a GPU session finds it working: every
    # workload timed (after checking braze's result against NumPy's) and the
    # compile / disk-cache table from its two child processes.
    bench = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
    path = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(bz.__file__)), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BRAZE_CUDA="emulate", BENCH_REPS="1", PYTHONPATH=path)
    r = subprocess.run([sys.executable, os.path.join(bench, "gpu_fused.py"), "--scale", "1024"], env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert "host emulation" in r.stdout, r.stdout
    rows = [l.split() for l in r.stdout.splitlines()]
    braze = {row[0]: int(row[4]) for row in rows if len(row) > 4 and row[1] == "braze"}
    # sum_all is two reductions (Note [Split reductions]); colsum, 8 rows at
    # this scale, is too short to split.
    assert braze == {"gelu_256M": 1, "bias_relu_scale": 1, "softmax_rows": 1, "layernorm": 1, "colsum": 1,
                     "sum_all": 2, "transpose_add": 1, "colsum_of_T": 1, "matmul_f16": 1, "matmul_f32": 1, "conv2d_f16": 1}, r.stdout
    # JAX shares the GPU with the others in this process instead of taking 75% of it first.
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in r.stdout, r.stdout
    replays = [l.split() for l in r.stdout.split("replayed program")[1].splitlines()[1:3]]
    assert [row[0] for row in replays] == ["elementwise", "softmax_x5"], r.stdout
    assert int(replays[0][-1]) == 1 and int(replays[1][-1]) >= 5, r.stdout
    cold_warm = [row for row in rows if row and row[0] in braze and "ms" in row]
    # (Emulated kernels have no disk cache: only the driver's cubins do.)
    assert len(cold_warm) == 8 and all(int(row[3]) > 0 for row in cold_warm), r.stdout


# --- on a real GPU -------------------------------------------------------------------


@pytest.mark.gpu
def test_on_a_gpu_softmax_matches_numpy(gpu):
    x = np.random.default_rng(1).standard_normal((256, 1000)).astype(np.float32)
    got = bz.softmax(bz.tensor(x, device="cuda"), axis=-1).numpy()
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-8)


@pytest.mark.gpu
def test_on_a_gpu_tensors_export_device_memory(gpu):
    t = bz.exp(bz.tensor(np.ones((4, 8), np.float32), device="cuda"))
    cai = t.__cuda_array_interface__
    assert cai["shape"] == (4, 8) and cai["typestr"] == "<f4" and cai["data"][0] != 0
    assert t.__dlpack_device__() == (2, 0)
    assert type(t.__dlpack__()).__name__ == "PyCapsule"


def test_gpu_tests_fail_instead_of_skipping_when_a_gpu_is_required():
    # Without a GPU (BRAZE_LIBCUDA names no file: no driver), a gpu test
    # skips; under BRAZE_REQUIRE_GPU=1 the same skip is a failure, naming why.
    here = os.path.dirname(__file__)
    base = dict(os.environ, BRAZE_LIBCUDA="/nonexistent/libcuda.so.1")
    base.pop("BRAZE_CUDA", None)
    args = [sys.executable, "-m", "pytest", os.path.join(here, "test_cuda.py"), "-q", "-p", "no:cacheprovider",
            "-k", "test_on_a_gpu_softmax_matches_numpy"]
    free = subprocess.run(args, env=base, capture_output=True, text=True, timeout=300)
    assert free.returncode == 0 and "1 skipped" in free.stdout, free.stdout
    required = subprocess.run(args + ["-rf"], env=dict(base, BRAZE_REQUIRE_GPU="1"), capture_output=True, text=True,
                              timeout=300)
    # (The skip comes from the gpu fixture, so the test errors in its setup.)
    assert required.returncode == 1 and "1 error" in required.stdout, required.stdout
    assert "BRAZE_REQUIRE_GPU=1, but this gpu test skipped: " in required.stdout, required.stdout
    assert "/nonexistent/libcuda.so.1" in required.stdout, required.stdout


def test_examples_say_which_device_they_ran_on():
    # The harness named the CPU whatever --device said.
    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    path = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(bz.__file__)), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BRAZE_CUDA="emulate", PYTHONPATH=path)
    r = subprocess.run([sys.executable, os.path.join(examples, "mlp.py"), "--device", "cuda", "--iterations", "2"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "iteration(s) on cuda:0 (host emulation)" in r.stdout and "on the CPU" not in r.stdout, r.stdout
    assert "NVRTC or the disk cache" in r.stdout, r.stdout
