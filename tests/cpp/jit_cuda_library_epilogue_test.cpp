// Note [CUDA library epilogues]: which post-ops a CUDA device's library
// calls take, in what role, and the reason explain() gives for the rest,
// which stay element-wise kernels (Note [Library capabilities]).
#include <gtest/gtest.h>

#include "tests/cpp/jit_cuda_library.h"
#include "tests/cpp/random_tensor.h"

namespace braze::cuda {
namespace {

using testing::cuda_schedule;
using testing::library_step;
using testing::random_tensor;

// The roles of the post-ops the library step took, and every reason the
// schedule gives for an unfused edge.
struct Taken {
  std::vector<LibraryRole> roles;
  size_t steps = 0;
  std::string reasons;
};

Taken taken(const Tensor& t) {
  Schedule s = cuda_schedule(t);
  const Step& step = library_step(s);
  Roles r = assign_roles(s.graph, step.group.nodes[0], step.group.post_ops);
  EXPECT_EQ(r.why_not, "") << "the partition took a post-op the rules refuse\n" << explain(s);
  Taken out{r.roles, s.steps.size(), ""};
  for (const UnfusedEdge& e : s.unfused) out.reasons += e.reason + "\n";
  return out;
}

using R = LibraryRole;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class CudaEpilogue : public ::testing::Test {
 protected:
  Tensor x = random_tensor({5, 7}, 1), w = random_tensor({7, 3}, 2), b = random_tensor({3}, 3);
  Tensor r = random_tensor({5, 3}, 4);
  Tensor y = matmul(x, w);
};

TEST_F(CudaEpilogue, BiasAndReluOrGeluTanhAreOneCall) {
  Taken t = taken(relu(y + b));
  EXPECT_EQ(t.roles, (std::vector<R>{R::Bias, R::Activation}));
  EXPECT_EQ(t.steps, 1u);
  EXPECT_EQ(taken(gelu(y + b, "tanh")).roles, (std::vector<R>{R::Bias, R::Activation}));
  EXPECT_EQ(taken(maximum(y + b, 0.0)).steps, 1u);
}

TEST_F(CudaEpilogue, ScaleResidualBiasActivationInThatOrder) {
  Taken t = taken(relu(y * 0.5 + r + b));
  EXPECT_EQ(t.roles, (std::vector<R>{R::Scale, R::Residual, R::Bias, R::Activation}));
  EXPECT_EQ(t.steps, 1u);
  EXPECT_EQ(taken(y + b + r).roles, (std::vector<R>{R::Bias, R::Residual}));
  EXPECT_EQ(taken(y - r).roles, (std::vector<R>{R::Residual}));
  EXPECT_EQ(taken(y * 2.0 * 3.0).roles, (std::vector<R>{R::Scale}));  // one linear post-op
}

TEST_F(CudaEpilogue, WhatCuBlasLtCannotApplyStaysAKernel) {
  Taken erf = taken(gelu(y + b));
  EXPECT_EQ(erf.roles, (std::vector<R>{R::Bias}));
  EXPECT_EQ(erf.steps, 2u);
  EXPECT_TRUE(has(erf.reasons, "cuBLASLt's GELU epilogue is the tanh approximation")) << erf.reasons;
  Taken s = taken(silu(y + b));
  EXPECT_EQ(s.roles, (std::vector<R>{R::Bias}));
  EXPECT_TRUE(has(s.reasons, "relu and gelu (tanh), not silu")) << s.reasons;
  Taken after_bias = taken((y + b) * 2.0);
  EXPECT_EQ(after_bias.roles, (std::vector<R>{R::Bias}));
  EXPECT_TRUE(has(after_bias.reasons, "scales the product only (alpha), before its adds")) << after_bias.reasons;
  Taken constant = taken(y + 1.0);
  EXPECT_TRUE(constant.roles.empty());
  EXPECT_TRUE(has(constant.reasons, "adds no constant")) << constant.reasons;
  Taken after_act = taken(relu(y) + r);
  EXPECT_EQ(after_act.roles, (std::vector<R>{R::Activation}));
  EXPECT_TRUE(has(after_act.reasons, "applies its activation last")) << after_act.reasons;
  Taken two = taken(y + b + random_tensor({3}, 9));
  EXPECT_EQ(two.roles, (std::vector<R>{R::Bias}));
  EXPECT_TRUE(has(two.reasons, "one bias and one tensor")) << two.reasons;
  Taken column = taken(y + random_tensor({5, 1}, 9));  // broadcast along rows: neither bias nor C
  EXPECT_TRUE(column.roles.empty());
  EXPECT_TRUE(has(column.reasons, "cuBLASLt adds a bias along the last axis")) << column.reasons;
  Taken product = taken(y * r);
  EXPECT_TRUE(product.roles.empty());
  EXPECT_EQ(product.steps, 2u);
}

TEST_F(CudaEpilogue, TwoBiasShapedAddsAreABiasAndAResidualWhenOneRowAllows) {
  // One row: a [3] vector is also a [1, 3] matrix cuBLASLt can read as C.
  Tensor one = matmul(random_tensor({1, 7}, 1), w);
  EXPECT_EQ(taken(one + b + random_tensor({3}, 5)).roles, (std::vector<R>{R::Bias, R::Residual}));
}

TEST_F(CudaEpilogue, Float64TakesScaleAndResidualOnly) {
  // Float64 inputs (an astype would be a kernel, its result a full-size tensor).
  auto f64 = [](const Tensor& t) { return from_vector<float>(t.to_vector<float>(), t.shape(), DType::Float64); };
  Tensor y64 = matmul(f64(x), f64(w));
  Taken t = taken(relu(y64 * 2.0 + f64(r) + f64(b)));
  EXPECT_EQ(t.roles, (std::vector<R>{R::Scale, R::Residual})) << t.reasons;
  EXPECT_TRUE(has(t.reasons, "no cuBLASLt bias or activation epilogue for float64")) << t.reasons;
}

TEST_F(CudaEpilogue, ConvolutionsTakeAScaleOnly) {
  Tensor img = random_tensor({2, 3, 8, 8}, 1), k = random_tensor({4, 3, 3, 3}, 2);
  Taken t = taken(relu(conv2d(img, k, random_tensor({4}, 3)) * 0.5));
  EXPECT_TRUE(t.roles.empty()) << "the bias add comes first";
  EXPECT_TRUE(has(t.reasons, "cuDNN's convolution takes a scale (alpha) here")) << t.reasons;
  EXPECT_EQ(t.steps, 2u);
  EXPECT_EQ(taken(relu(conv2d(img, k) * 0.5)).roles, (std::vector<R>{R::Scale}));
}

// Note [cuDNN convolutions]: cuDNN picks its algorithm without the
// operands' addresses, so it is only handed operands that start 16 bytes
// into their buffers; a view that starts elsewhere is copied dense first.
TEST_F(CudaEpilogue, ConvolutionsReadOnlyAlignedOperandsInPlace) {
  Tensor img = random_tensor({2, 3, 8, 20}, 1), k = random_tensor({4, 3, 3, 3}, 2);
  auto steps = [&](int64_t x_start, int64_t w_start) {
    Tensor x = index(img, std::vector<Index>{Slice{}, Slice{}, Slice{}, Slice{x_start, x_start + 16}});
    Tensor flat = random_tensor({4 * 27 + 8}, 3);
    Tensor w = reshape(index(flat, std::vector<Index>{Slice{w_start, w_start + 4 * 27}}), {4, 3, 3, 3});
    Schedule s = cuda_schedule(conv2d(x, w));
    EXPECT_EQ(s.steps.back().group.kind, FusedGroup::Kind::Library) << explain(s);
    return s.steps.size();
  };
  EXPECT_EQ(steps(0, 0), 1u);
  EXPECT_EQ(steps(4, 4), 1u) << "16 bytes in: read in place";
  EXPECT_EQ(steps(1, 0), 2u) << "an input 4 bytes in is copied dense first";
  EXPECT_EQ(steps(0, 1), 2u) << "a weight 4 bytes in is copied dense first";
  EXPECT_EQ(steps(2, 3), 3u);
}

TEST_F(CudaEpilogue, EmptySumsTakeNoPostOp) {
  Taken t = taken(relu(matmul(random_tensor({3, 0}, 1), random_tensor({0, 2}, 2)) + random_tensor({2}, 3)));
  EXPECT_TRUE(t.roles.empty());
  EXPECT_TRUE(has(t.reasons, "empty sum")) << t.reasons;
}

TEST_F(CudaEpilogue, TheCpuStillTakesEveryPostOp) {
  Schedule s = make_schedule(lower(std::vector<Tensor>{silu(gelu(y + b) * 2.0 + r)}).graph);
  EXPECT_EQ(s.steps.size(), 1u) << explain(s);
  EXPECT_EQ(library_step(s).group.post_ops.size(), 5u) << explain(s);
}

}  // namespace
}  // namespace braze::cuda
