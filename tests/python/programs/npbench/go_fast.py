# NPBench's GoFast (npgofast), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/go_fast/go_fast_numpy.py, then npbench/benchmarks/go_fast/go_fast.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/go_fast/go_fast_numpy.py
# https://numba.readthedocs.io/en/stable/user/5minguide.html

import numpy as np


def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


# --- npbench/benchmarks/go_fast/go_fast.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N):
    from numpy.random import default_rng
    rng = default_rng(42)
    x = rng.random((N, N), dtype=np.float64)
    return x
