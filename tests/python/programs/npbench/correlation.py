# NPBench's Correlation (correlat), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/correlation/correlation_numpy.py, then npbench/benchmarks/polybench/correlation/correlation.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/correlation/correlation_numpy.py
import numpy as np


def kernel(M, float_n, data):

    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]

    return corr


# --- npbench/benchmarks/polybench/correlation/correlation.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    float_n = datatype(N)
    data = np.fromfunction(lambda i, j: (i * j) / M + i, (N, M),
                           dtype=datatype)

    return float_n, data
