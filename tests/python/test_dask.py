"""braze tensors as Dask array chunks on a real dask.distributed cluster
(issue 27, python/braze/dask.py): a LocalCluster of two worker processes
on 127.0.0.1, one thread each, started and stopped here. Dask's ordinary
API on braze chunks against NumPy (the op table's element-wise rows,
reductions through Dask's tree reductions, matmul), one fused kernel per
chunk for a 10-op chain (counted on the workers), serialization across
processes, and a worker killed during a computation."""

import logging
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402
from distributed.protocol import deserialize, serialize  # noqa: E402

import braze as bz  # noqa: E402
import braze.dask as bzd  # noqa: E402
from conftest import BF16, assert_matches, result_dtype, values  # noqa: E402
from test_ops import ELEMENTWISE, expected, operand_values  # noqa: E402
from test_reductions import reduction_input, scaled_atol  # noqa: E402

# NumPy warns on the NaN and Inf among the reference values; the values are what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs, no kernels to count
SHAPE, CHUNKS = (6, 10), (4, 4)  # uneven chunks: 2 x 3 blocks, the last ones smaller


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", env={"BRAZE_NUM_THREADS": "1"},
                                       silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster)
    bzd.setup(c)
    yield c
    c.close()
    cluster.close()


def chunked(x, chunks=CHUNKS):
    return bzd.from_dask(da.from_array(x, chunks=chunks))


def test_import_braze_does_not_import_dask():
    code = ("import sys, braze; assert 'dask' not in sys.modules and 'braze.dask' not in sys.modules; "
            "assert braze.dask is sys.modules['braze.dask'] and 'dask.array' in sys.modules")  # bz.dask: on first use
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ)
    assert bz.dask is bzd
    with pytest.raises(AttributeError, match="no attribute 'dusk'"):
        bz.dusk  # noqa: B018


def test_chunks_and_meta_are_tensors():
    d = chunked(values(np.float32, SHAPE))
    assert isinstance(d._meta, bz.Tensor) and d._meta.dtype == np.float32 and d._meta.ndim == 2
    blocks = d.blocks[1, 2].compute(scheduler="sync")
    assert isinstance(blocks, bz.Tensor) and blocks.shape == (2, 2)


def test_a_dtype_braze_lacks_is_refused_by_name():
    with pytest.raises(ValueError, match="uint64"):
        chunked(np.zeros(SHAPE, np.uint64))


# --- the op table's element-wise rows -------------------------------------


def _ufunc_or_braze(op, out):
    """NumPy's ufunc where the row names one (Dask applies it per chunk,
    braze's __array_ufunc__ takes it), else braze's function per chunk."""
    fn = getattr(np, op["numpy"], None) if op["numpy"] else None
    if isinstance(fn, np.ufunc):
        return lambda *ds: fn(*ds)
    if op["api"] == "where":
        return lambda c, a, b: da.where(c, a, b)
    return lambda *ds: da.map_blocks(getattr(bz, op["api"]), *ds, dtype=out)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int32), BF16], ids=str)
def test_elementwise_rows_match_numpy(client, dtype):
    """Every element-wise row of bz.ops() on chunked operands (NaN, +-Inf
    and +-0 among the floats), computed in one Dask graph."""
    cases, arrays = [], []
    for op in ELEMENTWISE:
        args = [operand_values(op, i, dtype, "contiguous", seed=i + 1) for i in range(op["arity"])]
        out = result_dtype(op["rule"], *[a.dtype for a in args])
        if out is None:  # the dtype rule rejects this dtype
            continue
        cases.append((op, args, out))
        arrays.append(_ufunc_or_braze(op, out)(*[chunked(a) for a in args]))
    assert len(cases) > 40
    for (op, args, out), got in zip(cases, dask.compute(*arrays)):
        assert isinstance(got, bz.Tensor), op["api"]
        assert_matches(got, expected(op, args, out), out)


def test_broadcasting_scalars_and_numpy_operands(client):
    x, row = values(np.float32, SHAPE, seed=1), values(np.float32, (10,), seed=2)
    col = values(np.float32, (6, 1), seed=3)
    d, r, c = chunked(x), chunked(row, chunks=5), chunked(col, chunks=(3, 1))
    got = dask.compute(d + r, d * c - r, np.maximum(d, 0.5) * 2.0, d + row, (d > r) & (c < 0))
    want = [x + row, x * col - row, np.maximum(x, 0.5) * 2.0, x + row, (x > row) & (col < 0)]
    for g, w in zip(got, want):
        assert isinstance(g, bz.Tensor)
        assert_matches(g, w)


# --- reductions through Dask's tree reductions -----------------------------

REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "var": np.var, "std": np.std,
              "prod": np.prod, "argmax": np.argmax, "argmin": np.argmin}


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int32)], ids=str)
def test_reductions_match_numpy(client, dtype):
    inputs = {name: reduction_input(name, dtype, (9, 10), seed=4) for name in REDUCTIONS}  # prod's near 1
    cases = [(name, axis, keepdims) for name in REDUCTIONS for axis in (None, 0, 1)
             for keepdims in ((False, True) if not name.startswith("arg") else (False,))]
    # 5 x 4 blocks of (2, 3): Dask combines them in a tree, two at a time.
    arrays = [getattr(chunked(inputs[name], chunks=(2, 3)), name)(axis=axis, keepdims=keepdims, split_every=2)
              if not name.startswith("arg") else
              getattr(chunked(inputs[name], chunks=(2, 3)), name)(axis=axis, split_every=2)
              for name, axis, keepdims in cases]
    for (name, axis, keepdims), got in zip(cases, dask.compute(*arrays)):
        x = inputs[name]
        what = f"{name}(axis={axis}, keepdims={keepdims})"
        assert isinstance(got, bz.Tensor), what
        if name.startswith("arg"):
            np.testing.assert_array_equal(got.numpy(), REDUCTIONS[name](x, axis=axis), err_msg=what)
            continue
        kw = {"keepdims": keepdims, "axis": axis}
        want = REDUCTIONS[name](x.astype(np.float64), **kw)
        assert got.shape == want.shape, what
        if dtype.kind == "i" and name in ("sum", "prod", "max", "min"):
            np.testing.assert_array_equal(got.numpy(), REDUCTIONS[name](x, **kw), err_msg=what)
        else:
            atol = scaled_atol(x, axis, np.float32) if name != "prod" else 1e-6
            np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=1e-5, atol=atol, err_msg=what)


def test_var_and_std_with_ddof_nan_reductions_and_cumsum(client):
    x = values(np.float32, (9, 10), seed=5, specials=False)
    x[2, 3] = np.nan
    d = chunked(x, chunks=(4, 3))
    got = dask.compute(d.var(axis=0, ddof=1), d.std(ddof=1), da.nansum(d, axis=1), da.nanmax(d), da.nanmean(d, axis=0),
                       d.cumsum(axis=1))
    want = [np.var(x, axis=0, ddof=1), np.std(x, ddof=1), np.nansum(x, axis=1), np.nanmax(x), np.nanmean(x, axis=0),
            np.cumsum(x, axis=1)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=1e-5, equal_nan=True)


# --- matmul, tensordot and the rest of Dask's API ---------------------------


def test_matmul_and_tensordot_match_numpy(client):
    a, b = values(np.float32, (24, 18), seed=6, specials=False), values(np.float32, (18, 20), seed=7, specials=False)
    c = values(np.float32, (4, 18, 5), seed=8, specials=False)
    da_, db, dc = chunked(a, (10, 7)), chunked(b, (7, 8)), chunked(c, (2, 7, 5))  # contraction split unevenly
    got = dask.compute(da_ @ db, np.maximum(da_ @ db + 1.0, 0.0), da.tensordot(dc, db, axes=([1], [0])),
                       da.dot(da_, db), da_.T.dot(da_), da_[:, :6] @ db[:6])
    want = [a @ b, np.maximum(a @ b + 1.0, 0.0), np.tensordot(c, b, axes=([1], [0])), a @ b, a.T @ a, a[:, :6] @ b[:6]]
    for g, w in zip(got, want):
        assert isinstance(g, bz.Tensor)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-4)


def test_where_concatenate_rechunk_slicing_reshape(client):
    x, y = values(np.float32, SHAPE, seed=9), values(np.float32, SHAPE, seed=10)
    dx, dy = chunked(x), chunked(y, chunks=(3, 5))
    got = dask.compute(da.where(dx > dy, dx, 0.0), da.concatenate([dx, dy], axis=1), da.stack([dx, dy]),
                       dx.rechunk((5, 3)) * 2.0, dx[1:5:2, ::-3], dx[::-1, 2], dx.T + dy.T, dx.reshape(60),
                       dx.astype(np.float64) / 3.0, dx[dx > 0])
    want = [np.where(x > y, x, 0.0), np.concatenate([x, y], axis=1), np.stack([x, y]), x * 2.0, x[1:5:2, ::-3],
            x[::-1, 2], x.T + y.T, x.reshape(60), x.astype(np.float64) / 3.0, x[x > 0]]
    for g, w in zip(got, want):
        assert isinstance(g, bz.Tensor)
        assert_matches(g, w.astype(g.dtype))


def test_from_array_of_a_tensor_view(client):
    base = values(np.float32, (10, 6), seed=11)
    t = bz.tensor(base).T[:, 1:]  # a transposed, sliced view: realized once, shipped with the graph
    got = (bzd.from_array(t, chunks=(4, 4)) * 2.0).sum(axis=0).compute()
    np.testing.assert_allclose(got.numpy(), (base.T[:, 1:] * 2.0).astype(np.float64).sum(axis=0), rtol=1e-5)


def test_to_numpy_gives_numpy_chunks(client):
    x = values(np.float32, SHAPE, seed=12)
    got = bzd.to_numpy(chunked(x) + 1.0).compute()
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, x + np.float32(1.0))


# --- one kernel per chunk ---------------------------------------------------


def ten_ops(a):
    y = a * 1.5 + 0.25                 # 2
    y = np.tanh(y) - 0.5               # 4
    y = np.exp(y) / 3.0                # 6
    y = np.maximum(y, 0.1) * y         # 8
    return np.sqrt(y) + 1.0            # 10


@pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference makes no programs and launches no kernels")
def test_a_ten_op_chain_is_one_kernel_per_chunk(client):
    x = values(np.float32, (8 * 1024,), seed=13, specials=False)
    y = ten_ops(chunked(x, chunks=1024))
    for run in range(2):
        bzd.reset_stats(client)
        got = y.compute()
        np.testing.assert_allclose(got.numpy(), ten_ops(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
        per_worker = bzd.stats(client).values()
        # One per chunk (the chain fused), and the final concatenation's
        # join: a kernel on the worker that runs it (Note [Lazy
        # concatenation], runtime/concatenate.cpp).
        assert 1 <= sum(s["kernels_launched"] for s in per_worker) <= 8 + len(per_worker)
        # The chunk's kernel is compiled once per worker and found in its
        # cache after; the join of the chunks a worker holds is one more,
        # whose parts depend on where Dask placed the chunks this time.
        assert all(s["kernels_compiled"] <= (2 if run == 0 else 1) for s in per_worker), list(per_worker)


# --- serialization ----------------------------------------------------------


def layouts():
    m = values(np.float32, (5, 7), seed=14)
    return {
        "float32": (bz.tensor(m), m),
        "int32": (bz.tensor(values(np.int32, (3, 4), seed=15)), values(np.int32, (3, 4), seed=15)),
        "bool": (bz.tensor(values(np.bool_, (9,), seed=16)), values(np.bool_, (9,), seed=16)),
        "bfloat16": (bz.tensor(values(BF16, (4, 4), seed=17)), values(BF16, (4, 4), seed=17)),
        "transposed_sliced": (bz.tensor(m).T[1:6:2, ::-1], m.T[1:6:2, ::-1]),
        "lazy": (bz.exp(bz.tensor(m)) + 1, (np.exp(m.astype(np.float64)) + 1).astype(np.float32)),
        "0-d": (bz.tensor(np.float32(2.5)), np.float32(2.5)),
        "empty": (bz.tensor(np.zeros((0, 3), np.int64)), np.zeros((0, 3), np.int64)),
    }


@pytest.mark.parametrize("name", list(layouts()))
def test_serialization_round_trip(name):
    t, want = layouts()[name]
    header, frames = serialize(t, serializers=["dask"], on_error="raise")
    assert header["serializer"] == "dask" and len(frames) == 1
    assert np.shares_memory(np.frombuffer(frames[0], np.uint8), t.numpy()) or t.size == 0  # braze's buffer, no copy
    back = deserialize(header, [bytes(f) for f in frames])
    assert isinstance(back, bz.Tensor) and back.is_realized and back.device == t.device
    assert_matches(back, want, t.dtype)
    assert_matches(pickle.loads(pickle.dumps(t, protocol=5)), want, t.dtype)


def test_tensors_cross_worker_processes(client):
    a, b = list(client.scheduler_info()["workers"])
    t, want = layouts()["transposed_sliced"]
    on_a = client.scatter(t, workers=[a])
    on_b = client.submit(lambda v: v * 2, on_a, workers=[b])  # a -> b through the dask serializers
    lazy_on_a = client.submit(bz.exp, on_a, workers=[a])  # lazy on a, realized when it leaves
    got, got_exp = client.gather([on_b, client.submit(lambda v: v + 0, lazy_on_a, workers=[b])])
    assert_matches(got, want * 2)
    assert_matches(got_exp, np.exp(want.astype(np.float64)).astype(np.float32))
    assert client.submit(lambda v: type(v).__name__, on_b, workers=[a]).result() == "Tensor"


# --- a worker killed during a computation (last: the nanny restarts it) -------


def slow_double(block, log):
    time.sleep(0.15)
    with open(log, "a") as f:
        f.write("x\n")
    return block * 2


def test_a_killed_worker_s_tasks_rerun(client, tmp_path):
    log = str(tmp_path / "runs")
    x = values(np.float32, (16, 256), seed=18, specials=False)
    d = chunked(x, chunks=(1, 256))  # 16 chunks of 0.15 s over two workers
    y = d.map_blocks(slow_double, log, dtype=np.float32, meta=bzd.meta(np.float32, 2)) + 1.0
    future = client.compute(y)
    victim, deadline = None, time.monotonic() + 30
    while victim is None and time.monotonic() < deadline:  # a worker holding a finished chunk, mid-computation
        held = {w: keys for w, keys in client.has_what().items() if any(y.name in str(k) for k in keys)}
        victim = next(iter(held), None)
        time.sleep(0.01)
    assert victim is not None and not future.done()
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    got = future.result(timeout=60)
    assert_matches(got, x * 2 + 1)
    with open(log) as f:
        runs = len(f.readlines())
    assert runs > 16, "the killed worker's finished chunks were computed again"
    client.wait_for_workers(2, timeout=30)  # the nanny restarted it, with braze registered
    assert pid not in client.run(os.getpid).values()
    assert float((chunked(x) * 2).sum().compute()) == pytest.approx(float((x.astype(np.float64) * 2).sum()), rel=1e-5)
