"""User errors raise the documented Python exception at the op that caused
them (when it is recorded, never at realize time), with a message naming the
op and the shapes; braze keeps working afterwards."""

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
    ("conv_int", lambda: bz.conv2d(bz.zeros((1, 1, 3, 3), bz.int32), bz.zeros((1, 1, 1, 1), bz.int32)), ValueError,
     r"^conv2d: needs float inputs"),
    ("conv_groups", lambda: bz.conv2d(bz.zeros((1, 4, 5, 5)), bz.zeros((4, 2, 3, 3)), groups=3), ValueError,
     r"^conv2d: groups=3 must divide"),
    ("conv_stride", lambda: bz.conv2d(bz.zeros((1, 3, 5, 5)), bz.zeros((4, 3, 3, 3)), stride=0), ValueError,
     r"^conv2d: stride and dilation must be positive"),
    ("conv_bias", lambda: bz.conv2d(bz.zeros((1, 3, 5, 5)), bz.zeros((4, 3, 3, 3)), bias=bz.zeros(3)), ValueError,
     r"^conv2d: bias of shape \[3\] does not match 4 output channels$"),
    ("conv_pair", lambda: bz.conv2d(bz.zeros((1, 3, 5, 5)), bz.zeros((4, 3, 3, 3)), stride=(1, 2, 3)), ValueError,
     r"^conv2d: expected an int or a pair, got 3 values$"),
    ("negative_dim", lambda: bz.zeros((2, -1)), ValueError, r"^full: negative dimension in shape \[2, -1\]$"),
    ("arange_step", lambda: bz.arange(0, 5, 0), ValueError, r"^arange: step cannot be zero$"),
    ("astype_dtype", lambda: X23().astype("int16"), ValueError, r"unknown dtype 'int16'"),
    ("tensor_dtype", lambda: bz.tensor(np.zeros(2, np.int16)), ValueError, r"unsupported dtype 'int16'"),
    ("tensor_complex", lambda: bz.tensor(np.zeros(2, np.complex64)), ValueError, r"unsupported dtype 'complex64'"),
    ("zeros_dtype", lambda: bz.zeros(3, dtype="complex64"), ValueError, r"unknown dtype 'complex64'"),
    ("ragged_list", lambda: bz.tensor([[1, 2], [3]]), ValueError, r"inhomogeneous"),
    ("device_name", lambda: bz.device("tpu").__enter__(), ValueError, r"unknown device 'tpu'"),
    ("gelu_mode", lambda: bz.gelu(X23(), approximate="fast"), ValueError, r"^gelu: approximate must be"),
    ("cross_entropy_labels", lambda: bz.cross_entropy(X23(), bz.zeros(2)), ValueError,
     r"^cross_entropy: labels must be integer class indices"),
    ("item", lambda: X23().item(), ValueError, r"item: only a one-element tensor"),
    ("advanced_index", lambda: X23()[[0, 1]], TypeError, r"basic indexing only"),
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
