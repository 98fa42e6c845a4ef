# NPBench's Cholesky Decomposition - version 2 (cholesky2), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/cholesky2/cholesky2_numpy.py, then npbench/benchmarks/polybench/cholesky2/cholesky2.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/cholesky2/cholesky2_numpy.py
import numpy as np


def kernel(A):
    A[:] = np.linalg.cholesky(A) + np.triu(A, k=1)


# --- npbench/benchmarks/polybench/cholesky2/cholesky2.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, datatype=np.float64):
    A = np.empty((N, N), dtype=datatype)
    for i in range(N):
        A[i, :i + 1] = np.fromfunction(lambda j: (-j % N) / N + 1, (i + 1, ),
                                       dtype=datatype)
        A[i, i + 1:] = 0.0
        A[i, i] = 1.0
    A[:] = A @ np.transpose(A)

    return A
