"""Views made by basic indexing and by the movement functions NumPy makes
views with write through to their base, as NumPy's (python/braze/_views.py): each case runs on a NumPy array and on a braze
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


def transposes(a, xp):
    t = a.T
    t[0] = -1
    t[1:3, 2] += 10
    m = xp.moveaxis(a, 0, 1)
    m[-1, ::2] = 5
    s = xp.swapaxes(a, 0, 1)
    s *= 2
    return [t, m, s, xp.transpose(a)]


def transpose_functions_and_methods(a, xp):
    p = xp.permute_dims(a[None], (2, 0, 1))
    p[1, 0, 2] = 77
    t = a.transpose(1, 0)
    t[:, 1] = 3
    xp.transpose(a)[2, 2] = -5
    r = xp.rot90(a)
    r[0, 0] = 8
    return [p, t, r]


def reshape_and_ravel(a, xp):
    r = a.reshape(2, 10)
    r[1, ::3] = -2
    v = xp.ravel(a)
    v[:4] = 11
    f = a.ravel()
    f[[5, 6]] += 1
    return [r, v, f, a.reshape(-1)]


def the_fill_diagonal_trick(a, xp):
    a.ravel()[:: a.shape[1] + 1] = 0
    return []


def squeeze_expand_and_views_of_them(a, xp):
    e = xp.expand_dims(a, 1)
    e[2, 0, 1] = 40
    s = e.squeeze(1)
    s[0, 0] = 41
    tt = a.T[1:3].T
    tt[3] = 42
    return [e, s, tt]


def a_base_update_reaches_movement_views(a, xp):
    t = a.T
    r = a.reshape(5, 4)
    a[0] = 1
    a += 2
    return [t, r]


def flatten_copies(a, xp):
    f = a.flatten()
    f[0] = 1000  # a copy in NumPy: a unchanged
    g = a.flatten("F")
    g[1] += 1
    return [f, g]


def reshape_of_a_view_where_numpy_views_and_copies(a, xp):
    rows = a[1:3].reshape(-1)  # contiguous rows: a view
    rows[0] = -3
    cols = a[:, 1:3].reshape(-1)  # a strided block: NumPy copies
    cols[0] = -4
    split = a.T[:, ::2].reshape(5, 2, 1)  # strides allow it: a view
    split[4, 1, 0] = -5
    return [rows, cols, split]


def orders(a, xp):
    f = a.reshape(2, 10, order="F")  # a copy of a C-order array
    f[0, 1] = -6
    t = a.T.ravel(order="K")  # a's memory order: a view of a
    t[2] = -7
    v = a[0].reshape(5, 1, order="F")  # a vector is both: a view
    v[3, 0] = -8
    return [f, t, v, xp.ravel(a, order="F"), a.T.ravel(order="A")]


def new_arrays_are_their_own(a, xp):
    out = [xp.tile(a, 2), xp.repeat(a, 2, axis=0), xp.pad(a, 1), xp.resize(a, (3, 3)), xp.meshgrid(a[0], a[1])[1]]
    for o in out:
        o[0] = 500  # new arrays in NumPy: a unchanged
    return out


CASES = [through_a_view_siblings_see_it, chained_indexing, augmented_on_a_view, a_view_of_a_view,
         the_base_written_views_see_it, out_is_a_view, a_scalar_index_writes_nothing, ellipsis_and_new_axes,
         negative_steps, fancy_indexing_copies, a_loop_of_updates, transposes, transpose_functions_and_methods,
         reshape_and_ravel, the_fill_diagonal_trick, squeeze_expand_and_views_of_them,
         a_base_update_reaches_movement_views, flatten_copies, reshape_of_a_view_where_numpy_views_and_copies,
         orders, new_arrays_are_their_own]


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


def test_views_are_forgotten_with_them_and_hold_their_realized_base():
    gc.collect()  # views earlier tests left to the collector
    before = len(_views._base_of)
    a = bz.asarray(np.zeros((3, 3)))
    c = a[1:]
    d = c[0]
    assert _views.tracked(c) and _views.tracked(d) and not _views.tracked(a)
    del a  # the views hold their (realized) base, as a NumPy view's .base
    d[1] = 4.0
    np.testing.assert_array_equal(c.numpy(), [[0, 4, 0], [0, 0, 0]])
    del c, d
    gc.collect()
    assert len(_views._base_of) == before and not any(
        bid for bid, views in _views._views_of.items() if not views)


@pytest.mark.parametrize("lazy", [False, True])
def test_movement_views_of_lazy_and_stored_values_write_through(lazy):
    a = np.arange(12.0).reshape(3, 4)
    b = bz.asarray(a.copy())
    if lazy:
        b = b * 1.0
    t = b.T
    t[0] = -1.0
    a.T[0] = -1.0
    np.testing.assert_array_equal(b.numpy(), a)
    np.testing.assert_array_equal(t.numpy(), a.T)


def test_broadcast_views_are_read_only_as_numpys():
    a = bz.asarray(np.arange(6.0))
    for b in (bz.broadcast_to(a, (2, 6)), np.broadcast_to(a, (2, 6)), np.broadcast_arrays(a, np.zeros((2, 1)))[0]):
        with pytest.raises(ValueError, match="setitem: assignment destination is read-only"):
            b[0, 0] = 1.0
        with pytest.raises(ValueError, match=r"\+=: assignment destination is read-only"):
            b += 1.0
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0))  # nothing written, braze keeps working
    a[0:2][1] = 9.0
    assert float(a[1]) == 9.0


def test_strides_and_base_are_numpys():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    t = bz.asarray(a.copy())
    for view in (lambda x: x, lambda x: x.T, lambda x: x[::2, 1::3], lambda x: x[:, 1], lambda x: x[1:3].reshape(3, 4),
                 lambda x: np.swapaxes(x[None], 0, 2)[::-1]):
        assert view(t).strides == view(a).strides
    assert t.base is None and t[1:].base is t and t.T.base is t and t[:, 1:3].reshape(-1).base is None
    assert (t + 1).strides == (24, 4)  # a computed value: C order


def test_copyto_into_a_view_writes_the_base():
    a = bz.asarray(np.zeros((2, 4), np.float32))
    bz.copyto(a[1, 1:3], np.array([1.0, 2.0], np.float32))
    np.copyto(a[0, ::3], np.float32(5.0))
    np.testing.assert_array_equal(a.numpy(), [[5, 0, 0, 5], [0, 1, 2, 0]])


def test_a_view_does_not_hold_a_lazy_base():
    # Note [Views hold realized bases]: a held lazy value would be stored
    # beside the realize, and the product would leave its library call.
    x = bz.asarray(np.ones((4, 6), np.float32))
    heads = (x @ bz.asarray(np.ones((6, 8), np.float32))).reshape(4, 2, 4).transpose(1, 0, 2)
    before = bz.stats()["values_kept"]
    np.testing.assert_array_equal(heads.numpy(), np.full((2, 4, 4), 6, np.float32))
    assert bz.stats()["values_kept"] == before
    heads[0, 0, 0] = -1.0  # the base is gone: the view writes itself alone
    assert float(heads[0, 0, 0]) == -1.0 and float(heads[1, 0, 0]) == 6.0
    gc.collect()
    assert not any(not views for views in _views._views_of.values())


def test_reshape_copy_false_as_numpys():
    a = np.arange(12.0).reshape(3, 4)
    t = bz.asarray(a.copy())
    assert np.reshape(t, (4, 3), copy=False).base is t
    assert np.reshape(t[:, ::2], -1, copy=False).base is not None  # uniform strides: a view
    with pytest.raises(ValueError, match="unable to avoid creating a copy"):
        np.reshape(t[:, 1:3], -1, copy=False)
    with pytest.raises(ValueError):
        np.reshape(a[:, 1:3], -1, copy=False)  # NumPy's own refusal
    c = np.reshape(t, (4, 3), copy=True)
    c[0, 0] = -1.0
    assert float(t[0, 0]) == 0.0
