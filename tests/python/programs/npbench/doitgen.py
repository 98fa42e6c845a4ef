# NPBench's Multiresolution analysis kernel (doitgen), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/doitgen/doitgen_numpy.py, then npbench/benchmarks/polybench/doitgen/doitgen.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/doitgen/doitgen_numpy.py
import numpy as np


def kernel(NR, NQ, NP, A, C4):

    # for r in range(NR):
    #     for q in range(NQ):
    #         sum[:] = A[r, q, :] @ C4
    #         A[r, q, :] = sum
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))


# --- npbench/benchmarks/polybench/doitgen/doitgen.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(NR, NQ, NP, datatype=np.float64):
    A = np.fromfunction(lambda i, j, k: ((i * j + k) % NP) / NP, (NR, NQ, NP),
                        dtype=datatype)
    C4 = np.fromfunction(lambda i, j: (i * j % NP) / NP, (NP, NP),
                         dtype=datatype)

    return A, C4
