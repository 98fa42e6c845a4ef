# NPBench's General matrix-matrix multiplication (gemm), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/gemm/gemm_numpy.py, then npbench/benchmarks/polybench/gemm/gemm.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/gemm/gemm_numpy.py
import numpy as np


def kernel(alpha, beta, C, A, B):

    C[:] = alpha * A @ B + beta * C


# --- npbench/benchmarks/polybench/gemm/gemm.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(NI, NJ, NK, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    C = np.fromfunction(lambda i, j: ((i * j + 1) % NI) / NI, (NI, NJ),
                        dtype=datatype)
    A = np.fromfunction(lambda i, k: (i * (k + 1) % NK) / NK, (NI, NK),
                        dtype=datatype)
    B = np.fromfunction(lambda k, j: (k * (j + 2) % NJ) / NJ, (NK, NJ),
                        dtype=datatype)

    return alpha, beta, C, A, B
