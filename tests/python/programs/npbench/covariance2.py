# NPBench's Covariance2 (covarian2), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/covariance2/covariance2_numpy.py, then npbench/benchmarks/polybench/covariance2/covariance2.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/covariance2/covariance2_numpy.py
import numpy as np

def kernel(M, float_n, data):
    return np.cov(np.transpose(data))


# --- npbench/benchmarks/polybench/covariance2/covariance2.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, datatype=np.float64):
    float_n = datatype(N)
    data = np.fromfunction(lambda i, j: (i * j) / M, (N, M), dtype=datatype)

    return float_n, data
