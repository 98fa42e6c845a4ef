"""Nicolas P. Rougier's "100 numpy exercises" (tests/python/programs/numpy100.py,
from https://github.com/rougier/numpy-100, commit 6447594; MIT License)
ported to braze as a NumPy user would: each solution unchanged but for its
input arrays, which are braze tensors, compared with the same solution on
NumPy.

Not ported, as there is no array computation in them to port:
  1 import statement only; 2 prints version, config; 4 dtype memory sizes;
  5 np.info documentation lookup; 12 np.random under test; 17 Python scalar
  NaN semantics; 23 structured dtype definition; 31 warnings settings only;
  32 complex emath scalars; 33 datetime64 scalar arithmetic; 34 datetime64
  date range; 38 fromiter of generator; 46 structured array fields; 48 dtype
  limits (iinfo/finfo); 49 print options only; 51 nested structured dtype;
  54 reading a file (genfromtxt); 55 ndenumerate/ndindex iteration helpers;
  62 nditer iteration helper; 63 ndarray subclass attribute; 73 structured
  dtype view; 85 ndarray subclass setitem; 91 record array creation.

Each exercise function takes `asarray` and `rng`: it runs once with
np.asarray and a fresh np.random.default_rng(0), which makes and records
the NumPy inputs, then with braze's asarray and another default_rng(0):
braze's asarray checks that it gets the very values NumPy got and makes a
tensor of them. Everything the exercise returns (what it prints) is compared
with NumPy's: an array NumPy returns must be a braze tensor on the braze
side (not an ndarray a call left braze for), of the same shape and dtype
(but for BRAZE_DTYPES: braze's documented result types), its values equal,
floats to 1e-9 relative (float64) or 1e-5 (float32) of each element and of
the array's largest magnitude.

An exercise braze cannot run yet is an xfail(strict=True) whose reason says
what is missing, so that a fix flips it to a failure to be unmarked.
"""

import numpy as np
import pytest

from ported import assert_matches, leaves, params, run_both
from programs.numpy100 import EXERCISES

# Where braze's result dtype differs from NumPy's by design (docs/semantics.md,
# "Result types of ops"): {exercise: {result index: the dtype braze gives}}.
BRAZE_DTYPES = {
    "27": {3: np.float32},  # Z/1/1 of int64: divide of integers gives float32 (NumPy: float64)
    "28": {0: np.float32},  # np.array(0) / np.array(0): the same
    "47": {0: np.float32},  # X + 0.5 of int64 X: a Python float takes float32 (weak scalars)
    "75b": {0: np.float32},  # the mean of int64 windows: float32, as of integer division
}

# What braze cannot run yet: (the exception, why); AssertionError: a wrong result.
_COMPLEX = "braze has no complex dtype: 1j * Z raises ValueError: unsupported dtype 'complex128'"
_AS_STRIDED = ("np.lib.stride_tricks.as_strided (no __array_function__ dispatch) converts the tensor with "
               "np.asarray and returns a NumPy ndarray: the values are right, but the result has left braze")
XFAIL = {
    "27b": (ValueError, _COMPLEX),
    "76": (AssertionError, _AS_STRIDED),
    "81": (AssertionError, _AS_STRIDED),
    "84": (AssertionError, _AS_STRIDED),
}


@pytest.mark.parametrize("name", params(EXERCISES, XFAIL))
def test_exercise_matches_numpy(name):
    got, want = run_both(EXERCISES[name])
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, f"exercise {name}: result {i}", BRAZE_DTYPES.get(name, {}).get(i))
