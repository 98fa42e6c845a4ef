"""User errors raise the documented Python exception at the op that caused
them (when it is recorded, never at realize time), with a message naming the
op and the shapes; braze keeps working afterwards."""

import re

import numpy as np
import pytest

import braze as bz
from conftest import assert_matches


def still_works():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_matches(bz.softmax(bz.tensor(a) * 2.0, axis=-1).sum(axis=-1), np.ones(2, np.float32), rtol=1e-6)


X23 = lambda: bz.zeros((2, 3))  # noqa: E731

CASES = [
    # (id, call, exception, message regex)
    ("add_shapes", lambda: X23() + bz.zeros(4), ValueError,
     r"^add: shapes \[2, 3\] and \[4\] do not broadcast \(axis 1 of the result: 3 vs 4\)$"),
    ("mul_shapes_3d", lambda: bz.multiply(bz.zeros((2, 1, 3)), bz.zeros((4, 2))), ValueError,
     r"^multiply: shapes \[2, 1, 3\] and \[4, 2\] do not broadcast"),
    ("where_shapes", lambda: bz.where(bz.zeros(2) > 0, bz.zeros(3), bz.zeros(2)), ValueError,
     r"^where: shapes \[2\] and \[3\] do not broadcast"),
    ("bool_negative", lambda: -bz.tensor(np.array([True])), ValueError, r"^negative: not supported for bool"),
    ("bool_subtract", lambda: bz.tensor(np.array([True])) - True, ValueError, r"^subtract: not supported for bool"),
    ("sum_axis", lambda: X23().sum(axis=2), IndexError, r"^sum: axis 2 is out of range for a tensor of rank 2$"),
    ("mean_neg_axis", lambda: bz.mean(X23(), axis=-3), IndexError, r"^mean: axis -3 is out of range"),
    ("softmax_axis", lambda: bz.softmax(X23(), axis=2), IndexError, r"^softmax: axis 2 is out of range"),
    ("squeeze_axis", lambda: bz.squeeze(X23(), 0), ValueError, r"^squeeze: cannot select axis 0 of size 2"),
    ("index", lambda: X23()[2], IndexError, r"index 2 is out of bounds for axis 0 with size 2"),
    ("reshape", lambda: X23().reshape(4, 2), ValueError,
     r"^reshape: cannot reshape \[2, 3\] \(6 elements\) into \[4, 2\] \(8 elements\)$"),
    ("broadcast_to", lambda: bz.broadcast_to(X23(), (3, 3)), ValueError,
     r"^broadcast_to: cannot broadcast \[2, 3\] to \[3, 3\]$"),
    ("permute", lambda: bz.permute_dims(X23(), [1, 1]), ValueError, r"^permute: \[1, 1\] is not a permutation"),
    ("max_empty", lambda: bz.max(bz.zeros((0, 2)), axis=0), ValueError,
     r"^max: cannot reduce over axis 0 of size 0 in shape \[0, 2\]"),
    ("matmul_align", lambda: bz.matmul(X23(), bz.zeros((4, 5))), ValueError,
     r"^matmul: shapes \[2, 3\] and \[4, 5\] are not aligned: 3 \(axis 1 of the first\) != 4 \(axis 0 of the second\)$"),
    ("matmul_vectors", lambda: bz.matmul(bz.zeros(3), bz.zeros(4)), ValueError,
     r"^matmul: shapes \[3\] and \[4\] are not aligned"),
    ("matmul_operator", lambda: X23() @ bz.zeros(2), ValueError, r"^matmul: shapes \[2, 3\] and \[2\] are not aligned"),
    ("matmul_0d", lambda: bz.matmul(bz.zeros(()), bz.zeros(4)), ValueError, r"^matmul: operands need at least 1 dim"),
    ("matmul_batch", lambda: bz.matmul(bz.zeros((2, 2, 3)), bz.zeros((3, 3, 4))), ValueError,
     r"^matmul \(batch dims\): shapes \[2\] and \[3\] do not broadcast"),
    ("matmul_bool", lambda: bz.matmul(bz.tensor(np.ones((2, 2), bool)), bz.tensor(np.ones((2, 2), bool))), ValueError,
     r"^matmul: not supported for bool"),
    ("conv_channels", lambda: bz.conv2d(bz.zeros((1, 3, 5, 5)), bz.zeros((4, 2, 3, 3))), ValueError,
     r"^conv2d: weight \[4, 2, 3, 3\] expects 2 input channels .* but input \[1, 3, 5, 5\] has 3$"),
    ("conv_rank", lambda: bz.conv2d(bz.zeros((1, 3, 5)), bz.zeros((4, 3, 3, 3))), ValueError,
     r"^conv2d: input must be NCHW and weight OIHW \(4-d\), got \[1, 3, 5\] and \[4, 3, 3, 3\]$"),
    ("conv_kernel_too_big", lambda: bz.conv2d(bz.zeros((1, 3, 2, 2)), bz.zeros((4, 3, 3, 3))), ValueError,
     r"^conv2d: kernel \[4, 3, 3, 3\] with dilation 1 does not fit input \[1, 3, 2, 2\]"),
    ("conv_bool", lambda: bz.conv2d(bz.zeros((1, 1, 3, 3), bz.bool_), bz.zeros((1, 1, 1, 1), bz.bool_)), ValueError,
     r"^conv2d: not supported for bool inputs"),
    ("conv_groups", lambda: bz.conv2d(bz.zeros((1, 4, 5, 5)), bz.zeros((4, 2, 3, 3)), groups=3), ValueError,
     r"^conv2d: groups=3 must divide"),
    ("conv_stride", lambda: bz.conv2d(bz.zeros((1, 3, 5, 5)), bz.zeros((4, 3, 3, 3)), stride=0), ValueError,
     r"^conv2d: stride and dilation must be positive"),
    ("conv_bias", lambda: bz.conv2d(bz.zeros((1, 3, 5, 5)), bz.zeros((4, 3, 3, 3)), bias=bz.zeros(3)), ValueError,
     r"^conv2d: bias of shape \[3\] does not match 4 output channels$"),
    ("conv_pair", lambda: bz.conv2d(bz.zeros((1, 3, 5, 5)), bz.zeros((4, 3, 3, 3)), stride=(1, 2, 3)), ValueError,
     r"^conv2d: expected an int or a pair, got 3 values$"),
    ("negative_dim", lambda: bz.zeros((2, -1)), ValueError, r"^full: negative dimension -1 in shape \[2, -1\]$"),
    # Negative sizes and sizes past int64 (Note [Sizes fit int64]): each
    # once crashed (a heap corruption, a segfault) or wrapped.
    ("broadcast_to_negative", lambda: bz.broadcast_to(bz.tensor(np.float32(1)), (1, -1)), ValueError,
     r"^broadcast_to: negative dimension -1 in shape \[1, -1\]$"),
    ("broadcast_to_negative_same_rank", lambda: bz.broadcast_to(bz.zeros((1, 1)), (1, -3)), ValueError,
     r"^broadcast_to: negative dimension -3 in shape \[1, -3\]$"),
    ("reshape_negative", lambda: bz.zeros((2, 3)).reshape(-2, -3), ValueError,
     r"^reshape: negative dimension -2 in shape \[-2, -3\]$"),
    ("reshape_negative_with_unknown", lambda: bz.reshape(bz.zeros(6), (-1, -3)), ValueError,
     r"^reshape: negative dimension -3 in shape \[-1, -3\]$"),
    ("reshape_unknown_overflow", lambda: bz.zeros(6).reshape(-1, 2**40, 2**40), ValueError,
     r"^reshape: cannot reshape \[6\] \(6 elements\) into \[-1, 1099511627776, 1099511627776\]$"),
    ("zeros_too_big", lambda: bz.sum(bz.zeros((2**61, 8), dtype=bz.int8), axis=1), ValueError,
     r"^full: shape \[2305843009213693952, 8\] is too big \(its size in bytes, at 1 per element, exceeds 2\^63 - 1\)$"),
    ("zero_size_too_big", lambda: bz.zeros((0, 2**62, 2**62)), ValueError, r"^full: shape \[0, .*\] is too big"),
    ("astype_too_big", lambda: bz.zeros(2**62, bz.int8).astype(bz.int64), ValueError,
     r"^astype: shape \[4611686018427387904\] is too big \(its size in bytes, at 8 per element"),
    ("broadcast_too_big", lambda: bz.zeros((2**40, 1), bz.int8) + bz.zeros((1, 2**40), bz.int8), ValueError,
     r"^add: shape \[1099511627776, 1099511627776\] is too big"),
    ("matmul_too_big", lambda: bz.zeros((2**31, 1)) @ bz.zeros((1, 2**31)), ValueError,
     r"^matmul: shape \[2147483648, 2147483648\] is too big"),
    ("arange_too_big", lambda: bz.arange(2**62), ValueError, r"^arange: shape \[4611686018427387904\] is too big"),
    ("arange_too_long", lambda: bz.arange(0.0, 1e300), ValueError, r"^arange: the length of arange\(0, 1e\+300, 1\)"),
    ("arange_nan", lambda: bz.arange(0.0, float("nan")), ValueError, r"^arange: cannot compute the length"),
    ("conv_padding_overflow", lambda: bz.conv2d(bz.zeros((1, 1, 3, 3)), bz.zeros((1, 1, 1, 1)), padding=2**62),
     ValueError, r"^conv2d: padding 4611686018427387904 of input \[1, 1, 3, 3\] makes an output too big$"),
    # Python ints a dtype cannot hold (Note [Python integers out of range]).
    ("full_uint8_300", lambda: bz.full((2,), 300, dtype=bz.uint8), OverflowError,
     r"^full: Python integer 300 out of bounds for uint8$"),
    ("full_uint8_negative", lambda: bz.full((2,), -1, dtype=bz.uint8), OverflowError,
     r"^full: Python integer -1 out of bounds for uint8$"),
    ("add_int8_300", lambda: bz.zeros(2, bz.int8) + 300, OverflowError, r"^add: Python integer 300 out of bounds for int8$"),
    ("radd_beyond_int64", lambda: 2**70 + bz.zeros(2, bz.int64), OverflowError,
     r"^add: Python integer 1180591620717411303424 out of bounds for int64$"),
    # A logical op converts a Python int to int64 whatever the tensor's type, as NumPy's does.
    ("logical_and_float_beyond_int64", lambda: bz.logical_and(bz.zeros(2), 2**63), OverflowError,
     r"^logical_and: Python integer 9223372036854775808 out of bounds for int64$"),
    ("maximum_beyond_int64", lambda: bz.maximum(bz.zeros(2, bz.int32), -2**64), OverflowError,
     r"^maximum: Python integer -18446744073709551616 out of bounds for int32$"),
    ("float_beyond_float64", lambda: bz.zeros(2) + 10**400, OverflowError, r"too large to convert to float"),
    ("arange_uint8_negative", lambda: bz.arange(-4.58, 5, 2, dtype="uint8"), OverflowError,
     r"^arange: Python integer -4 out of bounds for uint8$"),
    ("index_beyond_int64", lambda: bz.zeros(5)[2**70], IndexError,
     r"^index 1180591620717411303424 is out of bounds \(outside int64\)$"),
    ("index_beyond_int64_negative", lambda: bz.zeros((2, 5))[0, -2**64], IndexError,
     r"^index -18446744073709551616 is out of bounds"),
    ("axis_beyond_int64", lambda: bz.zeros((2, 3)).sum(axis=2**70), IndexError,
     r"^sum: axis 1180591620717411303424 is out of range$"),
    ("var_axes_beyond_int64", lambda: bz.var(bz.zeros((2, 3)), axis=(0, 2**64)), IndexError,
     r"^var: axis 18446744073709551616 is out of range$"),
    ("conv_stride_beyond_int64", lambda: bz.conv2d(bz.zeros((1, 1, 3, 3)), bz.zeros((1, 1, 1, 1)), stride=2**64),
     OverflowError, r"^conv2d: value 18446744073709551616 is outside int64$"),
    ("squeeze_repeated_axis", lambda: bz.squeeze(bz.zeros((1, 2)), (0, 0)), ValueError,
     r"^squeeze: repeated axis in \[0, 0\]$"),
    ("slice_step_zero", lambda: bz.zeros(5)[::0], ValueError, r"slice step cannot be zero"),
    # Labels are data (Note [Checked labels]).
    ("cross_entropy_label_high", lambda: bz.cross_entropy(X23(), bz.tensor(np.array([0, 5]))), IndexError,
     r"^cross_entropy: label 5 at \[1\] of labels \[2\] is out of range for 3 classes$"),
    ("cross_entropy_label_negative", lambda: bz.cross_entropy(bz.zeros((2, 2, 3)), bz.tensor(np.array([[0, 1], [-1, 2]]))),
     IndexError, r"^cross_entropy: label -1 at \[1, 0\] of labels \[2, 2\] is out of range for 3 classes$"),
    ("cross_entropy_lazy_label", lambda: bz.cross_entropy(X23(), bz.tensor(np.array([0, 1])) * 3), IndexError,
     r"^cross_entropy: label 3 at \[1\] of labels \[2\] is out of range for 3 classes$"),
    ("arange_step", lambda: bz.arange(0, 5, 0), ValueError, r"^arange: step cannot be zero$"),
    ("astype_dtype", lambda: X23().astype("uint64"), ValueError, r"unsupported dtype 'uint64'"),
    ("tensor_dtype", lambda: bz.tensor(np.zeros(2, np.uint64)), ValueError, r"unsupported dtype 'uint64'"),
    ("tensor_complex", lambda: bz.tensor(np.zeros(2, np.complex64)), ValueError, r"unsupported dtype 'complex64'"),
    ("zeros_dtype", lambda: bz.zeros(3, dtype="complex64"), ValueError, r"unsupported dtype 'complex64'"),
    ("astype_unknown_dtype", lambda: X23().astype("float33"), ValueError, r"unknown dtype 'float33'"),
    ("ragged_list", lambda: bz.tensor([[1, 2], [3]]), ValueError, r"inhomogeneous"),
    ("device_name", lambda: bz.device("tpu").__enter__(), ValueError, r"unknown device 'tpu'"),
    ("gelu_mode", lambda: bz.gelu(X23(), approximate="fast"), ValueError, r"^gelu: approximate must be"),
    ("cross_entropy_labels", lambda: bz.cross_entropy(X23(), bz.zeros(2)), ValueError,
     r"^cross_entropy: labels must be integer class indices"),
    ("item", lambda: X23().item(), ValueError, r"item: only a one-element tensor"),
    ("advanced_index", lambda: X23()[[0, 5]], IndexError,
     r"^indexing: index 5 is out of bounds for axis 0 with size 2 \(tensor of shape \[2, 3\]\)$"),
]


@pytest.mark.parametrize("call,exc,match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error_at_record_time(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
    still_works()


def test_shape_errors_are_raised_when_recorded_not_at_realize():
    a = bz.tensor(np.ones((2, 3), np.float32))
    lazy = bz.exp(a) * 2.0  # recorded, not realized
    with pytest.raises(ValueError, match=r"^add: shapes \[2, 3\] and \[4\]"):
        lazy + bz.zeros(4)
    assert not lazy.is_realized  # the failed op did not realize its inputs
    assert_matches(lazy, np.exp(np.ones((2, 3))) * 2.0, np.float32)


def test_exception_types_follow_standard_hierarchy():
    # IndexError for axes and indices, ValueError for shapes and dtypes: both
    # are caught by a generic `except (IndexError, ValueError)`.
    for call in (lambda: bz.zeros((2, 3)).sum(axis=5), lambda: bz.zeros((2, 3)) + bz.zeros(5)):
        with pytest.raises((IndexError, ValueError)):
            call()


@pytest.mark.parametrize("call, op", [
    (lambda: X23().sum(axis=5), "sum"), (lambda: bz.max(X23(), axis=(0, -3)), "max"),
    (lambda: bz.expand_dims(X23(), 4), "expand_dims"), (lambda: bz.transpose(X23(), (0, 2)), "permute"),
    (lambda: bz.squeeze(X23(), 2), "squeeze"), (lambda: np.mean(X23(), axis=-3), "mean"),
    (lambda: bz.array_split(X23(), 2, axis=2), "array_split"), (lambda: bz.unstack(X23(), axis=2), "unstack"),
    (lambda: X23().sum(axis=2 ** 70), "sum"), (lambda: bz.random.default_rng(0).shuffle(X23(), axis=3), "shuffle"),
])
def test_an_axis_out_of_range_is_numpys_axis_error(call, op):
    # NumPy's AxisError is an IndexError and a ValueError: NumPy code that
    # catches any of the three catches braze's, from C++ and Python alike.
    with pytest.raises(np.exceptions.AxisError, match=rf"^{op}: axis -?\d+ is out of range") as e:
        call()
    assert isinstance(e.value, IndexError) and isinstance(e.value, ValueError)
    still_works()


def test_cuda_unavailable_is_a_clear_runtime_error():
    x = bz.zeros(2)
    with pytest.raises(RuntimeError, match=r"device 'cuda:0' is not available"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match=r"not available"):
        bz.tensor(np.zeros(2), device="cuda")
    still_works()


def test_many_errors_in_a_row_leave_no_state_behind():
    for i in range(50):
        with pytest.raises(ValueError):
            bz.zeros((2, 3)) + bz.zeros(i + 4)
    before = bz.stats()["realizations"]
    still_works()
    assert bz.stats()["realizations"] > before


def test_error_inside_a_longer_expression_names_the_failing_op():
    x = bz.zeros((2, 3))
    with pytest.raises(ValueError, match=r"^maximum: shapes \[2, 3\] and \[2\]"):
        bz.exp(x * 2.0 + 1.0).sum(axis=0).reshape(3, 1) - bz.maximum(x, bz.zeros(2))


def test_no_std_text_reaches_python():
    # Note [No std:: text reaches Python]: conversions that once raised
    # "RuntimeError: std::bad_cast".
    x = bz.tensor(np.arange(5))
    calls = [lambda: x[2**70], lambda: x + 2**70, lambda: x * -2**70, lambda: x < bz.tensor(np.arange(5)) + 2**70,
             lambda: bz.full((2,), 2**70, dtype=bz.int64), lambda: x[2**70:], lambda: x.sum(axis=2**64),
             lambda: bz.arange(2**70)]
    for call in calls:
        try:
            call()
        except (ValueError, TypeError, IndexError, OverflowError) as e:
            assert "std::" not in str(e), str(e)
    still_works()


def test_huge_allocation_is_a_memory_error_and_braze_keeps_working():
    # Recordable (2^62 bytes fit int64) but not allocatable: a MemoryError
    # from realize, with braze's own words.
    with pytest.raises(MemoryError, match=r"^braze: out of memory"):
        bz.zeros(2**59, bz.int64).astype(bz.int8).astype(bz.int64).numpy()
    still_works()


def test_bitwise_operators_are_bitwise_and_floats_are_a_type_error():
    """& | ^ ~ << >> are NumPy's bitwise ops (issue 22): [1, 2, 12] & [3, 1, 10]
    is [1, 0, 8], not the logical [True, True, True]; on floats they are a
    TypeError naming the operator and the dtype, as NumPy's."""
    a = bz.tensor(np.array([1, 2, 12], np.int32))
    b = bz.tensor(np.array([3, 1, 10], np.int32))
    assert (a & b).numpy().tolist() == [1, 0, 8]
    assert (a | 1).numpy().tolist() == [1, 3, 13]
    assert (~a).numpy().tolist() == [-2, -3, -13]
    assert (1 & a).numpy().tolist() == [1, 0, 0]
    f = bz.tensor(np.ones(2, np.float32))
    for symbol, call in (("&", lambda: f & b[:2]), ("|", lambda: f | True), ("~", lambda: ~f), ("^", lambda: 1 ^ f),
                         ("<<", lambda: a << f[:1]), (">>", lambda: f >> 1)):
        with pytest.raises(TypeError, match=rf"^{re.escape(symbol)}: bitwise_\w+ takes integers and bools, not float32"):
            call()
    m = bz.tensor(np.array([True, False, True]))
    n = np.array([True, True, False])
    np.testing.assert_array_equal((m & bz.tensor(n)).numpy(), np.array([True, False, False]) & n)
    np.testing.assert_array_equal((m | False).numpy(), np.array([True, False, True]))
    np.testing.assert_array_equal((~m).numpy(), ~np.array([True, False, True]))
    assert ((a + 1) * 2).numpy().tolist() == [4, 6, 26]  # braze goes on working
