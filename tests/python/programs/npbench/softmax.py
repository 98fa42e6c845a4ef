# NPBench's Softmax (softmax), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/deep_learning/softmax/softmax_numpy.py, then npbench/benchmarks/deep_learning/softmax/softmax.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/deep_learning/softmax/softmax_numpy.py
import numpy as np


# Numerically-stable version of softmax
def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum


# --- npbench/benchmarks/deep_learning/softmax/softmax.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N, H, SM):
    from numpy.random import default_rng
    rng = default_rng(42)
    x = rng.random((N, H, SM, SM), dtype=np.float32)
    return x
