# NPBench's 2 Matrix Multiplications (2mm), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/k2mm/k2mm_numpy.py, then npbench/benchmarks/polybench/k2mm/k2mm.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/k2mm/k2mm_numpy.py
import numpy as np


def kernel(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D


# --- npbench/benchmarks/polybench/k2mm/k2mm.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(NI, NJ, NK, NL, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    A = np.fromfunction(lambda i, j: ((i * j + 1) % NI) / NI, (NI, NK),
                        dtype=datatype)
    B = np.fromfunction(lambda i, j: (i * (j + 1) % NJ) / NJ, (NK, NJ),
                        dtype=datatype)
    C = np.fromfunction(lambda i, j: ((i * (j + 3) + 1) % NL) / NL, (NJ, NL),
                        dtype=datatype)
    D = np.fromfunction(lambda i, j: (i * (j + 2) % NK) / NK, (NI, NL),
                        dtype=datatype)

    return alpha, beta, A, B, C, D
