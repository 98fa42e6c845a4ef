# NPBench's Floyd-Warshall (floydwar), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/floyd_warshall/floyd_warshall_numpy.py, then npbench/benchmarks/polybench/floyd_warshall/floyd_warshall.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/floyd_warshall/floyd_warshall_numpy.py
import numpy as np


def kernel(path):

    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


# --- npbench/benchmarks/polybench/floyd_warshall/floyd_warshall.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, datatype=np.int32):
    path = np.fromfunction(lambda i, j: i * j % 7 + 1, (N, N), dtype=datatype)
    for i in range(N):
        for j in range(N):
            if (i + j) % 13 == 0 or (i + j) % 7 == 0 or (i + j) % 11 == 0:
                path[i, j] = 999

    return path
