# NPBench's 2-D Finite Different Time Domain Kernel (fdtd_2d), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/polybench/fdtd_2d/fdtd_2d_numpy.py, then npbench/benchmarks/polybench/fdtd_2d/fdtd_2d.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/polybench/fdtd_2d/fdtd_2d_numpy.py
import numpy as np


def kernel(TMAX, ex, ey, hz, _fict_):

    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] -
                               ey[:-1, :-1])


# --- npbench/benchmarks/polybench/fdtd_2d/fdtd_2d.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(TMAX, NX, NY, datatype=np.float64):
    ex = np.fromfunction(lambda i, j: (i * (j + 1)) / NX, (NX, NY),
                         dtype=datatype)
    ey = np.fromfunction(lambda i, j: (i * (j + 2)) / NY, (NX, NY),
                         dtype=datatype)
    hz = np.fromfunction(lambda i, j: (i * (j + 3)) / NX, (NX, NY),
                         dtype=datatype)
    _fict_ = np.fromfunction(lambda i: i, (TMAX, ), dtype=datatype)

    return ex, ey, hz, _fict_
