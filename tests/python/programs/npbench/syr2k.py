# NPBench's Symmetric rank-2k operations (syr2k), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/syr2k/syr2k_numpy.py, then npbench/benchmarks/polybench/syr2k/syr2k.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/syr2k/syr2k_numpy.py
import numpy as np


def kernel(alpha, beta, C, A, B):

    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += (A[:i + 1, k] * alpha * B[i, k] +
                             B[:i + 1, k] * alpha * A[i, k])


# --- npbench/benchmarks/polybench/syr2k/syr2k.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    C = np.fromfunction(lambda i, j: ((i * j + 3) % N) / M, (N, N),
                        dtype=datatype)
    A = np.fromfunction(lambda i, j: ((i * j + 1) % N) / N, (N, M),
                        dtype=datatype)
    B = np.fromfunction(lambda i, j: ((i * j + 2) % M) / M, (N, M),
                        dtype=datatype)

    return alpha, beta, C, A, B
