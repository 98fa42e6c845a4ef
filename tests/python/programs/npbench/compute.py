# NPBench's Compute (clipping), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/compute/compute_numpy.py, then npbench/benchmarks/compute/compute.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/compute/compute_numpy.py
# https://cython.readthedocs.io/en/latest/src/userguide/numpy_tutorial.html

import numpy as np


def compute(array_1, array_2, a, b, c):
    return np.clip(array_1, 2, 10) * a + array_2 * b + c


# --- npbench/benchmarks/compute/compute.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N):
    from numpy.random import default_rng
    rng = default_rng(42)
    array_1 = rng.uniform(0, 1000, size=(M, N)).astype(np.int64)
    array_2 = rng.uniform(0, 1000, size=(M, N)).astype(np.int64)
    a = np.int64(4)
    b = np.int64(3)
    c = np.int64(9)
    return array_1, array_2, a, b, c
