"""Dask arrays with braze chunks beside Dask arrays with NumPy chunks, on the
same dask.distributed LocalCluster (issue 27; docs/distributed.md).

pipeline: gelu(x) = 0.5*x*(1+tanh(0.7978845608*(x+0.044715*x*x*x))) summed
  along each row, x float32 of --gb GB in total (default 4), 64 MB chunks
  of whole rows: Dask's blockwise step and the chunk step of its tree
  reduction, per chunk one braze kernel against ten NumPy passes. x*x*x,
  not x**3: NumPy's float32 power with exponent 3 calls powf per element
  (1 s for 16M values here, 50x its two multiplications), which would
  flatter braze (which makes x**3 two multiplications anyway).
matmul: A @ B, float32 [--n, --n] (default 4096) in [--n/4]^2 blocks.

The inputs are made and persisted on the workers first (NumPy chunks, and
the same values as braze chunks), so the timings are the computation, not
the data's making. For 1 and 2 workers (a cluster each; 1 thread and
BRAZE_NUM_THREADS=1 per worker): the best of BENCH_REPS (default 3 here)
runs after a warm-up, the two systems in turn; GB/s of input read, the
roofline ratio against the machine's streaming copy (all cores: shared/
bench/WORKLOADS.md), GFLOP/s, braze's kernels per chunk (from the
workers' counters), braze's speedup and the 2-worker scaling. The
braze result is checked against NumPy's first.

Run: PYTHONPATH=build/python .venv/bin/python bench/dask_arrays.py [--gb 0.5] [--n 2048]
Needs dask[array] and distributed (requirements-dev.txt). Holds both copies of x
in the workers' memory: 2 x --gb GB.
"""
import argparse
import logging
import os

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster, wait

import braze as bz
import braze.dask as bzd
from timing import best_in_turn

REPS = int(os.environ.get("BENCH_REPS", 3))  # 4 GB runs take seconds each
CHUNK_BYTES = 64 << 20
ROW = 8192  # float32 elements per row: 32 KB
WORKER_ENV = {"BRAZE_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * (x * x * x))))


def pipeline(x):
    return gelu(x).sum(axis=1)


def persisted(client, arr):
    arr = arr.persist()
    wait(arr)
    return arr


def kernels_per_chunk(client, f, chunks):
    bzd.reset_stats(client)
    f()
    return sum(s["kernels_launched"] for s in bzd.stats(client).values()) / chunks


def run(n_workers, gb, n):
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=":0", env=WORKER_ENV, silence_logs=logging.CRITICAL)
    client = bzd.setup(Client(cluster))
    try:
        rows = max(1, int(gb * 1e9) // (ROW * 4))
        chunk_rows = max(1, CHUNK_BYTES // (ROW * 4))
        rng = da.random.default_rng(0)
        x_np = persisted(client, rng.standard_normal((rows, ROW), chunks=(chunk_rows, ROW), dtype=np.float32))
        x_bz = persisted(client, bzd.from_dask(x_np))
        got, want = dask.compute(pipeline(x_bz), pipeline(x_np))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, atol=1e-2 * ROW ** 0.5)
        t = best_in_turn({"numpy": lambda: pipeline(x_np).compute(), "braze": lambda: pipeline(x_bz).compute()}, REPS)
        per_chunk = kernels_per_chunk(client, lambda: pipeline(x_bz).compute(), x_bz.npartitions)
        del x_np, x_bz
        block = max(1, n // 4)
        a_np = persisted(client, rng.standard_normal((n, n), chunks=block, dtype=np.float32))
        b_np = persisted(client, rng.standard_normal((n, n), chunks=block, dtype=np.float32))
        a_bz, b_bz = persisted(client, bzd.from_dask(a_np)), persisted(client, bzd.from_dask(b_np))
        got, want = dask.compute(a_bz @ b_bz, a_np @ b_np)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, atol=1e-3 * n ** 0.5)
        m = best_in_turn({"numpy": lambda: (a_np @ b_np).compute(), "braze": lambda: (a_bz @ b_bz).compute()}, REPS)
        return {"pipeline": t, "matmul": m, "kernels_per_chunk": per_chunk, "bytes": rows * ROW * 4}
    finally:
        client.close()
        cluster.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gb", type=float, default=4.0, help="GB of float32 input to the pipeline (default 4)")
    p.add_argument("--n", type=int, default=4096, help="matmul size n (n x n @ n x n, default 4096)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="cluster sizes (default 1 2)")
    args = p.parse_args()
    bandwidth = bz._core._copy_bandwidth()  # bytes/s, all cores: the machine's
    print(f"dask {dask.__version__}, copy bandwidth {bandwidth / 1e9:.1f} GB/s, best of {REPS}, "
          f"pipeline {args.gb:g} GB float32 in {CHUNK_BYTES >> 20} MB chunks, "
          f"matmul {args.n}^2 in {max(1, args.n // 4)}^2 blocks")
    print(f"{'workload':9} {'workers':>7} {'system':>6} {'ms':>9} {'GB/s':>7} {'roofline':>8} {'GFLOP/s':>8} "
          f"{'kernels/chunk':>13} {'braze is':>9}")
    results = {}
    for w in args.workers:
        r = results[w] = run(w, args.gb, args.n)
        for name in ("numpy", "braze"):
            s = r["pipeline"][name]
            kpc = f"{r['kernels_per_chunk']:13.2f}" if name == "braze" else f"{'':13}"
            speed = f"{r['pipeline']['numpy'] / s:8.2f}x" if name == "braze" else ""
            print(f"{'pipeline':9} {w:7d} {name:>6} {s * 1e3:9.1f} {r['bytes'] / s / 1e9:7.2f} "
                  f"{r['bytes'] / bandwidth / s:8.2f} {'':>8} {kpc} {speed:>9}")
        for name in ("numpy", "braze"):
            s = r["matmul"][name]
            speed = f"{r['matmul']['numpy'] / s:8.2f}x" if name == "braze" else ""
            print(f"{'matmul':9} {w:7d} {name:>6} {s * 1e3:9.1f} {'':>7} {'':>8} {2 * args.n ** 3 / s / 1e9:8.1f} "
                  f"{'':13} {speed:>9}")
    if 1 in results and 2 in results:
        for workload in ("pipeline", "matmul"):
            ratios = {name: results[1][workload][name] / results[2][workload][name] for name in ("numpy", "braze")}
            print(f"scaling 1 -> 2 workers, {workload}: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
