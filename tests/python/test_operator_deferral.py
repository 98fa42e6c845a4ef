"""NumPy's rule for binary operators (NEP 13), as python/bind_tensor.cpp's
defers_to follows it: an operand of another array type that defines
__array_ufunc__ handles the operation through its reflected method; NumPy
arrays and scalars are values braze reads."""

import numpy as np
import pytest

import braze as bz


class Foreign:
    """An array type of someone else's: it handles every operator itself."""

    __array_ufunc__ = None

    def __radd__(self, other):
        return ("radd", type(other).__name__)

    def __rmatmul__(self, other):
        return ("rmatmul", type(other).__name__)

    def __gt__(self, other):  # the reflection of other < self
        return ("gt", type(other).__name__)


def test_an_array_type_with_array_ufunc_handles_the_operator():
    t = bz.ones((2, 2))
    assert t + Foreign() == ("radd", "Tensor")
    assert t @ Foreign() == ("rmatmul", "Tensor")
    assert (t < Foreign()) == ("gt", "Tensor")


def test_an_object_without_a_reflected_method_is_a_type_error():
    class Mute:
        __array_ufunc__ = None

    with pytest.raises(TypeError):
        bz.ones(3) * Mute()


@pytest.mark.parametrize("other", [np.ones(3, np.float32), np.float32(2), 2, 2.5, True])
def test_numpy_values_and_python_scalars_are_read(other):
    t = bz.ones(3)
    got = t + other
    assert isinstance(got, bz.Tensor)
    np.testing.assert_array_equal(got.numpy(), np.ones(3, np.float32) + other)
    assert isinstance(other + t, bz.Tensor)
