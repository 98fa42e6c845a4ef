# NPBench's Symmetric rank-k operations (syrk), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/syrk/syrk_numpy.py, then npbench/benchmarks/polybench/syrk/syrk.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/syrk/syrk_numpy.py
import numpy as np


def kernel(alpha, beta, C, A):

    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


# --- npbench/benchmarks/polybench/syrk/syrk.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    C = np.fromfunction(lambda i, j: ((i * j + 2) % N) / M, (N, N),
                        dtype=datatype)
    A = np.fromfunction(lambda i, j: ((i * j + 1) % N) / N, (N, M),
                        dtype=datatype)

    return alpha, beta, C, A
