# NPBench's 2-D Seidel stencil computation (seidel2d), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/seidel_2d/seidel_2d_numpy.py, then npbench/benchmarks/polybench/seidel_2d/seidel_2d.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/seidel_2d/seidel_2d_numpy.py
import numpy as np


def kernel(TSTEPS, N, A):

    for t in range(0, TSTEPS - 1):
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] +
                           A[i, 2:] + A[i + 1, :-2] + A[i + 1, 1:-1] +
                           A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


# --- npbench/benchmarks/polybench/seidel_2d/seidel_2d.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, datatype=np.float64):
    A = np.fromfunction(lambda i, j: (i * (j + 2) + 2) / N, (N, N),
                        dtype=datatype)

    return A
