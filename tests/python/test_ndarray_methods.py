"""ndarray's methods on braze tensors (python/braze/_ndarray_methods.py),
against NumPy's on the same values, and NumPy arrays as the out= of a
NumPy function given a tensor (ndarray += tensor)."""

import io
import pickle

import numpy as np
import pytest

import braze as bz


@pytest.fixture
def x():
    v = np.random.default_rng(0).standard_normal((4, 5))
    v[1, 2] = 0.0
    return v


@pytest.mark.parametrize("call", [
    lambda a: a.dot(np.arange(15.0).reshape(5, 3)),
    lambda a: a.cumsum(axis=1), lambda a: a.cumsum(), lambda a: a.cumprod(axis=0),
    lambda a: a.argsort(axis=0), lambda a: a.argsort(),
    lambda a: a.diagonal(1), lambda a: a.trace(), lambda a: a.trace(offset=-1),
    lambda a: a.swapaxes(0, 1), lambda a: a.repeat(2, axis=1), lambda a: a.take([0, 3], axis=1),
    lambda a: a.conj(), lambda a: a.conjugate(), lambda a: a.real, lambda a: a.imag,
    lambda a: a.T.dot(a),
], ids=["dot", "cumsum1", "cumsum", "cumprod0", "argsort0", "argsort", "diagonal", "trace", "trace-1", "swapaxes",
        "repeat", "take", "conj", "conjugate", "real", "imag", "T.dot"])
def test_methods_are_numpys(x, call):
    got, want = call(bz.tensor(x)), call(x)
    assert isinstance(got, bz.Tensor)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_nonzero_searchsorted_and_the_sizes(x):
    t = bz.tensor(x)
    for got, want in zip(t.nonzero(), x.nonzero()):
        np.testing.assert_array_equal(got.numpy(), want)
    s = np.array([1, 3, 5, 7])
    np.testing.assert_array_equal(bz.tensor(s).searchsorted([2, 7], side="right").numpy(), s.searchsorted([2, 7], "right"))
    assert (t.itemsize, t.nbytes, t.strides) == (x.itemsize, x.nbytes, x.strides)
    f32 = bz.tensor(x.astype(np.float32)).T
    assert (f32.itemsize, f32.nbytes, f32.strides) == (4, 80, (4, 20))  # a view's own, as NumPy's x.T
    assert (f32 + 1).strides == (16, 4)  # a computed value: C order, as .numpy() gives it
    assert list(t.flat) == list(x.flat)
    assert t.tobytes() == x.tobytes()
    np.testing.assert_array_equal(pickle.loads(t.dumps()).numpy(), x)
    f = io.BytesIO()
    t.dump(f)
    np.testing.assert_array_equal(pickle.loads(f.getvalue()).numpy(), x)


def test_sort_and_fill_change_the_tensor_in_place(x):
    t = bz.tensor(x)
    alias = t
    t.sort(axis=0)
    want = x.copy()
    want.sort(axis=0)
    np.testing.assert_array_equal(alias.numpy(), want)
    t.fill(2.5)
    assert (alias.numpy() == 2.5).all() and alias.dtype == x.dtype
    u, v = bz.tensor(x), x.copy()
    u[0].fill(1.0)  # a view made by indexing writes its base, as in NumPy
    v[0].fill(1.0)
    np.testing.assert_array_equal(u.numpy(), v)
    u.reshape(-1)[:3].fill(3.0)  # and one made by reshape of a tensor
    v.reshape(-1)[:3].fill(3.0)
    np.testing.assert_array_equal(u.numpy(), v)
    u[:, 1:3].reshape(-1)[:3].fill(1.0)  # a copy in NumPy: a strided block's values do not line up
    v[:, 1:3].reshape(-1)[:3].fill(1.0)
    np.testing.assert_array_equal(u.numpy(), v)


def test_compress_and_choose_as_methods(x):
    keep = [True, False, True, False, True]
    np.testing.assert_array_equal(bz.tensor(x).compress(keep, axis=1).numpy(), x.compress(keep, axis=1))
    pick = np.array([[0, 1, 1, 0, 1]] * x.shape[0])
    np.testing.assert_array_equal(bz.tensor(pick).choose([bz.tensor(x), bz.tensor(-x)]).numpy(), pick.choose([x, -x]))


def test_numpy_arrays_as_out():
    """ndarray += tensor and np.add(a, t, out=a): NumPy's memory, written now,
    with NumPy's casting rule for out (same_kind)."""
    a = np.zeros(3)
    a += bz.tensor(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])
    m = np.zeros((2, 3))
    m[0] += bz.tensor(np.array([1.0, 2.0, 3.0]))
    m[:, 1] *= bz.tensor(np.array([5.0, 7.0]))
    np.testing.assert_array_equal(m, [[1.0, 10.0, 3.0], [0.0, 0.0, 0.0]])
    b = np.ones(3)
    assert np.add(b, bz.tensor(np.array([1.0, 1.0, 1.0])), out=b) is b
    np.testing.assert_array_equal(b, [2.0, 2.0, 2.0])
    i = np.zeros(3, np.int64)
    with pytest.raises(TypeError, match="same_kind"):
        i += bz.tensor(np.array([1.5, 2.0, 3.0]))
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        np.add(frozen, bz.tensor(np.ones(3)), out=frozen)


def test_numpy_spellings_of_methods(x):
    """x.std(ddof=1), x.var(ddof=...), x.round(decimals), divmod(x, n):
    what NumPy code writes on arrays."""
    t = bz.tensor(x)
    np.testing.assert_allclose(t.std(ddof=1).numpy(), x.std(ddof=1), rtol=1e-12)
    np.testing.assert_allclose(t.var(axis=0, ddof=2).numpy(), x.var(axis=0, ddof=2), rtol=1e-12)
    np.testing.assert_allclose(bz.std(t, ddof=1).numpy(), np.std(x, ddof=1), rtol=1e-12)
    with pytest.raises(ValueError, match="ddof and correction"):
        t.var(correction=1, ddof=1)
    np.testing.assert_array_equal(t.round(2).numpy(), x.round(2))
    np.testing.assert_array_equal(t.round().numpy(), x.round())
    q, r = divmod(t, 0.3)
    wq, wr = divmod(x, 0.3)
    np.testing.assert_array_equal(q.numpy(), wq)
    np.testing.assert_allclose(r.numpy(), wr, rtol=1e-12, atol=1e-15)
    q, r = divmod(7, bz.tensor(np.array([2, -3, 4])))
    np.testing.assert_array_equal(q.numpy(), [3, -3, 1])
    np.testing.assert_array_equal(r.numpy(), [1, -2, 3])


def test_flags_as_numpys():
    a = np.arange(12.0).reshape(3, 4).copy()  # its own data
    t = bz.tensor(a)
    for view in (lambda x: x, lambda x: x.T, lambda x: x[:, ::2], lambda x: x[1], lambda x: x[1:].reshape(-1)):
        got, want = view(t).flags, view(a).flags
        for name in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED"):
            assert got[name] == want[name], name
        assert got.c_contiguous == want.c_contiguous and got.f_contiguous == want.f_contiguous
    t.flags.writeable = False  # numpy-100's exercise 43
    row = t[0]
    for write in (lambda: t.__setitem__(0, 1.0), lambda: row.__iadd__(1.0), lambda: np.copyto(t, 0.0)):
        with pytest.raises(ValueError, match="read-only"):
            write()
    t.flags["WRITEABLE"] = True
    t[0, 0] = -1.0
    assert float(t[0, 0]) == -1.0 and not row.flags.writeable  # made while t was read-only: stays so, as NumPy's
    with pytest.raises(ValueError, match="cannot set WRITEABLE flag to True"):
        np.broadcast_to(t, (2, 3, 4)).flags.writeable = True
    with pytest.raises(AttributeError):
        t.flags.c_contiguous = False


def test_setting_the_shape():
    t = bz.tensor(np.arange(12.0))
    alias = t
    t.shape = (3, 4)
    assert alias.shape == (3, 4) and float(alias[1, 0]) == 4.0
    t.shape = -1
    assert t.shape == (12,)
    v = t[2:]
    with pytest.raises(AttributeError, match="shape: braze sets the shape of a tensor that is not a view"):
        v.shape = (2, 5)
    with pytest.raises(AttributeError, match="no live views"):
        t.shape = (4, 3)


def test_iteration_as_numpys():
    x = np.array([[3.0, -1.0], [2.0, 5.0]])
    t = bz.tensor(x.copy())
    v = bz.tensor(x[:, 0].copy())
    assert all(isinstance(e, bz.Tensor) and e.ndim == 0 for e in v)  # so np.roots(v) finds a tensor in v
    assert min(v) == min(x[:, 0]) and sum(v) == sum(x[:, 0]) and sorted(v) == sorted(x[:, 0])
    assert isinstance(np.roots(v), bz.Tensor)
    a, b = v
    assert (a, b) == (3.0, 2.0)
    for row in t:  # rows are views that write through
        assert isinstance(row, bz.Tensor)
        row[1] = 0.0
    np.testing.assert_array_equal(t.numpy(), [[3, 0], [2, 0]])
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(bz.tensor(np.float32(1.0)))
    assert list(bz.tensor(np.zeros((0, 3)))) == []


@pytest.mark.parametrize("src,to", [(np.float32, np.int32), (np.float32, np.uint32), (np.int32, np.float32),
                                    (np.float64, np.int64), (np.uint16, np.int16), (np.float32, np.uint8),
                                    (np.uint8, np.int32), (np.int16, np.float16)], ids=str)
def test_view_as_another_dtype_writes_through_both_ways(src, to):
    """x.view(dtype) reads x's bits as NumPy's does, and a write to either
    side shows on the other."""
    a = (np.arange(-6, 18) * 37).astype(src).reshape(3, 8)
    t = bz.tensor(a)
    v = t.view(to)
    assert isinstance(v, bz.Tensor) and v.base is t
    np.testing.assert_array_equal(v.numpy(), a.view(to))
    assert v.strides == a.view(to).strides
    w = a.view(to)
    v[1] = v[0]  # through the view, as NumPy: the base's bytes change
    w[1] = w[0]
    np.testing.assert_array_equal(t.numpy().view(np.uint8), a.view(np.uint8))
    t[2, :4] = 0  # through the base: the view sees it
    a[2, :4] = 0
    np.testing.assert_array_equal(v.numpy().view(np.uint8), a.view(to).view(np.uint8))


def test_view_in_place_conversion_as_numpy_100():
    """numpy-100's exercise 53: a float32 array converted to int32 in place."""
    z = np.array([1.5, 99.9, -3.2, 0.0], np.float32)
    zt = bz.tensor(z)
    y, yt = z.view(np.int32), zt.view(np.int32)
    y[:] = z
    yt[:] = zt
    np.testing.assert_array_equal(yt.numpy(), y)
    np.testing.assert_array_equal(zt.numpy().view(np.uint32), z.view(np.uint32))


def test_view_without_a_dtype_and_refusals():
    t = bz.tensor(np.arange(6.0, dtype=np.float32))
    v = t.view()
    assert v.base is t and v.dtype == t.dtype
    v[0] = 7
    assert t[0].item() == 7
    with pytest.raises(TypeError, match="view: braze tensors have no ndarray subclasses"):
        t.view(np.ndarray)
    with pytest.raises(ValueError):  # 20 bytes are no whole number of float64: NumPy's error
        bz.tensor(np.arange(5.0, dtype=np.float32)).view(np.float64)
    with pytest.raises(ValueError, match="unsupported dtype 'complex64'"):
        t.view(np.complex64)
