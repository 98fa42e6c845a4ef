"""What the tests of NumPy programs ported to braze share
(test_numpy100.py, test_from_python_to_numpy.py, test_pdsh_numpy.py): each
program takes `asarray` and `rng`, runs once on NumPy and once on braze with
the same inputs, and every result braze gives is compared with NumPy's."""

import numpy as np
import pytest

import braze as bz


class Inputs:
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


def run_both(program):
    """(braze's results, NumPy's) of program(asarray, rng), braze's realized
    together."""
    recorded = []
    want = program(Inputs(False, recorded), np.random.default_rng(0))
    got = program(Inputs(True, recorded), np.random.default_rng(0))
    bz.realize(*[t for t in leaves(got) if isinstance(t, bz.Tensor)])
    return got, want


def leaves(result):
    if isinstance(result, (list, tuple)):
        return [leaf for r in result for leaf in leaves(r)]
    return [result]


def as_partition(a, kth, axis):
    """a, partitioned at kth along axis, with the parts before and after the
    kth element sorted: equal for any two valid partitions."""
    a = np.moveaxis(np.asarray(a), axis, -1)
    a = np.concatenate([np.sort(a[..., :kth], -1), a[..., kth:kth + 1], np.sort(a[..., kth + 1:], -1)], -1)
    return np.moveaxis(a, -1, axis)


def assert_matches(got, want, what, braze_dtype=None, numpy_result=False, rtol=None, partition=None):
    """got (braze's) is want (NumPy's): a Python value equal and of its type;
    an array a braze tensor (an ndarray where numpy_result: a call that
    leaves braze on purpose) of its shape and dtype (braze_dtype where braze
    differs by design) and values, floats to rtol (1e-9 for float64, 1e-5
    for float32, by default) of each element and of the largest magnitude;
    a partition (kth, axis) compared as one."""
    if not isinstance(want, (np.ndarray, np.generic)):  # a Python value: len(...), a shape, an error's name
        if isinstance(got, bz.Tensor):
            got = got.item()
        assert type(got) is type(want) and got == want, f"{what}: {got!r} != {want!r}"
        return
    if isinstance(want, np.ndarray) and not numpy_result:
        assert isinstance(got, bz.Tensor), f"{what}: braze gave {type(got).__name__}, not a braze tensor"
    got = got.numpy() if isinstance(got, bz.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == (braze_dtype or want.dtype), f"{what}: dtype {got.dtype} != {want.dtype}"
    if partition is not None:
        got, want = as_partition(got, *partition), as_partition(want, *partition)
    if want.dtype.kind == "f":
        rtol = rtol or (1e-9 if got.dtype == np.float64 else 1e-5)
        scale = float(np.max(np.abs(want), initial=0.0, where=np.isfinite(want)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def params(names, xfail):
    """pytest parameters of the names, those in xfail ({name: (exception,
    reason)}) strict xfails: a fix turns them into failures to unmark."""
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, raises=xfail[n][0], reason=xfail[n][1]))
            if n in xfail else n for n in names]
