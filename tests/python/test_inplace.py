"""x += y and x[key] = value with NumPy's semantics (python/braze/_inplace.py,
Note [In-place updates]): results against NumPy doing the same, the update
seen through every name bound to the tensor, values recorded before it kept,
storage written in place only when nothing else sees it, and the errors."""

import operator

import numpy as np
import pytest

import braze as bz
from conftest import assert_matches, values

AUGMENTED = [("+=", operator.iadd), ("-=", operator.isub), ("*=", operator.imul), ("/=", operator.itruediv),
             ("//=", operator.ifloordiv), ("%=", operator.imod), ("**=", operator.ipow)]
BITWISE = [("&=", operator.iand), ("|=", operator.ior), ("^=", operator.ixor), ("<<=", operator.ilshift),
           (">>=", operator.irshift)]


@pytest.mark.parametrize("symbol, op", AUGMENTED, ids=[a[0] for a in AUGMENTED])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_augmented_arithmetic_matches_numpy(symbol, op, dtype):
    a = values(dtype, (3, 4), seed=1, specials=False)
    b = values(dtype, (4,), seed=2, specials=False, lo=0.5, hi=2.0)
    t = bz.tensor(a)
    alias = t
    recorded = t * 1.0  # recorded on the old value
    with np.errstate(all="ignore"):
        want = op(a.copy(), b)
    result = op(t, b)
    assert result is t and alias is t and not t.is_realized  # lazy: x op y, rebound
    assert_matches(t, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert_matches(recorded, a)


@pytest.mark.parametrize("symbol, op", BITWISE, ids=[a[0] for a in BITWISE])
def test_augmented_bitwise_matches_numpy(symbol, op):
    a = values(np.int32, (5,), seed=3)
    b = np.array([1, 2, 3, 0, 5], np.int32)
    t = bz.tensor(a)
    op(t, b)
    assert_matches(t, op(a.copy(), b))


def test_augmented_keeps_the_dtype_and_refuses_what_numpy_refuses():
    t = bz.tensor(np.ones(3, np.float32))
    t *= np.float64(2.5)  # float64 stored back into float32: same_kind
    assert_matches(t, np.full(3, 2.5, np.float32))
    t += bz.tensor(np.ones((1, 3), np.float32))[0]
    i = bz.tensor(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match=r"^\+=: the result is float32, which cannot be stored back into int32"):
        i += 1.5
    with pytest.raises(ValueError, match=r"^\+=: a result of shape \[2, 3\] does not fit the tensor's \[3\]"):
        i += bz.tensor(np.ones((2, 3), np.int32))
    assert_matches(i, np.arange(3, dtype=np.int32))  # unchanged by the refused updates
    m = bz.tensor(np.eye(2, dtype=np.float32))
    m @= bz.tensor(np.array([[1, 2], [3, 4]], np.float32))
    assert_matches(m, np.array([[1, 2], [3, 4]], np.float32))


KEYS = [
    ("int", 1), ("negative_int", -1), ("slice", slice(1, 3)), ("step", slice(None, None, -2)),
    ("tuple", (slice(1, -1), slice(1, -1))), ("column", (Ellipsis, 2)), ("int_pair", (0, 3)),
    ("mask", "mask"), ("index_array", "index_array"), ("index_pair", "index_pair"), ("everything", Ellipsis),
]


def resolve(key, a):
    if key == "mask":
        return a > 0
    if key == "index_array":
        return np.array([2, 0])
    if key == "index_pair":
        return (np.array([0, 2]), np.array([1, 3]))
    return key


@pytest.mark.parametrize("name, key", KEYS, ids=[k[0] for k in KEYS])
@pytest.mark.parametrize("value", ["scalar", "array", "tensor", "lazy"])
def test_setitem_matches_numpy(name, key, value):
    a = values(np.float32, (4, 5), seed=4)
    key = resolve(key, a)
    shape = a[key].shape
    v = {"scalar": np.float32(7.5), "array": values(np.float32, shape, seed=5)}.get(value)
    if value in ("tensor", "lazy"):
        base = values(np.float32, shape, seed=6)
        v_np = base * 2 if value == "lazy" else base
        v = bz.tensor(base) * 2.0 if value == "lazy" else bz.tensor(base)
    else:
        v_np = v
    want = a.copy()
    want[key] = v_np
    t = bz.tensor(a)
    t[key if not isinstance(key, np.ndarray) or key.dtype != bool else bz.tensor(key)] = v
    assert t.is_realized
    np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_keeps_what_was_recorded_before_and_reaches_every_name():
    u = bz.zeros((4, 4))  # a broadcast constant: writable, it views no stored values
    alias = u
    before = u + 1.0      # lazy, recorded on the old value
    snapshot = u.numpy()  # an array returned before the write
    u[1:-1, 1:-1] = 3.0
    assert alias is u
    want = np.zeros((4, 4), np.float32)
    want[1:-1, 1:-1] = 3
    np.testing.assert_array_equal(u.numpy(), want)
    np.testing.assert_array_equal(before.numpy(), np.ones((4, 4), np.float32))
    np.testing.assert_array_equal(snapshot, np.zeros((4, 4), np.float32))


def test_setitem_writes_storage_in_place_when_nothing_else_sees_it():
    u = bz.tensor(np.zeros(8, np.float32))
    assert u._sole_owner()
    bz.reset_stats()
    u[2:4] = 1.0
    assert bz.stats()["allocations"] == 0  # no copy
    held = u * 2.0  # something else reads u now: the next write copies
    u[0] = 5.0
    assert bz.stats()["allocations"] >= 1
    np.testing.assert_array_equal(held.numpy(), np.array([0, 0, 2, 2, 0, 0, 0, 0], np.float32))
    np.testing.assert_array_equal(u.numpy(), np.array([5, 0, 1, 1, 0, 0, 0, 0], np.float32))


def test_jacobi_iteration_as_written_for_numpy():
    n = 33
    want = np.zeros((n, n), np.float32)
    want[0] = 1.0
    u = bz.tensor(want)
    for _ in range(50):
        want[1:-1, 1:-1] = 0.25 * (want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2] + want[1:-1, 2:])
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    np.testing.assert_allclose(u.numpy(), want, rtol=1e-6, atol=1e-7)


def test_setitem_errors_and_braze_keeps_working():
    a = bz.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(ValueError, match=r"setitem: assignment destination is read-only"):
        bz.broadcast_to(a, (2, 2, 3))[0, 1] = 5.0
    with pytest.raises(IndexError, match=r"^setitem: .*out of bounds.*\(tensor of shape \[2, 3\]\)"):
        a[5] = 1.0
    with pytest.raises(ValueError, match=r"^setitem: could not broadcast.*value of shape \[4\]"):
        a[0] = np.ones(4, np.float32)
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    a[0, 1] = 9.0
    assert float(a[0, 1]) == 9.0


def test_setitem_on_cuda_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("BRAZE_CUDA", "emulate")
    t = bz.tensor(np.zeros(3, np.float32), device="cuda")
    with pytest.raises(TypeError, match=r"^setitem: tensors on cuda:0 are not supported yet"):
        t[0] = 1.0


def test_setitem_on_a_view_nothing_else_sees_is_allowed():
    x = bz.asarray([1.0, 2.0, 3.0, 4.0]).reshape((2, 2))  # the base is held by the view alone
    x[0, 1] = 9.0
    np.testing.assert_array_equal(x.numpy(), [[1, 9], [3, 4]])
    base = bz.asarray([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape(2, 3)
    v = base[:, :2].reshape(4)  # NumPy copies (the rows' strides do not allow a view): base unchanged
    v[0] = 9.0
    np.testing.assert_array_equal(base.numpy(), [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(v.numpy(), [9, 2, 4, 5])
