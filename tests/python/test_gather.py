"""Advanced indexing, take, take_along_axis and nonzero against NumPy
(python/braze/_gather.py): index arrays, masks and their mixes with basic
indices, every dtype, lazy operands realized in one program, and errors."""

import numpy as np
import pytest

import braze as bz
from conftest import DTYPES, DTYPE_IDS, make_layout, values

KEYS = [
    ("array", lambda a: np.array([3, 0, 3, -1])), ("list", lambda a: [1, 2]),
    ("array_2d", lambda a: np.array([[0, 1], [2, 3]])), ("mask", lambda a: a.astype(np.float64) > 0),
    ("row_mask", lambda a: np.array([True, False, True, False])),
    ("mixed", lambda a: (slice(1, None), np.array([4, 0]))), ("pair", lambda a: (np.array([0, 3]), np.array([1, 4]))),
    ("newaxis", lambda a: (None, np.array([2]))), ("empty", lambda a: np.array([], dtype=np.int64)),
]


@pytest.mark.parametrize("name, make_key", KEYS, ids=[k[0] for k in KEYS])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_advanced_indexing_matches_numpy(name, make_key, dtype):
    a = values(dtype, (4, 5), seed=1)
    key = make_key(a)
    got = make_layout("transposed", a)[key]
    want = a[key]
    assert got.dtype == want.dtype and tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.numpy().view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def test_index_tensors_and_lazy_operands_are_realized_together():
    w = bz.tensor(values(np.float32, (10, 4), seed=2, specials=False))
    ids = bz.tensor(np.array([[1, 8], [0, 0]], np.int32)) + 1  # lazy
    bz.reset_stats()
    emb = (w * 2.0)[ids]
    assert bz.stats()["realizations"] == 1 and emb.is_realized
    np.testing.assert_array_equal(emb.numpy(), (w.numpy() * 2)[np.array([[2, 9], [1, 1]])])
    h = emb.sum(axis=-1) + 1.0  # and what follows is lazy again
    assert not h.is_realized


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_and_take_along_axis(axis):
    a = values(np.int32, (3, 4), seed=3)
    idx = np.array([2, 0, 1])
    np.testing.assert_array_equal(bz.take(bz.tensor(a), idx, axis=axis).numpy(), np.take(a, idx, axis=axis))
    np.testing.assert_array_equal(np.take(bz.tensor(a), bz.tensor(idx), axis=axis).numpy(), np.take(a, idx, axis))
    if axis is not None:
        order = np.argsort(a, axis=axis)
        np.testing.assert_array_equal(bz.take_along_axis(bz.tensor(a), order, axis).numpy(),
                                      np.take_along_axis(a, order, axis))


def test_nonzero_family_and_one_argument_where():
    a = values(np.float32, (3, 4), seed=4)
    t = bz.tensor(a)
    for got, want in zip(bz.nonzero(t), np.nonzero(a)):
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(np.where(t > 0), np.where(a > 0)):
        assert isinstance(got, bz.Tensor)
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(bz.argwhere(t).numpy(), np.argwhere(a))
    np.testing.assert_array_equal(bz.flatnonzero(t).numpy(), np.flatnonzero(a))


def test_errors_name_the_operation_and_braze_keeps_working(monkeypatch):
    t = bz.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(IndexError, match=r"^indexing: index 5 is out of bounds for axis 0 with size 2 \(tensor of shape"):
        t[np.array([5])]
    with pytest.raises(IndexError, match=r"^indexing: .*boolean index did not match"):
        t[np.array([True, False, True])]
    with pytest.raises(IndexError, match=r"^take: "):
        bz.take(t, [7])
    with pytest.raises(IndexError, match=r"^indexing: only integers, slices"):  # NumPy's error for a float
        t[1.5]
    monkeypatch.setenv("BRAZE_CUDA", "emulate")
    c = bz.tensor(np.zeros(3, np.float32), device="cuda")
    with pytest.raises(TypeError, match=r"^indexing: tensors on cuda:0 are not supported yet"):
        c[np.array([0])]
    assert float(t[1, 2]) == 5.0
