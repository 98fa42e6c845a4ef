"""Movement ops and basic indexing: views against NumPy's views of the same
array, whether braze records a view or a copy, and the errors."""

import itertools
import json

import numpy as np
import pytest

import braze as bz
from conftest import DTYPE_IDS, DTYPES, assert_matches, make_layout, logical_values, values


def saved_ops(t, tmp_path):
    """The op names of the graph that computes `t`, in order."""
    path = tmp_path / "g.json"
    bz.save_graph(t, path, with_data=False)
    return [n["op"] for n in json.loads(path.read_text())["nodes"]]


@pytest.fixture
def a():
    return np.arange(24, dtype=np.float32).reshape(4, 6)


# --- reshape ------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(24,), (6, 4), (2, 3, 4), (-1, 8), (2, -1, 2), (1, 24, 1)])
def test_reshape_contiguous_is_a_view(a, shape, tmp_path):
    y = bz.tensor(a).reshape(shape)
    assert saved_ops(y, tmp_path) == ["Input", "Reshape"]
    assert_matches(y, a.reshape(shape))
    assert_matches(bz.reshape(bz.tensor(a), list(shape)), a.reshape(shape))


def test_reshape_of_transposed_copies(a, tmp_path):
    y = bz.tensor(a).T.reshape(-1)
    assert "Copy" in saved_ops(y, tmp_path)  # before realizing: a realized tensor saves as an input
    assert_matches(y, a.T.reshape(-1))


def test_reshape_of_sliced_rows_keeps_a_view_where_strides_allow(a, tmp_path):
    # Every second row, each row whole: (2, 6) -> (2, 2, 3) splits only the inner axis.
    y = bz.tensor(a)[::2].reshape(2, 2, 3)
    assert saved_ops(y, tmp_path) == ["Input", "Slice", "Reshape"]
    assert_matches(y, a[::2].reshape(2, 2, 3))
    z = bz.tensor(a)[:, ::2].reshape(-1)  # columns with a step: merging axes needs a copy
    assert_matches(z, a[:, ::2].reshape(-1))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_reshape_every_dtype(dtype):
    x = values(dtype, (3, 4), seed=1)
    assert_matches(bz.tensor(x).reshape(2, 6), x.reshape(2, 6))
    assert_matches(bz.tensor(x).T.reshape(12), x.T.reshape(12))


def test_reshape_zero_size_and_scalar():
    z = np.zeros((0, 3), np.float32)
    assert_matches(bz.tensor(z).reshape(3, 0), z.reshape(3, 0))
    assert_matches(bz.tensor(z).reshape(-1, 3), z.reshape(-1, 3))
    s = np.array(5.0, np.float32)
    assert_matches(bz.tensor(s).reshape(1, 1), s.reshape(1, 1))
    assert_matches(bz.tensor(s).reshape(1, 1).reshape(()), s)


@pytest.mark.parametrize("shape,match", [((5, 5), r"reshape: cannot reshape \[4, 6\] \(24 elements\) into \[5, 5\]"),
                                         ((-1, -1), r"reshape: only one dimension can be -1"),
                                         ((-1, 5), r"reshape: cannot reshape \[4, 6\]"),
                                         ((-2, -12), r"reshape: negative dimension")])
def test_reshape_errors(a, shape, match):
    with pytest.raises(ValueError, match=match):
        bz.tensor(a).reshape(shape)


# --- transpose / permute ----------------------------------------------------------


@pytest.mark.parametrize("axes", list(itertools.permutations(range(3))))
def test_permute_dims(axes):
    x = values(np.int32, (2, 3, 4), seed=1)
    t = bz.tensor(x)
    assert_matches(bz.permute_dims(t, list(axes)), np.transpose(x, axes))
    assert_matches(bz.transpose(t, list(axes)), np.transpose(x, axes))
    assert_matches(t.transpose(axes), np.transpose(x, axes))
    assert_matches(t.transpose(*axes), np.transpose(x, axes))


def test_transpose_forms():
    x = values(np.float32, (2, 3, 4), seed=1)
    t = bz.tensor(x)
    assert_matches(t.T, x.T)
    assert_matches(t.transpose(), x.transpose())
    assert_matches(bz.transpose(t), x.transpose())
    assert_matches(t.mT, np.swapaxes(x, -1, -2))
    assert_matches(bz.matrix_transpose(t), np.swapaxes(x, -1, -2))
    assert_matches(bz.permute_dims(t, [-1, 0, 1]), np.transpose(x, (2, 0, 1)))
    assert_matches(t.T.T, x)


def test_transpose_of_1d_and_0d_is_identity():
    v = values(np.float32, (5,), seed=1)
    assert_matches(bz.tensor(v).T, v)
    s = np.array(3, np.int64)
    assert_matches(bz.tensor(s).T, s)


def test_transpose_errors():
    t = bz.tensor(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"permute: \[0, 0\] is not a permutation of the axes of \[2, 3\]"):
        t.transpose(0, 0)
    with pytest.raises(IndexError, match=r"permute: axis 2 is out of range for a tensor of rank 2"):
        t.transpose(0, 2)
    with pytest.raises(ValueError, match=r"permute: \[0\] does not give one position per axis of \[2, 3\]"):
        bz.permute_dims(t, [0])
    with pytest.raises(ValueError, match=r"matrix_transpose: needs at least 2 dims"):
        bz.tensor(np.zeros(3)).mT


# --- broadcast_to -------------------------------------------------------------------


@pytest.mark.parametrize("src,dst", [((5,), (3, 5)), ((1, 5), (3, 5)), ((3, 1), (3, 5)), ((), (2, 3)),
                                     ((1,), (0,)), ((2, 1, 3), (4, 2, 5, 3)), ((3, 5), (3, 5)), ((1, 1), (2, 0))])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_], ids=str)
def test_broadcast_to(src, dst, dtype):
    x = values(dtype, src, seed=1)
    y = bz.broadcast_to(bz.tensor(x), dst)
    assert_matches(y, np.broadcast_to(x, dst))


def test_broadcast_then_compute_reads_stride_zero():
    row = values(np.float32, (5,), seed=1, specials=False)
    t = bz.broadcast_to(bz.tensor(row), (3, 5))
    assert_matches(t * bz.tensor(np.arange(15, dtype=np.float32).reshape(3, 5)),
                   row.astype(np.float64) * np.arange(15).reshape(3, 5), np.float32)
    assert_matches(t.T[::-1], np.broadcast_to(row, (3, 5)).T[::-1])


@pytest.mark.parametrize("src,dst", [((3,), (4,)), ((2, 3), (3,)), ((2, 3), (3, 3)), ((2,), (2, 3))])
def test_broadcast_to_errors(src, dst):
    with pytest.raises(ValueError, match=rf"broadcast_to: cannot broadcast \[{', '.join(map(str, src))}\]"):
        bz.broadcast_to(bz.zeros(src), dst)


# --- squeeze / expand_dims -------------------------------------------------------------


def test_squeeze():
    x = values(np.float32, (1, 3, 1, 5), seed=1)
    t = bz.tensor(x)
    assert_matches(t.squeeze(), x.squeeze())
    assert_matches(bz.squeeze(t), np.squeeze(x))
    for ax in [0, 2, -2, -4, (0, 2), (2, 0)]:
        assert_matches(bz.squeeze(t, ax), np.squeeze(x, ax))
        assert_matches(t.squeeze(ax), np.squeeze(x, ax))
    assert_matches(bz.squeeze(bz.tensor(np.ones((1, 1), np.int8))), np.ones((), np.int8))


def test_squeeze_errors():
    t = bz.zeros((1, 3))
    with pytest.raises(ValueError, match=r"squeeze: cannot select axis 1 of size 3 in shape \[1, 3\]"):
        t.squeeze(1)
    with pytest.raises(IndexError, match=r"squeeze: axis 2 is out of range"):
        t.squeeze(2)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_expand_dims(axis):
    x = values(np.int32, (3, 5), seed=1)
    assert_matches(bz.expand_dims(bz.tensor(x), axis), np.expand_dims(x, axis))
    assert_matches(bz.expand_dims(bz.tensor(x).T, axis), np.expand_dims(x.T, axis))


def test_expand_dims_errors():
    with pytest.raises(IndexError, match=r"expand_dims: axis 3 is out of range for a tensor of rank 3"):
        bz.expand_dims(bz.zeros((2, 3)), 3)
    with pytest.raises(IndexError, match=r"expand_dims: axis -4"):
        bz.expand_dims(bz.zeros((2, 3)), -4)


# --- indexing -----------------------------------------------------------------------

SLICE_PARTS = [None, 0, 1, 3, -1, -2, 5, 7, -7]
STEPS = [None, 1, 2, 3, -1, -2, -3]


@pytest.mark.parametrize("step", STEPS)
def test_every_slice_matches_python(step):
    x = np.arange(6, dtype=np.int64)
    t = bz.tensor(x)
    for start in SLICE_PARTS:
        for stop in SLICE_PARTS:
            s = slice(start, stop, step)
            assert_matches(t[s], x[s])


@pytest.mark.parametrize("key", [
    (1,), (-1,), (1, 2), (-4, -6), (slice(None), 0), (slice(1, -1, 2), slice(None, None, -1)),
    (Ellipsis, 1), (None,), (None, slice(None), None), (1, None), (Ellipsis, None), (slice(None, None, -2), -1),
    (Ellipsis,), (0, Ellipsis, 0), (slice(10, 20),), (slice(-10, 2),), (3, slice(5, None, -3)),
])
def test_basic_indexing(a, key):
    assert_matches(bz.tensor(a)[key], a[key])


def test_integer_index_drops_axis():
    x = values(np.float32, (2, 3, 4), seed=1)
    t = bz.tensor(x)
    assert t[1].shape == (3, 4)
    assert t[:, 1].shape == (2, 4)
    assert t[1, 2, 3].shape == ()
    assert_matches(t[:, -1, 1:], x[:, -1, 1:])
    assert t[1, 2, 3].item() == pytest.approx(float(x[1, 2, 3]), nan_ok=True)
    assert_matches(t[np.int64(1)], x[1])  # NumPy integers index too


def test_chain_of_views():
    x = values(np.float32, (4, 6, 2), seed=1)
    t = bz.tensor(x)
    got = t.T[1:, ::-1][None][..., ::2].reshape(-1, 2)
    want = x.T[1:, ::-1][None][..., ::2].reshape(-1, 2)
    assert_matches(got, want)
    got = bz.expand_dims(bz.broadcast_to(t[::-2, 1], (3, 2, 2)).mT, 0).squeeze(0)[:, ::-1]
    want = np.expand_dims(np.swapaxes(np.broadcast_to(x[::-2, 1], (3, 2, 2)), -1, -2), 0).squeeze(0)[:, ::-1]
    assert_matches(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_views_feed_compute(dtype):
    x = values(dtype, (4, 6), seed=1)
    got = bz.tensor(x)[::-1, 1::2].T + bz.tensor(x)[:, ::2].T[:, ::-1]
    want = x[::-1, 1::2].T.astype(np.float64) + x[:, ::2].T[:, ::-1]
    if dtype == np.bool_:
        want = want.astype(bool)
    assert_matches(got, want, dtype)


def test_views_do_not_copy_data(a):
    t = bz.tensor(a)
    t.numpy()
    before = bz.stats()["allocations"]
    v = t.T[1:, ::-1][None]
    assert not v.is_realized
    assert bz.stats()["allocations"] == before  # recording a view allocates nothing
    assert v.shape == (1, 5, 4)


@pytest.mark.parametrize("key,exc,match", [
    (4, IndexError, r"index 4 is out of bounds for axis 0 with size 4"),
    (-5, IndexError, r"index -5 is out of bounds for axis 0 with size 4"),
    ((0, 6), IndexError, r"index 6 is out of bounds for axis 1 with size 6"),
    ((0, 0, 0), IndexError, r"too many indices for a tensor of rank 2 \(got 3\)"),
    (slice(None, None, 0), ValueError, r"slice step cannot be zero"),
    ((Ellipsis, Ellipsis), ValueError, r"single ellipsis"),
    (1.5, IndexError, r"^indexing: only integers, slices"),  # NumPy's error (python/braze/_gather.py)
    ([0, 5], IndexError, r"^indexing: index 5 is out of bounds for axis 0"),
    (np.array([[True]]), IndexError, r"^indexing: .*boolean index did not match"),
])
def test_indexing_errors(a, key, exc, match):
    t = bz.tensor(a)
    with pytest.raises(exc, match=match):
        t[key]
    assert_matches(t[1], a[1])  # braze keeps working


def test_len_and_scalar_conversion(a):
    t = bz.tensor(a)
    assert len(t) == 4
    with pytest.raises(TypeError, match="len"):
        len(bz.tensor(np.float32(1)))
    assert float(t[1, 2]) == a[1, 2]
    assert int(bz.tensor(np.int8(-3))) == -3
    with pytest.raises(ValueError, match="one-element"):
        float(t)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "sliced_reversed", "broadcast"])
def test_views_of_every_layout(layout):
    x = logical_values(np.float32, layout, seed=3)
    t = make_layout(layout, x)
    assert_matches(t, x)
    assert_matches(t[::-1, 1:4], x[::-1, 1:4])
    assert_matches(t.T, x.T)
    assert_matches(t.reshape(-1), x.reshape(-1))
    assert_matches(bz.expand_dims(t, 1), x[:, None])
