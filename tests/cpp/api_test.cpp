// The C++ API end to end (runtime/ops.h): creation, views, reductions and
// composites against hand-computed values, through whichever backend
// realize() uses, plus realizing several tensors at once and the counters.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/braze.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::contains;
using testing::error_of;
using testing::expect_all_close;

constexpr double kInf = std::numeric_limits<double>::infinity();
// Generated float32 kernels carry a few ulp on transcendentals (jit_cpu/README.md).
constexpr double kTol = 2e-6;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// [[1, 2, 3], [4, 5, 6]] as float32.
Tensor m23() { return from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }

// --- creation -----------------------------------------------------------------

TEST(ApiCreation, FullZerosOnesAndTheirDTypes) {
  Tensor a = full({2, 2}, 7);
  EXPECT_EQ(a.dtype(), DType::Int64);  // a Python int's default
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{7, 7, 7, 7}));
  EXPECT_EQ(full({2}, 1.5).dtype(), DType::Float32);
  EXPECT_EQ(full({2}, true).dtype(), DType::Bool);
  EXPECT_EQ(values(full({3}, 2.9, DType::Int32)), (std::vector<double>{2, 2, 2}));  // truncates, as NumPy
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.dtype(), DType::Float32);
  EXPECT_EQ(values(z), std::vector<double>(6, 0));
  Tensor o = ones({3}, DType::Int8);
  EXPECT_EQ(o.dtype(), DType::Int8);
  EXPECT_EQ(values(o), std::vector<double>(3, 1));
  EXPECT_EQ(full({0, 3}, 1.0).numel(), 0);
  EXPECT_EQ(full({}, 4.0).item(), 4.0);
  EXPECT_THROW(full({-1}, 0), std::invalid_argument);
}

TEST(ApiCreation, LikeFunctionsKeepShapeAndDType) {
  Tensor x = from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  Tensor z = zeros_like(x);
  EXPECT_EQ(z.shape(), x.shape());
  EXPECT_EQ(z.dtype(), DType::Int32);
  EXPECT_EQ(ones_like(x, DType::Float64).dtype(), DType::Float64);
  EXPECT_EQ(values(full_like(x, 2.5)), (std::vector<double>{2, 2, 2, 2}));  // int32 like x
}

TEST(ApiCreation, Arange) {
  Tensor a = arange(0, 5);
  EXPECT_EQ(a.dtype(), DType::Int64);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(5, 0, -2).to_vector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  Tensor f = arange(0.0, 1.0, 0.25);
  EXPECT_EQ(f.dtype(), DType::Float32);
  EXPECT_EQ(values(f), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(arange(3, 3).numel(), 0);
  EXPECT_EQ(arange(5, 0).numel(), 0);
  EXPECT_EQ(arange(0, 4, 1, DType::Float16).dtype(), DType::Float16);
  EXPECT_THROW(arange(0, 4, 0), std::invalid_argument);
}

TEST(ApiCreation, FromVectorChecksTheCount) {
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([] { from_vector<float>({1, 2, 3}, {2, 2}); }), "3 values"));
  Tensor b = from_vector<bool>({true, false}, {2});
  EXPECT_EQ(b.dtype(), DType::Bool);
}

// --- weak scalars -------------------------------------------------------------

TEST(ApiScalars, PythonScalarsAreWeak) {
  EXPECT_EQ((ones({2}, DType::Float16) * 2.0).dtype(), DType::Float16);
  EXPECT_EQ((ones({2}, DType::Int8) + 1).dtype(), DType::Int8);
  EXPECT_EQ((ones({2}, DType::Int32) + 0.5).dtype(), DType::Float32);
  EXPECT_EQ((ones({2}, DType::Bool) + 1).dtype(), DType::Int64);
  EXPECT_EQ((2.0 * ones({2}, DType::BFloat16)).dtype(), DType::BFloat16);
  EXPECT_EQ(values(ones({2}, DType::Int8) + 127), (std::vector<double>{-128, -128}));  // wraps in int8
  // where: the condition takes no part in promotion; two scalars take their defaults.
  Tensor c = from_vector<bool>({true, false}, {2});
  EXPECT_EQ(where(c, ones({2}, DType::Float16), 0.0).dtype(), DType::Float16);
  Tensor w = where(c, 1, 2.5);
  EXPECT_EQ(w.dtype(), DType::Float32);
  EXPECT_EQ(values(w), (std::vector<double>{1, 2.5}));
  // A non-bool condition is read as truth values.
  EXPECT_EQ(values(where(from_vector<int32_t>({0, 3}, {2}), 1.0, -1.0)), (std::vector<double>{-1, 1}));
}

TEST(ApiOperators, BitwiseOperatorsAreNumPys) {
  Tensor a = from_vector<int32_t>({1, 2, 12}, {3}), b = from_vector<int32_t>({3, 1, 10}, {3});
  EXPECT_EQ((a & b).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 8}));
  EXPECT_EQ((a | b).to_vector<int64_t>(), (std::vector<int64_t>{3, 3, 14}));
  EXPECT_EQ((a ^ b).to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 6}));
  EXPECT_EQ((~a).to_vector<int64_t>(), (std::vector<int64_t>{-2, -3, -13}));
  EXPECT_EQ((a << 30).to_vector<int64_t>(), (std::vector<int64_t>{1 << 30, INT32_MIN, 0}));
  EXPECT_EQ((-a >> 40).to_vector<int64_t>(), (std::vector<int64_t>{-1, -1, -1}));  // past the width: the sign
  Tensor t = from_vector<bool>({true, false}, {2});
  EXPECT_EQ((~t).dtype(), DType::Bool);
  EXPECT_EQ((~t).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ((t << t).dtype(), DType::Int8);
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([] { (void)(m23() & 1); }), "bitwise_and: not supported for float"));
}

TEST(ApiScalars, NegativeZeroConstantIsNotPositiveZero) {
  // Two constants that compare equal as doubles but differ in sign, in one graph.
  Tensor pos = divide(1.0, full({2}, 0.0));
  Tensor neg = divide(1.0, full({2}, -0.0));
  realize({pos, neg});
  EXPECT_EQ(values(pos), (std::vector<double>{kInf, kInf}));
  EXPECT_EQ(values(neg), (std::vector<double>{-kInf, -kInf}));
}

// --- joining ------------------------------------------------------------------

TEST(ApiJoin, ConcatenateAndStackFromCpp) {
  Tensor a = m23();
  std::vector<Tensor> rows{a, a * 2.0};
  EXPECT_EQ(values(concatenate(rows, 0)), (std::vector<double>{1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12}));
  Tensor cols = concatenate(rows, 1);
  EXPECT_FALSE(cols.is_realized());  // two parts: a lazy join (Note [Lazy concatenation])
  EXPECT_EQ(cols.shape(), (Shape{2, 6}));
  EXPECT_EQ(values(cols), (std::vector<double>{1, 2, 3, 2, 4, 6, 4, 5, 6, 8, 10, 12}));
  Tensor st = stack(rows, -1);
  EXPECT_EQ(st.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values(st), (std::vector<double>{1, 2, 2, 4, 3, 6, 4, 8, 5, 10, 6, 12}));
  std::vector<Tensor> bad{a, transpose(a)};
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { concatenate(bad, 0); }), "concatenate: shapes [2, 3] and [3, 2] differ in axis 1"));
}

// --- views --------------------------------------------------------------------

TEST(ApiViews, ReshapeTransposeAndFlatten) {
  Tensor x = reshape(arange(0, 6), {2, 3});
  EXPECT_EQ(reshape(x, {-1, 2}).shape(), (Shape{3, 2}));
  Tensor t = transpose(x);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  // Flattening a transpose cannot be a view; the values are still right.
  EXPECT_EQ(flatten(t).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  Tensor b = reshape(arange(0, 24), {2, 3, 4});
  EXPECT_EQ(matrix_transpose(b).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(permute(b, {-1, 0, 1}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(matrix_transpose(b).to_vector<int64_t>()[1], 4);
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { reshape(x, {-1, -1}); }), "only one dimension"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { reshape(x, {4, -1}); }), "cannot reshape [2, 3]"));
  EXPECT_THROW(permute(b, {0, 1}), std::invalid_argument);
  EXPECT_THROW(permute(b, {0, 1, 3}), std::out_of_range);
}

TEST(ApiViews, SqueezeExpandDimsBroadcast) {
  Tensor x = from_vector<float>({1, 2, 3}, {1, 3, 1});
  EXPECT_EQ(squeeze(x).shape(), (Shape{3}));
  EXPECT_EQ(squeeze(x, std::vector<int64_t>{-1}).shape(), (Shape{1, 3}));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { squeeze(x, std::vector<int64_t>{1}); }), "size 3"));
  EXPECT_EQ(expand_dims(squeeze(x), 0).shape(), (Shape{1, 3}));
  EXPECT_EQ(expand_dims(squeeze(x), -1).shape(), (Shape{3, 1}));
  EXPECT_THROW(expand_dims(squeeze(x), 2), std::out_of_range);
  Tensor b = broadcast_to(squeeze(x), {2, 3});
  EXPECT_EQ(values(b), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  std::string msg = error_of<std::invalid_argument>([&] { broadcast_to(squeeze(x), {2, 4}); });
  EXPECT_TRUE(contains(msg, "[3]"));
  EXPECT_TRUE(contains(msg, "[2, 4]"));
}

TEST(ApiViews, BasicIndexing) {
  Tensor x = reshape(arange(0, 6), {2, 3});  // [[0, 1, 2], [3, 4, 5]]
  auto idx = [&](std::vector<Index> items) { return index(x, items).to_vector<int64_t>(); };
  EXPECT_EQ(idx({Slice{}, Slice{std::nullopt, std::nullopt, -1}}), (std::vector<int64_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(idx({int64_t{1}}), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(idx({int64_t{-1}, Slice{1, std::nullopt, 1}}), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(idx({Slice{std::nullopt, std::nullopt, -1}, Slice{std::nullopt, std::nullopt, -2}}),
            (std::vector<int64_t>{5, 3, 2, 0}));
  std::vector<Index> items = {NewAxis{}, Ellipsis{}, int64_t{0}};
  Tensor y = index(x, items);
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{0, 3}));
  std::vector<Index> empty = {Slice{2, 1, 1}};
  EXPECT_EQ(index(x, empty).shape(), (Shape{0, 3}));
  std::vector<Index> bad = {int64_t{2}};
  std::string msg = error_of<std::out_of_range>([&] { index(x, bad); });
  EXPECT_TRUE(contains(msg, "index 2"));
  EXPECT_TRUE(contains(msg, "size 2"));
  std::vector<Index> too_many = {int64_t{0}, int64_t{0}, int64_t{0}};
  EXPECT_THROW(index(x, too_many), std::out_of_range);
  std::vector<Index> zero_step = {Slice{std::nullopt, std::nullopt, 0}};
  EXPECT_THROW(index(x, zero_step), std::invalid_argument);
}

// --- reductions ---------------------------------------------------------------

TEST(ApiReductions, AxesAndKeepdims) {
  Tensor x = m23();
  EXPECT_EQ(values(sum(x, Axes{{0}})), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(sum(x, Axes{{1}}, /*keepdims=*/true).shape(), (Shape{2, 1}));
  EXPECT_EQ(sum(x).shape(), Shape{});
  EXPECT_EQ(sum(x).item(), 21);
  EXPECT_EQ(values(sum(x, Axes{{-1, 0}})), (std::vector<double>{21}));
  EXPECT_EQ(values(prod(x, Axes{{1}})), (std::vector<double>{6, 120}));
  EXPECT_EQ(values(max(x, Axes{{0}})), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(values(min(x, Axes{{1}}, true)), (std::vector<double>{1, 4}));
  EXPECT_EQ(argmax(x).item_int(), 5);
  EXPECT_EQ(argmin(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(argmax(x, 0, /*keepdims=*/true).shape(), (Shape{1, 3}));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { sum(x, Axes{{1, -1}}); }), "repeated axis"));
  EXPECT_THROW(sum(x, Axes{{2}}), std::out_of_range);
}

TEST(ApiReductions, Statistics) {
  Tensor x = m23();
  expect_all_close(values(mean(x, Axes{{1}})), {2, 5}, kTol);
  EXPECT_EQ(mean(from_vector<int32_t>({1, 2}, {2})).dtype(), DType::Float32);
  EXPECT_NEAR(var(x).item(), 17.5 / 6, 1e-6);
  expect_all_close(values(var(x, Axes{{1}}, /*correction=*/1)), {1, 1}, kTol);
  expect_all_close(values(std(x, Axes{{1}})), {std::sqrt(2.0 / 3), std::sqrt(2.0 / 3)}, kTol);
  Tensor l = logsumexp(x, Axes{{1}}, /*keepdims=*/true);
  EXPECT_EQ(l.shape(), (Shape{2, 1}));
  expect_all_close(values(l), {std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)),
                               std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0))},
                   kTol);
  // Large values do not overflow; an infinite max is carried, not NaN.
  expect_all_close(values(logsumexp(from_vector<float>({1000, 1000}, {2}))), {1000 + std::log(2.0)}, kTol);
  EXPECT_EQ(logsumexp(from_vector<double>({-kInf, -kInf}, {2}, DType::Float32)).item(), -kInf);
  EXPECT_EQ(logsumexp(from_vector<double>({kInf, 1}, {2}, DType::Float32)).item(), kInf);
}

TEST(ApiReductions, EmptyAxes) {
  Tensor e = zeros({2, 0});
  EXPECT_EQ(values(sum(e, Axes{{1}})), (std::vector<double>{0, 0}));
  EXPECT_EQ(values(prod(e, Axes{{1}})), (std::vector<double>{1, 1}));
  std::vector<double> m = values(mean(e, Axes{{1}}));
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  EXPECT_EQ(values(logsumexp(e, Axes{{1}})), (std::vector<double>{-kInf, -kInf}));
  EXPECT_EQ(softmax(e).shape(), (Shape{2, 0}));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { max(e, Axes{{1}}); }), "max"));
  EXPECT_THROW(argmax(e, 1), std::invalid_argument);
  EXPECT_EQ(sum(zeros({0}, DType::Int32)).item_int(), 0);
}

TEST(ApiReductions, NaN) {
  Tensor x = from_vector<float>({1, NAN, 3, NAN}, {4});
  EXPECT_TRUE(std::isnan(max(x).item()));
  EXPECT_TRUE(std::isnan(min(x).item()));
  EXPECT_EQ(argmax(x).item_int(), 1);
  EXPECT_EQ(argmin(x).item_int(), 1);
}

// --- composites -----------------------------------------------------------------

TEST(ApiComposites, SoftmaxAndLogSoftmax) {
  Tensor x = from_vector<float>({1, 2, 3, 1000, 1000, 1000}, {2, 3});
  expect_all_close(values(softmax(x)), {0.09003057317038046, 0.24472847105479764, 0.6652409557748219, 1.0 / 3,
                                        1.0 / 3, 1.0 / 3},
                   kTol);
  expect_all_close(values(log_softmax(x)), {-2.4076059644443806, -1.4076059644443806, -0.40760596444438063,
                                            -std::log(3.0), -std::log(3.0), -std::log(3.0)},
                   kTol);
  // Along axis 0: each column of [[1, 2, 3], [1000, ...]] is [0, 1].
  expect_all_close(values(softmax(x, 0)), {0, 0, 0, 1, 1, 1}, kTol);
  Tensor i = softmax(from_vector<int32_t>({0, 0}, {2}));
  EXPECT_EQ(i.dtype(), DType::Float32);
  expect_all_close(values(i), {0.5, 0.5}, kTol);
}

TEST(ApiComposites, LayerNormAndRmsNorm) {
  Tensor x = from_vector<float>({1, 2, 3, 4}, {1, 4});
  const double s = std::sqrt(1.25 + 1e-5);
  std::vector<double> norm = {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s};
  expect_all_close(values(layer_norm(x)), norm, 1e-5);
  Tensor w = from_vector<float>({1, 2, 1, 2}, {4});
  Tensor b = from_vector<float>({0, 0, 1, 1}, {4});
  expect_all_close(values(layer_norm(x, w, b)), {norm[0], 2 * norm[1], norm[2] + 1, 2 * norm[3] + 1}, 1e-5);
  const double r = std::sqrt(7.5 + 1e-6);
  expect_all_close(values(rms_norm(x)), {1 / r, 2 / r, 3 / r, 4 / r}, 1e-5);
  expect_all_close(values(rms_norm(x, w)), {1 / r, 4 / r, 3 / r, 8 / r}, 1e-5);
  std::string msg = error_of<std::invalid_argument>([&] { layer_norm(x, from_vector<float>({1, 2}, {2})); });
  EXPECT_TRUE(contains(msg, "layer_norm"));
  EXPECT_TRUE(contains(msg, "[2]"));
}

TEST(ApiComposites, ActivationsAndLosses) {
  Tensor x = from_vector<float>({-1, 0, 1}, {3});
  expect_all_close(values(gelu(x)), {-0.15865525393145707, 0, 0.8413447460685429}, 1e-5);
  expect_all_close(values(gelu(x, "tanh")), {-0.15880800939172324, 0, 0.8411919906082768}, 1e-5);
  EXPECT_THROW(gelu(x, "fast"), std::invalid_argument);
  expect_all_close(values(silu(x)), {-0.2689414213699951, 0, 0.7310585786300049}, 1e-5);
  EXPECT_NEAR(mse_loss(from_vector<float>({1, 2, 3}, {3}), ones({3})).item(), 5.0 / 3, 1e-6);
  Tensor logits = from_vector<float>({1, 2, 3, 1, 1, 1}, {2, 3});
  Tensor labels = from_vector<int32_t>({2, 0}, {2});
  EXPECT_NEAR(cross_entropy(logits, labels).item(), (0.40760596444438063 + std::log(3.0)) / 2, 1e-5);
  EXPECT_THROW(cross_entropy(logits, from_vector<float>({2, 0}, {2})), std::invalid_argument);
  EXPECT_THROW(cross_entropy(logits, from_vector<int32_t>({2, 0, 1}, {3})), std::invalid_argument);
}

// --- library ops ------------------------------------------------------------------

TEST(ApiLibrary, MatMulFollowsNumPyForOneDOperands) {
  Tensor v = from_vector<float>({1, 2, 3}, {3});
  Tensor w = from_vector<float>({4, 5, 6}, {3});
  Tensor dot = matmul(v, w);
  EXPECT_EQ(dot.shape(), Shape{});
  EXPECT_EQ(dot.item(), 32);
  Tensor m = m23();
  EXPECT_EQ(values(matmul(m, v)), (std::vector<double>{14, 32}));
  EXPECT_EQ(values(matmul(from_vector<float>({1, 1}, {2}), m)), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(values(matmul(m, transpose(m))), (std::vector<double>{14, 32, 32, 77}));
  EXPECT_EQ(matmul(zeros({2, 1, 2, 3}), zeros({4, 3, 5})).shape(), (Shape{2, 4, 2, 5}));
  std::string msg = error_of<std::invalid_argument>([&] { matmul(m, m); });
  EXPECT_TRUE(contains(msg, "[2, 3]"));
  EXPECT_TRUE(contains(msg, "not aligned"));
}

TEST(ApiLibrary, ConstantOperandsAreWrittenOutForTheLibrary) {
  // A constant or an arange has no memory until a kernel writes it; the
  // library call reads a copy (bz.full((1, 1), 2.0) @ b crashed OpenBLAS).
  Tensor b = from_vector<double>({1, 1, 1}, {1, 3});
  EXPECT_EQ(values(matmul(full({1, 1}, 2.0, DType::Float64), b)), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(values(matmul(transpose(b), full({1, 1}, 2.0, DType::Float64))), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(values(matmul(full({2, 2}, 2.0f), ones({2, 3}))), (std::vector<double>(6, 4)));
  Tensor r = reshape(arange(0, 4, 1, DType::Float32), {2, 2});
  EXPECT_EQ(values(matmul(r, r)), (std::vector<double>{2, 3, 6, 11}));
}

TEST(ApiLibrary, Conv2dWithBias) {
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  Tensor w = from_vector<float>({1, 0, 0, -1, 2, 2, 2, 2}, {2, 1, 2, 2});
  Tensor y = conv2d(x, w, from_vector<float>({10, 0}, {2}));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  // Channel 0: x[i][j] - x[i+1][j+1] + 10 = 6 everywhere; channel 1: 2 * (sum of each 2x2 window).
  EXPECT_EQ(values(y), (std::vector<double>{6, 6, 6, 6, 24, 32, 48, 56}));
  Conv2dOptions strided;
  strided.stride = {2, 2};
  strided.padding = {1, 1};
  EXPECT_EQ(conv2d(x, w, std::nullopt, strided).shape(), (Shape{1, 2, 2, 2}));
  EXPECT_THROW(conv2d(x, w, from_vector<float>({1, 2, 3}, {3})), std::invalid_argument);
}

// --- realize and stats --------------------------------------------------------------

int64_t stat(std::string_view name) {
  for (const auto& [k, v] : Runtime::get().stats_snapshot())
    if (k == name) return v;
  ADD_FAILURE() << "no counter " << name;
  return -1;
}

TEST(ApiRealize, SeveralTensorsInOneGraph) {
  Tensor x = m23();
  Tensor a = exp(x) * 2.0;
  Tensor b = a + 1.0;
  Tensor c = sum(a, Axes{{1}});
  Runtime::get().reset_stats();
  realize({a, b, c});
  EXPECT_TRUE(a.is_realized() && b.is_realized() && c.is_realized());
  EXPECT_EQ(stat("realizations"), 1);
  std::vector<double> av = values(a);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(av[i], 2 * std::exp(i + 1.0), 2 * std::exp(i + 1.0) * kTol);
    EXPECT_NEAR(values(b)[i], av[i] + 1, (av[i] + 1) * kTol);
  }
  expect_all_close(values(c), {av[0] + av[1] + av[2], av[3] + av[4] + av[5]}, kTol);
  // Realizing what is already realized does nothing.
  realize({a, b, c});
  EXPECT_EQ(stat("realizations"), 1);
  // A realized tensor feeds a new graph as an input.
  EXPECT_NEAR((b - a).to_vector<double>()[0], 1.0, 1e-5);
  EXPECT_EQ(stat("realizations"), 2);
}

TEST(ApiRealize, StatsCounters) {
  Runtime& rt = Runtime::get();
  rt.reset_stats();
  for (const auto& [name, v] : rt.stats_snapshot()) EXPECT_EQ(v, 0) << name;
  std::vector<std::string> names;
  for (const auto& [name, v] : rt.stats_snapshot()) names.push_back(name);
  for (const char* documented : {"kernels_launched", "kernels_compiled", "codegen_ns", "kernels_interpreted", "cache_hits_memory",
                                 "cache_hits_disk", "programs_compiled", "programs_replayed", "allocations",
                                 "bytes_allocated", "arena_bytes", "realizations", "reference_evaluations"})
    EXPECT_NE(std::find(names.begin(), names.end(), documented), names.end()) << documented;

  Tensor y = softmax(from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}));
  (void)y.data();
  EXPECT_EQ(stat("realizations"), 1);
  EXPECT_GE(stat("allocations"), 1);
  EXPECT_GE(stat("bytes_allocated"), 8 * 4);  // at least the result
  if (rt.backend() == BackendKind::Reference) {
    EXPECT_EQ(stat("reference_evaluations"), 1);
    EXPECT_EQ(stat("kernels_launched"), 0);
  } else {
    EXPECT_EQ(stat("reference_evaluations"), 0);
    EXPECT_GE(stat("kernels_launched"), 1);
    EXPECT_EQ(stat("kernels_launched"), stat("kernels_compiled") + stat("cache_hits_memory") +
                                            stat("kernels_interpreted"));
    EXPECT_EQ(stat("kernels_compiled") > 0, stat("codegen_ns") > 0);  // generating code takes time
  }
  // Recording is lazy: building a graph allocates and counts nothing.
  rt.reset_stats();
  Tensor z = exp(y) + 1.0;
  EXPECT_EQ(stat("allocations"), 0);
  EXPECT_EQ(stat("realizations"), 0);
  EXPECT_FALSE(z.is_realized());
}

TEST(ApiRealize, ItemNeedsOneElement) {
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([] { (void)zeros({2}).item(); }), "[2]"));
  EXPECT_EQ(ones({1, 1}).item(), 1.0);
}

TEST(ApiRealize, ErrorsAreThrownWhenRecordedAndBrazeKeepsWorking) {
  Tensor a = zeros({2, 3});
  std::string msg = error_of<std::invalid_argument>([&] { (void)(a + zeros({4})); });
  EXPECT_EQ(msg, "add: shapes [2, 3] and [4] do not broadcast (axis 1 of the result: 3 vs 4)");
  EXPECT_THROW(negative(from_vector<bool>({true}, {1})), std::invalid_argument);
  EXPECT_THROW(sum(a, Axes{{5}}), std::out_of_range);
  EXPECT_EQ(sum(a + 1.0).item(), 6.0);
}

}  // namespace
}  // namespace braze
