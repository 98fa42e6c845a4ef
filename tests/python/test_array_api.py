"""braze as an array API namespace (python/braze/_array_api.py): the names
NumPy's do not cover, checked against NumPy and against braze's own
promotion; the standard's own test suite runs through
scripts/array_api_tests.sh (on demand: it is not on a registry)."""

import numpy as np
import pytest

import braze as bz
from conftest import values

DTYPES = [bz.bool, bz.uint8, bz.int8, bz.uint16, bz.int16, bz.uint32, bz.int32, bz.int64, bz.float16, bz.bfloat16,
          bz.float32, bz.float64]


def test_the_namespace_is_braze():
    t = bz.tensor(np.ones(2, np.float32))
    assert t.__array_namespace__() is bz and t.__array_namespace__(api_version="2022.12") is bz
    assert bz.__array_api_version__ == "2023.12"
    with pytest.raises(ValueError, match="api_version '2099.12' is not supported"):
        t.__array_namespace__(api_version="2099.12")
    info = bz.__array_namespace_info__()
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    assert info.default_dtypes()["real floating"] == bz.float32 and info.default_dtypes()["integral"] == bz.int64
    assert set(info.dtypes(kind="integral")) == {"uint8", "int8", "uint16", "int16", "uint32", "int32", "int64"}
    assert bz.bool == np.bool_


@pytest.mark.parametrize("a", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("b", DTYPES, ids=lambda d: np.dtype(d).name)
def test_result_type_is_what_an_op_gives(a, b):
    got = bz.result_type(a, b)
    x, y = bz.zeros((), dtype=a), bz.zeros((), dtype=b)
    if a == b == bz.bool:
        assert got == bz.bool
    else:
        assert got == (x + y).dtype
    assert bz.result_type(x, b) == got
    kinds = np.dtype(a).kind, np.dtype(b).kind  # bz.float32 is a scalar type, as np.float32 (Note [Dtype names])
    assert bz.can_cast(a, b) == (a == b or a == bz.bool or (got == b and not (kinds[0] == "f" and kinds[1] in "iu")))


def test_result_type_with_python_scalars_and_isdtype():
    assert bz.result_type(bz.float16, 1.5) == bz.float16 and bz.result_type(bz.int8, 3) == bz.int8
    with pytest.raises(ValueError, match="result_type: at least one array or dtype"):
        bz.result_type(1, 2.0)
    assert bz.isdtype(bz.bfloat16, "real floating") and bz.isdtype(bz.uint8, ("bool", "unsigned integer"))
    assert not bz.isdtype(bz.int8, "unsigned integer") and bz.isdtype(bz.int32, bz.int32)
    with pytest.raises(ValueError, match="isdtype: unknown kind 'floating'"):
        bz.isdtype(bz.float32, "floating")


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, -1])
def test_sort_and_argsort_stable(descending, axis):
    a = np.array([[3, 1, 3, 2], [0, 0, 5, 5], [2, 2, 2, 1]], np.int32)
    got = bz.argsort(bz.tensor(a), axis=axis, descending=descending)
    order = np.argsort(-a if descending else a, axis=axis, kind="stable")
    np.testing.assert_array_equal(got.numpy(), order)
    np.testing.assert_array_equal(bz.sort(bz.tensor(a), axis=axis, descending=descending).numpy(),
                                  np.take_along_axis(a, order, axis))


def test_numpy_sort_family_dispatches():
    a = values(np.float32, (3, 4), seed=1, specials=False)
    t = bz.tensor(a)
    for got, want in ((np.sort(t), np.sort(a)), (np.sort(t, axis=None), np.sort(a, axis=None)),
                      (np.argsort(t, axis=0), np.argsort(a, axis=0, kind="stable")), (np.cumsum(t), np.cumsum(a)),
                      (np.cumsum(t, axis=1), np.cumsum(a, axis=1)), (np.cumprod(t, 0), np.cumprod(a, 0)),
                      (np.unique(t), np.unique(a)), (np.searchsorted(np.sort(t, None), t[0]),
                                                     np.searchsorted(np.sort(a, None), a[0]))):
        assert isinstance(got, bz.Tensor)
        np.testing.assert_array_equal(got.numpy(), want)


def test_scans_searching_and_unique():
    a = np.array([3, 1, 4, 1, 5], np.int32)
    t = bz.tensor(a)
    np.testing.assert_array_equal(bz.cumulative_sum(t, include_initial=True).numpy(), [0, 3, 4, 8, 9, 14])
    np.testing.assert_array_equal(bz.cumulative_prod(t).numpy(), np.cumprod(a))
    with pytest.raises(ValueError, match="cumulative_sum: axis is required"):
        bz.cumulative_sum(bz.tensor(np.ones((2, 2))))
    np.testing.assert_array_equal(bz.searchsorted(bz.tensor(np.array([1, 3, 5])), t, side="right").numpy(),
                                  np.searchsorted([1, 3, 5], a, side="right"))
    r = bz.unique_all(t)
    want = np.unique_all(a)
    for got, w in zip(r, want):
        np.testing.assert_array_equal(got.numpy(), w)
    assert bz.unique_counts(t).counts.numpy().tolist() == [2, 1, 1, 1]
    np.testing.assert_array_equal(bz.unique_inverse(t).inverse_indices.numpy(), np.unique_inverse(a).inverse_indices)


def test_manipulation_and_linear_algebra_names():
    a = values(np.float32, (2, 3, 4), seed=2, specials=False)
    t = bz.tensor(a)
    parts = bz.unstack(t, axis=1)
    assert len(parts) == 3 and all(not p.is_realized for p in parts)
    np.testing.assert_array_equal(parts[1].numpy(), a[:, 1])
    np.testing.assert_allclose(bz.vecdot(t, t).numpy(), (a * a).sum(-1), rtol=1e-6)
    x, y = bz.broadcast_arrays(bz.tensor(np.ones((3, 1))), np.arange(4.0))
    assert tuple(x.shape) == tuple(y.shape) == (3, 4)
    np.testing.assert_array_equal(bz.real(t).numpy(), a)
    np.testing.assert_array_equal(bz.imag(t).numpy(), np.zeros_like(a))
    np.testing.assert_array_equal(bz.from_dlpack(np.arange(3.0)).numpy(), np.arange(3.0))
    assert t.to_device("cpu") is t
    i = bz.tensor(np.int64(2))
    assert [10, 20, 30][i] == 30 and np.arange(5)[i] == 2
    with pytest.raises(TypeError, match="only 0-d integer tensors can be used as an index"):
        [1, 2][bz.tensor(np.float32(1))]


def test_complex_is_not_there_yet():
    assert not hasattr(bz, "complex64")
    with pytest.raises(ValueError, match="unsupported dtype 'complex64'"):
        bz.asarray(np.ones(2, np.complex64))
    assert "complex64" not in bz.__array_namespace_info__().dtypes()


def test_linalg_extension():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    t = bz.tensor(a)
    lazy = bz.linalg.matmul(t, t) + 1.0
    assert not lazy.is_realized
    np.testing.assert_allclose(lazy.numpy(), a @ a + 1)
    np.testing.assert_allclose(bz.linalg.det(t).numpy(), np.linalg.det(a))
    assert bz.linalg.det(t).shape == ()
    np.testing.assert_allclose(bz.linalg.inv(t).numpy(), np.linalg.inv(a))
    np.testing.assert_allclose(bz.linalg.solve(t, bz.tensor(np.array([[1.0], [2.0]]))).numpy(),
                               np.linalg.solve(a, [[1.0], [2.0]]))
    w = bz.linalg.eigh(t)
    np.testing.assert_allclose(w.eigenvalues.numpy(), np.linalg.eigh(a).eigenvalues)
    for ord_ in (1, 2, np.inf, -np.inf, 0, 3):
        np.testing.assert_allclose(bz.linalg.vector_norm(t, axis=1, ord=ord_).numpy(),
                                   np.linalg.vector_norm(a, axis=1, ord=ord_))
    np.testing.assert_allclose(bz.linalg.matrix_norm(t).numpy(), np.linalg.matrix_norm(a))
    np.testing.assert_allclose(np.linalg.norm(t).numpy(), np.linalg.norm(a))
    np.testing.assert_allclose(bz.linalg.trace(t, offset=1).numpy(), np.trace(a, 1))
    with pytest.raises(ValueError, match="linalg.inv: Singular matrix"):
        bz.linalg.inv(bz.zeros((2, 2)))


def test_standard_details():
    f = bz.finfo(bz.float32)
    assert type(f.eps) is float and type(f.max) is float and f.bits == 32 and type(bz.iinfo(bz.int8).max) is int
    np.testing.assert_array_equal(bz.cumulative_sum(bz.tensor(np.array([200, 100], np.uint8))).numpy(), [200, 300])
    inv = bz.unique_inverse(bz.tensor(np.float32(3.0))).inverse_indices
    assert inv.shape == ()
    assert complex(bz.tensor(np.float32(1.5))) == 1.5 + 0j
    t = bz.tensor(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(np.from_dlpack(bz.from_dlpack(t)), np.arange(3))
    copied = np.from_dlpack(t, copy=True)  # __dlpack__(copy=True): a copy of its own
    np.testing.assert_array_equal(copied, np.arange(3))
    assert bz.asarray(t, dtype=bz.float32, copy=False) is t
    with pytest.raises(ValueError, match="asarray: copy=False"):
        bz.asarray(np.ones(2), copy=False)
