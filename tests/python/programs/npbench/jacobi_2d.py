# NPBench's 2-D Jacobi stencil computation (jacobi2d), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/jacobi_2d/jacobi_2d_numpy.py, then npbench/benchmarks/polybench/jacobi_2d/jacobi_2d.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/jacobi_2d/jacobi_2d_numpy.py
import numpy as np


def kernel(TSTEPS, A, B):

    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                               A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] +
                               B[2:, 1:-1] + B[:-2, 1:-1])


# --- npbench/benchmarks/polybench/jacobi_2d/jacobi_2d.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, datatype=np.float64):
    A = np.fromfunction(lambda i, j: i * (j + 2) / N, (N, N), dtype=datatype)
    B = np.fromfunction(lambda i, j: i * (j + 3) / N, (N, N), dtype=datatype)

    return A, B
