# NPBench's Nussinov (nussinov), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/nussinov/nussinov_numpy.py, then npbench/benchmarks/polybench/nussinov/nussinov.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/nussinov/nussinov_numpy.py
import numpy as np


def match(b1, b2):
    if b1 + b2 == 3:
        return 1
    else:
        return 0


def kernel(N, seq):

    table = np.zeros((N, N), np.int32)

    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i,
                          j] = max(table[i, j],
                                   table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])

    return table


# --- npbench/benchmarks/polybench/nussinov/nussinov.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, datatype=np.int32):
    seq = np.fromfunction(lambda i: (i + 1) % 4, (N, ), dtype=datatype)

    return seq
