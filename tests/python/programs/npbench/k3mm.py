# NPBench's 3 Matrix Multiplications (3mm), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/k3mm/k3mm_numpy.py, then npbench/benchmarks/polybench/k3mm/k3mm.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/k3mm/k3mm_numpy.py
import numpy as np


def kernel(A, B, C, D):

    return A @ B @ C @ D


# --- npbench/benchmarks/polybench/k3mm/k3mm.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(NI, NJ, NK, NL, NM, datatype=np.float64):
    A = np.fromfunction(lambda i, j: ((i * j + 1) % NI) / (5 * NI), (NI, NK),
                        dtype=datatype)
    B = np.fromfunction(lambda i, j: ((i * (j + 1) + 2) % NJ) / (5 * NJ),
                        (NK, NJ),
                        dtype=datatype)
    C = np.fromfunction(lambda i, j: (i * (j + 3) % NL) / (5 * NL), (NJ, NM),
                        dtype=datatype)
    D = np.fromfunction(lambda i, j: ((i * (j + 2) + 2) % NK) / (5 * NK),
                        (NM, NL),
                        dtype=datatype)

    return A, B, C, D
