# NPBench's Bincojugate Gradient Method (bicg), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/bicg/bicg_numpy.py, then npbench/benchmarks/polybench/bicg/bicg.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/bicg/bicg_numpy.py
import numpy as np


def kernel(A, p, r):

    return r @ A, A @ p


# --- npbench/benchmarks/polybench/bicg/bicg.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    A = np.fromfunction(lambda i, j: (i * (j + 1) % N) / N, (N, M),
                        dtype=datatype)
    p = np.fromfunction(lambda i: (i % M) / M, (M, ), dtype=datatype)
    r = np.fromfunction(lambda i: (i % N) / N, (N, ), dtype=datatype)

    return A, p, r
