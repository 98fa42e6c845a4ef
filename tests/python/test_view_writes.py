"""Views made by basic indexing write through to their base, as NumPy's
(python/braze/_views.py): each case runs on a NumPy array and on a braze
tensor of the same values and compares the base and every view."""

import gc

import numpy as np
import pytest

import braze as bz
from braze import _views


def through_a_view_siblings_see_it(a, xp):
    c = a[1:-1, 1:-1]
    n = a[0:-2, 1:-1]
    c[:] = 7
    return [c, n]


def chained_indexing(a, xp):
    a[2][3] = -1
    a[1][::2] = 0.5
    return []


def augmented_on_a_view(a, xp):
    c = a[:, 1]
    c += 100
    c *= 2
    return [c]


def a_view_of_a_view(a, xp):
    c = a[1:]
    d = c[:, ::2]
    d[0] = 5
    return [c, d]


def the_base_written_views_see_it(a, xp):
    c = a[1]
    a[1, 2] = 99
    a += 1
    return [c]


def out_is_a_view(a, xp):
    c = a[2:]
    np.multiply(c, 2, out=c)
    np.add(c, a[:2], out=c)
    return [c]


def a_scalar_index_writes_nothing(a, xp):
    x = a[0, 0]
    x += 5  # NumPy: a scalar, rebound alone
    return [x]


def ellipsis_and_new_axes(a, xp):
    c = a[None, 1]
    c[0, 0] = -7
    e = a[..., 0]
    e *= 3
    return [c, e]


def negative_steps(a, xp):
    c = a[::-1, ::-2]
    c[1] = 0
    c[2, 0] += 1
    return [c]


def fancy_indexing_copies(a, xp):
    c = a[[0, 2]]
    c[:] = 0  # a copy in NumPy: a unchanged
    m = a[a > 10]
    m += 1
    return [c, m]


def a_loop_of_updates(a, xp):
    row = a[0]
    col = a[:, -1]
    for i in range(3):
        row[i] = col[i + 1] * 2
        col[0] += row[i]
    return [row, col]


CASES = [through_a_view_siblings_see_it, chained_indexing, augmented_on_a_view, a_view_of_a_view,
         the_base_written_views_see_it, out_is_a_view, a_scalar_index_writes_nothing, ellipsis_and_new_axes,
         negative_steps, fancy_indexing_copies, a_loop_of_updates]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_like_numpy(case, dtype):
    a = np.arange(20).reshape(4, 5).astype(dtype)
    b = bz.asarray(a.copy())
    views_np, views_bz = case(a, np), case(b, bz)
    np.testing.assert_array_equal(b.numpy(), a)
    assert b.dtype == a.dtype
    for v, w in zip(views_np, views_bz):
        np.testing.assert_array_equal(np.asarray(w.numpy() if isinstance(w, bz.Tensor) else w), np.asarray(v))


def test_views_are_forgotten_with_them_and_hold_their_base():
    before = len(_views._base_of)
    a = bz.asarray(np.zeros((3, 3)))
    c = a[1:]
    d = c[0]
    assert _views.tracked(c) and _views.tracked(d) and not _views.tracked(a)
    del a  # the views hold their base, as a NumPy view's .base
    d[1] = 4.0
    np.testing.assert_array_equal(c.numpy(), [[0, 4, 0], [0, 0, 0]])
    del c, d
    gc.collect()
    assert len(_views._base_of) == before and not any(
        bid for bid, views in _views._views_of.items() if not views)


def test_other_views_stay_read_only_with_a_clear_error():
    a = bz.asarray(np.arange(6.0))
    r = a.reshape((2, 3))
    with pytest.raises(TypeError, match="made by reshape, transpose or another movement function"):
        r[0, 0] = 1.0
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0))  # nothing written, braze keeps working
    a[0:2][1] = 9.0
    assert float(a[1]) == 9.0


def test_copyto_into_a_view_writes_the_base():
    a = bz.asarray(np.zeros((2, 4), np.float32))
    bz.copyto(a[1, 1:3], np.array([1.0, 2.0], np.float32))
    np.copyto(a[0, ::3], np.float32(5.0))
    np.testing.assert_array_equal(a.numpy(), [[5, 0, 0, 5], [0, 1, 2, 0]])
