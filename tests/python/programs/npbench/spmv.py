# NPBench's Sparse Matrix-Vector Multiplication (spmv), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/spmv/spmv_numpy.py, then npbench/benchmarks/spmv/spmv.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/spmv/spmv_numpy.py
# Sparse Matrix-Vector Multiplication (SpMV)
import numpy as np


# Matrix-Vector Multiplication with the matrix given in Compressed Sparse Row
# (CSR) format
def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)

    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]

    return y


# --- npbench/benchmarks/spmv/spmv.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(M, N, nnz):
    from numpy.random import default_rng
    rng = default_rng(42)

    x = rng.random((N, ))

    from scipy.sparse import random

    matrix = random(M,
                    N,
                    density=nnz / (M * N),
                    format='csr',
                    dtype=np.float64,
                    random_state=rng)
    rows = np.uint32(matrix.indptr)
    cols = np.uint32(matrix.indices)
    vals = matrix.data

    return rows, cols, vals, x
