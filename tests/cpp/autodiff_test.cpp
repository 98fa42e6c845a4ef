// Reverse mode from C++ (runtime/autodiff.h): vjp and backward against
// hand-derived gradients, the walk through realized tensors and past the
// lazy depth limit, grad mode, and the errors. The op-by-op sweep against
// finite differences is tests/python/test_autodiff.py.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "runtime/braze.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::contains;
using testing::error_of;
using testing::expect_all_close;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor vec(std::vector<double> v) {
  Shape s{static_cast<int64_t>(v.size())};
  return from_vector<double>(v, s);
}
Tensor one_grad(const Tensor& out, const Tensor& x) {
  Tensor c = ones_like(out);
  return vjp(std::span<const Tensor>(&out, 1), std::span<const Tensor>(&c, 1), std::span<const Tensor>(&x, 1))[0];
}

TEST(Autodiff, ChainRuleThroughElementwiseOps) {
  Tensor x = variable(vec({0.5, 1.0, 2.0}));
  Tensor y = sum(sin(x) * x);
  std::vector<double> want;
  for (double v : {0.5, 1.0, 2.0}) want.push_back(std::cos(v) * v + std::sin(v));
  expect_all_close(values(one_grad(y, x)), want, 1e-12);
}

// Note [Checkpoints]: the same gradient as the function itself, from a
// copy of its ops that starts at depend nodes (so it is not the forward's
// graph again) and that is recorded only when the backward reaches it.
TEST(Autodiff, CheckpointGradientsEqualThePlainFunctions) {
  Tensor x = variable(vec({0.5, -1.0, 2.0}));
  Tensor w = variable(vec({1.5, 0.25, -2.0}));  // closed over
  int calls = 0;
  CheckpointFn f = [&](std::vector<Tensor> in) {
    ++calls;
    return std::vector<Tensor>{tanh(in[0] * w) * in[0], exp(in[0])};
  };
  std::vector<Tensor> plain = f({x});
  std::vector<Tensor> checked = checkpoint(f, {x});
  EXPECT_EQ(calls, 2);  // once above, once by checkpoint(): the backward copies its ops
  ASSERT_EQ(checked.size(), 2u);
  Tensor y = sum(plain[0] * plain[0]) + sum(plain[1]);
  Tensor y_checked = sum(checked[0] * checked[0]) + sum(checked[1]);
  Tensor c = ones_like(y);
  std::vector<Tensor> wrt{x, w};
  std::vector<Tensor> g = vjp(std::span<const Tensor>(&y, 1), std::span<const Tensor>(&c, 1), wrt);
  std::vector<Tensor> g_checked = vjp(std::span<const Tensor>(&y_checked, 1), std::span<const Tensor>(&c, 1), wrt);
  EXPECT_EQ(calls, 2);
  for (int i = 0; i < 2; ++i) expect_all_close(values(g_checked[i]), values(g[i]), 1e-14);
  expect_all_close(values(y_checked), values(y), 1e-15);
}

TEST(Autodiff, DependIsItsFirstInputAndPassesTheGradientToIt) {
  Tensor x = variable(vec({1.0, 2.0}));
  Tensor token = variable(from_vector<double>({7.0}, {}));
  Tensor y = depend(x * 3.0, token);
  expect_all_close(values(y), {3.0, 6.0}, 0);
  Tensor out = sum(y), c = ones_like(out);
  std::vector<Tensor> wrt{x, token};
  std::vector<Tensor> g = vjp(std::span<const Tensor>(&out, 1), std::span<const Tensor>(&c, 1), wrt);
  expect_all_close(values(g[0]), {3.0, 3.0}, 0);
  expect_all_close(values(g[1]), {0.0}, 0);
}

TEST(Autodiff, BroadcastInputsGetTheirGradientSummedBack) {
  Tensor a = variable(from_vector<double>({1, 2, 3}, {3, 1}));
  Tensor b = variable(from_vector<double>({10, 20, 30, 40}, {4}));
  Tensor y = a * b;  // [3, 4]
  Tensor c = ones_like(y);
  std::vector<Tensor> wrt{a, b};
  std::vector<Tensor> g = vjp(std::span<const Tensor>(&y, 1), std::span<const Tensor>(&c, 1), wrt);
  EXPECT_EQ(g[0].shape(), (Shape{3, 1}));
  expect_all_close(values(g[0]), {100, 100, 100}, 1e-12);
  expect_all_close(values(g[1]), {6, 6, 6, 6}, 1e-12);
}

TEST(Autodiff, MatmulGradientsAreTransposedMatmuls) {
  Tensor a = variable(from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}));
  Tensor b = variable(from_vector<double>({1, 0, 0, 1, 1, 1}, {3, 2}));
  Tensor y = sum(matmul(a, b));
  Tensor c = ones_like(y);
  std::vector<Tensor> wrt{a, b};
  std::vector<Tensor> g = vjp(std::span<const Tensor>(&y, 1), std::span<const Tensor>(&c, 1), wrt);
  // d/da sum(a b) = 1 b^T: each row is b's row sums; d/db = a^T 1: a's column sums.
  expect_all_close(values(g[0]), {1, 1, 2, 1, 1, 2}, 1e-12);
  expect_all_close(values(g[1]), {5, 5, 7, 7, 9, 9}, 1e-12);
}

TEST(Autodiff, BackwardFillsTheGradOfVariablesAndAccumulates) {
  Tensor w = requires_grad(vec({1, -2, 3}));
  backward(sum(w * w));
  expect_all_close(values(grad(w)), {2, -4, 6}, 1e-12);
  backward(sum(w * 3.0));
  expect_all_close(values(grad(w)), {5, -1, 9}, 1e-12);
  EXPECT_FALSE(grad(w).node()->requires_grad);  // recorded without a graph of its own
  set_grad(w, Tensor());
  EXPECT_FALSE(grad(w).defined());
}

TEST(Autodiff, RealizedTensorsKeepTheirInputsForTheBackward) {
  Tensor w = requires_grad(vec({1, 2}));
  Tensor h = exp(w);
  Tensor loss = sum(h * h);
  loss.data();  // realizes: a loss printed before its gradient
  EXPECT_TRUE(h.node()->requires_grad);
  backward(loss);
  std::vector<double> want{2 * std::exp(2.0), 2 * std::exp(4.0)};
  expect_all_close(values(grad(w)), want, 1e-12);
  // A tensor that requires no gradient drops its inputs as before.
  Tensor plain = exp(vec({1, 2}));
  plain.data();
  EXPECT_TRUE(plain.node()->inputs.empty());
}

TEST(Autodiff, DifferentiatesPastTheLazyDepthLimit) {
  // Note [Lazy depth limit] realizes part of a long chain; the walk goes on through it.
  Tensor x = variable(vec({0.25}));
  Tensor y = x;
  const int steps = static_cast<int>(kMaxLazyDepth) + 50;
  for (int i = 0; i < steps; ++i) y = y * 1.001;
  expect_all_close(values(one_grad(sum(y), x)), {std::pow(1.001, steps)}, 1e-9);
}

TEST(Autodiff, StopGradientAndGradModeStopTheGradient) {
  Tensor x = variable(vec({2.0}));
  expect_all_close(values(one_grad(sum(x * stop_gradient(x)), x)), {2.0}, 1e-12);
  {
    GradModeScope off(false);
    EXPECT_FALSE((x * 2.0).node()->requires_grad);
    // Another thread's mode is its own.
    bool other = false;
    std::thread([&] { other = (x * 2.0).node()->requires_grad; }).join();
    EXPECT_TRUE(other);
  }
  EXPECT_TRUE((x * 2.0).node()->requires_grad);
  EXPECT_FALSE(greater(x, 1.0).node()->requires_grad);  // a bool has no gradient
}

TEST(Autodiff, SecondDerivative) {
  Tensor x = variable(vec({0.5, 2.0}));
  Tensor dx = one_grad(sum(x * x * x), x);  // 3 x^2, recorded with a graph of its own
  EXPECT_TRUE(dx.node()->requires_grad);
  expect_all_close(values(one_grad(sum(dx), x)), {3.0, 12.0}, 1e-12);
}

TEST(Autodiff, UnreachedVariablesGetZeros) {
  Tensor x = variable(vec({1, 2}));
  Tensor z = variable(vec({3}));
  expect_all_close(values(one_grad(sum(x), z)), {0}, 0);
}

TEST(Autodiff, ASliceGivesItsGradientBackWhereItRead) {
  Tensor x = variable(from_vector<double>({1, 2, 3, 4, 5}, {5}));
  Slice s{4, 0, -2};  // x[4:0:-2]: elements 4 and 2
  Index items[] = {s};
  Tensor y = sum(index(x, items) * from_vector<double>({10, 20}, {2}));
  expect_all_close(values(one_grad(y, x)), {0, 0, 20, 0, 10}, 0);
}

TEST(Autodiff, BadUseSaysWhyAndBrazeGoesOn) {
  Tensor x = variable(from_vector<double>({1, 2, 3, 4}, {4}));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { requires_grad(full({2}, 1)); }), "only float tensors"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { backward(sum(vec({1}))); }), "does not require"));
  expect_all_close(values(one_grad(sum(x * x), x)), {2, 4, 6, 8}, 1e-12);
}

}  // namespace
}  // namespace braze
