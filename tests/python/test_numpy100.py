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

import braze as bz
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
_UINT32 = "braze has no uint32 dtype: ValueError: unsupported dtype 'uint32'"
_AS_STRIDED = ("np.lib.stride_tricks.as_strided (no __array_function__ dispatch) converts the tensor with "
               "np.asarray and returns a NumPy ndarray: the values are right, but the result has left braze")
XFAIL = {
    "27b": (ValueError, _COMPLEX),
    "53": (AttributeError, "braze tensors have no .view(dtype) (a bit reinterpretation): AttributeError: "
                           "'Tensor' object has no attribute 'view'"),
    "66b": (ValueError, _UINT32 + " (I.astype(np.uint32))"),
    "76": (AssertionError, _AS_STRIDED),
    "81": (ValueError, _UINT32 + " (bz.asarray of np.arange(1, 15, dtype=np.uint32))"),
    "84": (AssertionError, _AS_STRIDED),
}


class _Inputs:
    """The `asarray` of a run: the reference run records what it makes, the
    braze run checks it gets the same values and makes tensors of them."""

    def __init__(self, braze_run, recorded):
        self.braze_run, self.recorded, self.i = braze_run, recorded, 0

    def __call__(self, a):
        a = np.asarray(a)
        if not self.braze_run:
            self.recorded.append(a.copy())
            return np.array(a, copy=True)
        want = self.recorded[self.i]
        self.i += 1
        assert a.dtype == want.dtype and a.shape == want.shape
        np.testing.assert_array_equal(a, want, err_msg="braze's input differs from NumPy's")
        return bz.asarray(a)


def _leaves(result):
    if isinstance(result, (list, tuple)):
        return [leaf for r in result for leaf in _leaves(r)]
    return [result]


def _assert_matches(got, want, what, braze_dtype=None):
    if not isinstance(want, (np.ndarray, np.generic)):  # a Python value: len(...), allclose, an error's name
        if isinstance(got, bz.Tensor):
            got = got.item()
        assert type(got) is type(want) and got == want, f"{what}: {got!r} != {want!r}"
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, bz.Tensor), f"{what}: braze gave {type(got).__name__}, not a braze tensor"
    else:  # a NumPy scalar: a 0-d tensor or a scalar
        assert isinstance(want, np.generic), f"{what}: unexpected {type(want)}"
    got = got.numpy() if isinstance(got, bz.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == (braze_dtype or want.dtype), f"{what}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind == "f":
        rtol = 1e-9 if got.dtype == np.float64 else 1e-5
        scale = float(np.max(np.abs(want), initial=0.0, where=np.isfinite(want)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _param(name):
    if name in XFAIL:
        raises, reason = XFAIL[name]
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=raises, reason=reason))
    return name


@pytest.mark.parametrize("name", [_param(n) for n in EXERCISES])
def test_exercise_matches_numpy(name):
    solution = EXERCISES[name]
    recorded = []
    want = _leaves(solution(_Inputs(False, recorded), np.random.default_rng(0)))
    got = _leaves(solution(_Inputs(True, recorded), np.random.default_rng(0)))
    bz.realize(*[t for t in got if isinstance(t, bz.Tensor)])
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        _assert_matches(g, w, f"exercise {name}: result {i}", BRAZE_DTYPES.get(name, {}).get(i))
