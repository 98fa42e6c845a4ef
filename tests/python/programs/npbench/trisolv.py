# NPBench's Triangular solver (trisolv), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/trisolv/trisolv_numpy.py, then npbench/benchmarks/polybench/trisolv/trisolv.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/trisolv/trisolv_numpy.py
import numpy as np


def kernel(L, x, b):

    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


# --- npbench/benchmarks/polybench/trisolv/trisolv.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, datatype=np.float64):
    L = np.fromfunction(lambda i, j: (i + N - j + 1) * 2 / N, (N, N),
                        dtype=datatype)
    x = np.full((N, ), -999, dtype=datatype)
    b = np.fromfunction(lambda i: i, (N, ), dtype=datatype)

    return L, x, b
