// The functions of braze's C++ API, named as in NumPy / the array API.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <variant>

#include "runtime/tensor.h"

namespace braze {

// Element-wise ops, one function per `Auto` row of graph/ops.def:
//   Tensor exp(const Operand& x);  Tensor add(const Operand& a, const Operand& b); ...
#define BRAZE_FN_1(name, api) \
  inline Tensor api(const Operand& x) { return record(Op::name, std::initializer_list<Operand>{x}); }
#define BRAZE_FN_2(name, api)                                                      \
  inline Tensor api(const Operand& a, const Operand& b) {                          \
    return record(Op::name, std::initializer_list<Operand>{a, b});                  \
  }
#define BRAZE_FN_3(name, api)                                                      \
  inline Tensor api(const Operand& a, const Operand& b, const Operand& c) {        \
    return record(Op::name, std::initializer_list<Operand>{a, b, c});               \
  }
#define BRAZE_FN_Auto(name, api, arity) BRAZE_FN_##arity(name, api)
#define BRAZE_FN_Hand(name, api, arity)
#define BRAZE_OP(name, api, arity, kind, rule, numpy, flags, builder) BRAZE_FN_##builder(name, api, arity)
#include "graph/ops.def"
#undef BRAZE_FN_Auto
#undef BRAZE_FN_Hand
#undef BRAZE_FN_1
#undef BRAZE_FN_2
#undef BRAZE_FN_3

inline Tensor record(Op op, std::initializer_list<Operand> xs, Attr attr = {}) {
  return record(op, std::span<const Operand>(xs.begin(), xs.size()), std::move(attr));
}

Tensor astype(const Tensor& x, DType dtype);

// Operators, with NumPy's meaning.
inline Tensor operator+(const Tensor& a, const Operand& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Operand& b) { return subtract(a, b); }
inline Tensor operator*(const Tensor& a, const Operand& b) { return multiply(a, b); }
inline Tensor operator/(const Tensor& a, const Operand& b) { return divide(a, b); }
inline Tensor operator%(const Tensor& a, const Operand& b) { return remainder(a, b); }
inline Tensor operator<(const Tensor& a, const Operand& b) { return less(a, b); }
inline Tensor operator<=(const Tensor& a, const Operand& b) { return less_equal(a, b); }
inline Tensor operator>(const Tensor& a, const Operand& b) { return greater(a, b); }
inline Tensor operator>=(const Tensor& a, const Operand& b) { return greater_equal(a, b); }
inline Tensor operator&(const Tensor& a, const Operand& b) { return bitwise_and(a, b); }
inline Tensor operator|(const Tensor& a, const Operand& b) { return bitwise_or(a, b); }
inline Tensor operator^(const Tensor& a, const Operand& b) { return bitwise_xor(a, b); }
inline Tensor operator<<(const Tensor& a, const Operand& b) { return bitwise_left_shift(a, b); }
inline Tensor operator>>(const Tensor& a, const Operand& b) { return bitwise_right_shift(a, b); }
inline Tensor operator&&(const Tensor& a, const Operand& b) { return logical_and(a, b); }
inline Tensor operator||(const Tensor& a, const Operand& b) { return logical_or(a, b); }
inline Tensor operator+(Scalar a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(Scalar a, const Tensor& b) { return subtract(a, b); }
inline Tensor operator*(Scalar a, const Tensor& b) { return multiply(a, b); }
inline Tensor operator/(Scalar a, const Tensor& b) { return divide(a, b); }
inline Tensor operator-(const Tensor& x) { return negative(x); }
inline Tensor operator!(const Tensor& x) { return logical_not(x); }
inline Tensor operator~(const Tensor& x) { return bitwise_invert(x); }
// Element-wise comparison, as in NumPy (not identity).
inline Tensor eq(const Operand& a, const Operand& b) { return equal(a, b); }

// Movement: zero-copy views (a reshape that strides cannot express copies).
Tensor reshape(const Tensor& x, Shape shape);  // one dim may be -1
Tensor permute(const Tensor& x, std::vector<int64_t> axes);
Tensor transpose(const Tensor& x, std::optional<std::vector<int64_t>> axes = std::nullopt);  // default: reversed
Tensor matrix_transpose(const Tensor& x);  // swaps the last two axes (.mT)
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor expand_dims(const Tensor& x, int64_t axis);
inline Tensor unsqueeze(const Tensor& x, int64_t axis) { return expand_dims(x, axis); }
Tensor squeeze(const Tensor& x, std::optional<std::vector<int64_t>> axes = std::nullopt);
Tensor flatten(const Tensor& x);
// Note [Windows] (graph/shape.h): zeros before[d] before and after[d]
// after each axis d, as a view: nothing is copied.
Tensor pad(const Tensor& x, std::vector<int64_t> before, std::vector<int64_t> after);
// `step - 1` zeros between the elements along `axis` (interior padding):
// the gradient of a strided slice, a transposed convolution's input.
Tensor spread(const Tensor& x, int64_t axis, int64_t step);

// Joining: NumPy's concatenate and stack, with its dtype promotion. These
// realize their inputs and return a realized tensor (Note [Concatenation
// realizes], runtime/concatenate.cpp).
Tensor concatenate(std::span<const Tensor> xs, int64_t axis = 0);
Tensor stack(std::span<const Tensor> xs, int64_t axis = 0);

// Basic indexing: integers (drop the axis), slices with any nonzero step,
// new axes and one ellipsis, as in NumPy's x[1, 2:-1:2, None, ...].
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
struct NewAxis {};
struct Ellipsis {};
using Index = std::variant<int64_t, Slice, NewAxis, Ellipsis>;
Tensor index(const Tensor& x, std::span<const Index> items);

// Note [Statistics precision]
// mean, var, std, layer_norm and rms_norm compute in stats_dtype(x) and
// return stats_result(x): float16 and bfloat16 inputs in float32 (as
// NumPy's mean of float16 accumulates in float32: in float16 the count
// 65536 is already inf and a sum of 65520 ones saturates), int64 inputs in
// float64 (as NumPy computes var of int64: squares of values near 1e18
// overflow float32) and int32 inputs in float64 (float32 keeps 24 of their
// 32 bits), other integers and float32 in float32. The result
// keeps a float input's dtype; integers give float32 (docs/semantics.md).
DType stats_dtype(DType t);
DType stats_result(DType t);

// Reductions. `axes` nullopt means all axes.
using Axes = std::optional<std::vector<int64_t>>;
Tensor sum(const Tensor& x, Axes axes = std::nullopt, bool keepdims = false);
Tensor prod(const Tensor& x, Axes axes = std::nullopt, bool keepdims = false);
Tensor max(const Tensor& x, Axes axes = std::nullopt, bool keepdims = false);
Tensor min(const Tensor& x, Axes axes = std::nullopt, bool keepdims = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Tensor mean(const Tensor& x, Axes axes = std::nullopt, bool keepdims = false);
Tensor var(const Tensor& x, Axes axes = std::nullopt, double correction = 0, bool keepdims = false);
Tensor std(const Tensor& x, Axes axes = std::nullopt, double correction = 0, bool keepdims = false);
Tensor logsumexp(const Tensor& x, Axes axes = std::nullopt, bool keepdims = false);

// Composites: built from the primitives above, in the graph, so that the
// fusion pass can turn each back into one kernel.
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// Normalises over the last weight.ndim() axes (the last axis without weight).
Tensor layer_norm(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
Tensor rms_norm(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt, double eps = 1e-6);
Tensor gelu(const Tensor& x, std::string_view approximate = "none");  // "none" (erf) or "tanh"
Tensor silu(const Tensor& x);
Tensor mse_loss(const Tensor& prediction, const Tensor& target);
// Mean cross-entropy of logits [..., C] against integer labels [...].
Tensor cross_entropy(const Tensor& logits, const Tensor& labels);

// Library ops.
Tensor matmul(const Tensor& a, const Tensor& b);  // NumPy matmul: 1-d operands, batch broadcasting
struct Conv2dOptions {
  std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
};
Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              const Conv2dOptions& options = {});

}  // namespace braze
