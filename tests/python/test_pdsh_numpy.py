"""The NumPy chapter (notebooks 02.02-02.08) of Jake VanderPlas's "Python
Data Science Handbook" (tests/python/programs/pdsh_numpy.py, from
https://github.com/jakevdp/PythonDataScienceHandbook, commit d662314; code
under the MIT License) ported to braze as a NumPy user would: each section's
code cells unchanged but for the arrays they make, which are braze tensors,
compared with the same code on NumPy.

Not ported: cells that only plot (plt.*), time (%timeit), read data files or
use pandas/vega_datasets (the data are seeded random stand-ins of the same
shape), or hold no array (sorted(L), bool(42), bin(42)).

Each section function takes `asarray` and `rng`: it runs once with
np.asarray and a fresh np.random.default_rng(0), which makes and records the
NumPy inputs, then with braze's asarray and another default_rng(0): braze's
asarray checks that it gets the very values NumPy got and makes a tensor of
them. Everything the section displays is compared with NumPy's: an array
NumPy returns must be a braze tensor on the braze side (not an ndarray a call
left braze for), of the same shape and dtype (but for BRAZE_DTYPES: braze's
documented result types), its values equal, floats to 1e-9 relative
(float64) or 1e-5 (float32) of each element and of the array's largest
magnitude. The result of np.partition / np.argpartition is compared as a
partition (PARTITIONS): the same kth element, and the same elements before
and after it, in any order.

A section braze cannot run yet is an xfail(strict=True) whose reason says
what is missing, so that a fix flips it to a failure to be unmarked.
"""

import numpy as np
import pytest

from ported import assert_matches, leaves, params, run_both
from programs.pdsh_numpy import SECTIONS

# Where braze's result dtype differs from NumPy's by design (docs/semantics.md,
# "Result types of ops"): {section: {result index: the dtype braze gives}}.
_F32 = np.float32
BRAZE_DTYPES = {
    # 1.0 / values of int64: divide of integers gives float32 (NumPy: float64)
    "ufuncs_introducing": {1: _F32, 2: _F32},  # and np.arange(5) / np.arange(1, 6)
    # x / 2 of int64; -(0.5*x + 1) ** 2: a Python float takes float32 (weak scalars)
    "ufuncs_arithmetic": {4: _F32, 9: _F32},
    # arcsin, arccos, arctan of int64 (ToFloat ops)
    "ufuncs_trigonometric": {5: _F32, 6: _F32, 7: _F32},
    # exp, exp2, log, log2, log10 of int64 (ToFloat); np.power(3., x): a Python float
    "ufuncs_exponents_logarithms": {1: _F32, 2: _F32, 3: _F32, 5: _F32, 6: _F32, 7: _F32},
    # mean and std of int64 give float32; so do np.percentile and np.median of
    # int64 (as mean, though docs/semantics.md does not list them)
    "aggregates_president_heights": {1: _F32, 2: _F32, 5: _F32, 6: _F32, 7: _F32},
}

# Float64 results whose values braze computes in float32 by design:
# {section: {result index}}, compared to float32's 1e-5.
BRAZE_FLOAT32_VALUES = {
    # compute_reciprocals: output[i] = 1.0 / values[i] of an int64 element is
    # a float32 divide (as above), stored into the float64 `output`
    "ufuncs_introducing": {0},
}

# Results that are partitions: {section: {result index: (kth, axis)}}.
PARTITIONS = {
    "sorting_partitioning": {0: (3, -1), 1: (2, 1)},
    "sorting_knn": {7: (3, 1)},  # np.argpartition(dist_sq, K + 1, axis=1)
}

# What braze cannot run yet: (the exception, why); AssertionError: a wrong result.
XFAIL = {
    "ufuncs_absolute_complex": (ValueError, "braze has no complex dtype: bz.asarray of np.array([3 - 4j, ...]) raises "
                                            "ValueError: unsupported dtype 'complex128'"),
    "ufuncs_specialized": (TypeError, "scipy.special ufuncs (gamma, gammaln, beta, erf, erfc, erfinv) on a tensor: "
                                      "braze's __array_ufunc__ refuses them: TypeError: numpy.gamma: braze has no "
                                      "equivalent; convert with np.asarray(t) or t.numpy() first if a NumPy result is "
                                      "meant"),
}


@pytest.mark.parametrize("name", params(SECTIONS, XFAIL))
def test_section_matches_numpy(name):
    got, want = run_both(SECTIONS[name])
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = leaves(g), leaves(w)
        assert len(g) == len(w), f"section {name}: result {i}: {len(g)} values, not {len(w)}"
        for j, (gj, wj) in enumerate(zip(g, w)):
            what = f"section {name}: result {i}" + (f"[{j}]" if len(w) > 1 else "")
            assert_matches(gj, wj, what, BRAZE_DTYPES.get(name, {}).get(i), partition=PARTITIONS.get(name, {}).get(i),
                           rtol=1e-5 if i in BRAZE_FLOAT32_VALUES.get(name, ()) else None)
