# NPBench's Covariance (covarian), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/covariance/covariance_numpy.py, then npbench/benchmarks/polybench/covariance/covariance.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/covariance/covariance_numpy.py
import numpy as np


def kernel(M, float_n, data):

    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)

    return cov


# --- npbench/benchmarks/polybench/covariance/covariance.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    float_n = datatype(N)
    data = np.fromfunction(lambda i, j: (i * j) / M, (N, M), dtype=datatype)

    return float_n, data
