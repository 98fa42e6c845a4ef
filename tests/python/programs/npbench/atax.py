# NPBench's A transpose times A times x (atax), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/atax/atax_numpy.py, then npbench/benchmarks/polybench/atax/atax.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/atax/atax_numpy.py
import numpy as np


def kernel(A, x):

    return (A @ x) @ A


# --- npbench/benchmarks/polybench/atax/atax.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    fn = datatype(N)
    x = np.fromfunction(lambda i: 1 + (i / fn), (N, ), dtype=datatype)
    A = np.fromfunction(lambda i, j: ((i + j) % N) / (5 * M), (M, N),
                        dtype=datatype)

    return x, A
