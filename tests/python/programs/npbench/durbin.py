# NPBench's Toeplitz system solver (durbin), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/durbin/durbin_numpy.py, then npbench/benchmarks/polybench/durbin/durbin.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/durbin/durbin_numpy.py
import numpy as np


def kernel(r):

    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]

    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha

    return y


# --- npbench/benchmarks/polybench/durbin/durbin.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, datatype=np.float64):
    r = np.fromfunction(lambda i: N + 1 - i, (N, ), dtype=datatype)
    return r
