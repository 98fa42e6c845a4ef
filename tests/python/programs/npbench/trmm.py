# NPBench's Triangular matrix-multiply (trmm), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/trmm/trmm_numpy.py, then npbench/benchmarks/polybench/trmm/trmm.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/trmm/trmm_numpy.py
import numpy as np


def kernel(alpha, A, B):

    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


# --- npbench/benchmarks/polybench/trmm/trmm.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    alpha = datatype(1.5)
    A = np.fromfunction(lambda i, j: ((i * j) % M) / M, (M, M), dtype=datatype)
    for i in range(M):
        A[i, i] = 1.0
    B = np.fromfunction(lambda i, j: ((N + i - j) % N) / N, (M, N),
                        dtype=datatype)

    return alpha, A, B
