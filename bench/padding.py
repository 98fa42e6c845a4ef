"""Padding and joining beside NumPy, in one process: padding is a view
(Note [Windows] in graph/shape.h) and a few parts join lazily (Note [Lazy
concatenation] in runtime/concatenate.cpp), so a stencil over np.pad(u, 1)
and a concatenation of views are single kernels that load under a mask.

Workloads, on [N, N] float32 (BENCH_N, default 4096):
  stencil_constant  five-point stencil of np.pad(u, 1)'s slices
  stencil_edge      the same over np.pad(u, 1, mode="edge")
  pad               np.pad(u, ((3, 3), (5, 5))) alone
  concatenate       np.concatenate([u, u[:, ::-1]], axis=1)

Prints ms (best of BENCH_REPS rounds, in turn) and braze's speedup.
Run: PYTHONPATH=build/python .venv/bin/python bench/padding.py
"""
import os

import numpy as np

import braze as bz
from timing import best_in_turn


def stencil(u, mode):
    p = np.pad(u, 1, mode=mode)
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]


WORKLOADS = {
    "stencil_constant": lambda u: stencil(u, "constant"),
    "stencil_edge": lambda u: stencil(u, "edge"),
    "pad": lambda u: np.pad(u, ((3, 3), (5, 5))),
    "concatenate": lambda u: np.concatenate([u, u[:, ::-1]], axis=1),
}


def main():
    n = int(os.environ.get("BENCH_N", 4096))
    u = np.random.default_rng(0).random((n, n)).astype(np.float32)
    t = bz.tensor(u)
    print(f"{'workload':18} {'numpy ms':>10} {'braze ms':>10} {'braze is':>10}")
    for name, f in WORKLOADS.items():
        np.testing.assert_allclose(np.asarray(f(t)), f(u), rtol=1e-5, atol=1e-5)
        r = best_in_turn({"numpy": lambda: f(u), "braze": lambda: np.asarray(f(t))})
        print(f"{name:18} {r['numpy'] * 1e3:10.2f} {r['braze'] * 1e3:10.2f} {r['numpy'] / r['braze']:9.2f}x")


if __name__ == "__main__":
    main()
