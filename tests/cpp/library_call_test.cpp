// matmul and conv2d groups with their epilogues (oneDNN where built in)
// against the reference interpreter on the unfused graph, over random
// shapes, layouts, batch broadcasting, groups, strides and dilation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fusion/schedule.h"
#include "graph/reference.h"
#include "jit_cpu/dnn.h"
#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/execute.h"
#include "runtime/program.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

using testing::random_tensor;

// Runs the schedule (generated mode, in a poisoned arena so a post-op that
// reads a dead buffer or a workspace that holds stale bytes shows) and
// compares with the reference on the graph.
void expect_matches_reference(const Tensor& y, size_t expected_steps, double tol, const std::string& what) {
  Lowered l = lower(std::vector<Tensor>{y});
  Schedule s = make_schedule(l.graph);
  size_workspaces(s);  // scratchpads in the arena, as a program has them (Note [Step workspaces])
  EXPECT_EQ(s.steps.size(), expected_steps) << what << "\n" << explain(s);
  int64_t on_reference = Runtime::get().stats().library_calls_reference.load();
  std::vector<Array> got = execute(s, l.inputs, allocate_array, KernelMode::Generated, {true, true});
  // With oneDNN built in, every call here is one it takes (bfloat16 where
  // it runs bfloat16 on this CPU): a fallback to the reference would make
  // the comparison below vacuous. Where it does not, the fallback is counted.
  if (dnn::available()) {
    bool refused = y.dtype() == DType::BFloat16 && !dnn::runs_bfloat16();
    EXPECT_EQ(Runtime::get().stats().library_calls_reference.load() - on_reference, refused ? 1 : 0) << what;
  }
  std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
  ASSERT_EQ(got[0].numel(), want[0].numel());
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    double w = load_double(want[0].dtype, want[0].data.get(), i), g = load_double(got[0].dtype, got[0].data.get(), i);
    ASSERT_NEAR(g, w, tol * (1 + std::abs(w))) << what << " at " << i << "\n" << explain(s);
  }
}

Tensor activation(int k, const Tensor& t) {
  switch (k) {
    case 0: return relu(t);
    case 1: return gelu(t);
    case 2: return gelu(t, "tanh");
    case 3: return silu(t);
    case 4: return sigmoid(t);
    default: return tanh(t);
  }
}

TEST(LibraryCall, RandomMatmulsWithEpiloguesMatchTheReference) {
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int64_t m = pick(1, 40), k = pick(1, 70), n = pick(1, 40), batch = pick(0, 2) == 0 ? 3 : 0;
    // Operands stored transposed half of the time, read through .mT.
    bool ta = pick(0, 1), tb = pick(0, 1), broadcast_b = pick(0, 1);
    Shape as = batch ? Shape{batch, m, k} : Shape{m, k};
    Shape bs = batch && !broadcast_b ? Shape{batch, k, n} : Shape{k, n};
    auto stored = [&](Shape s, bool t, uint32_t sd) {
      if (!t) return random_tensor(s, sd, 1.0f);
      std::swap(s[s.size() - 1], s[s.size() - 2]);
      return matrix_transpose(random_tensor(s, sd, 1.0f));
    };
    Tensor y = matmul(stored(as, ta, seed * 7 + 1), stored(bs, tb, seed * 7 + 2));
    size_t steps = 1;
    std::string what = "seed " + std::to_string(seed);
    if (pick(0, 1)) y = y + random_tensor({n}, seed * 7 + 3, 1.0f), what += " +bias";
    if (pick(0, 2)) {
      int a = pick(0, 5);
      y = activation(a, y), what += " act" + std::to_string(a);
    }
    if (pick(0, 2) == 0) y = y + random_tensor(y.shape(), seed * 7 + 4, 1.0f), what += " +residual";
    if (pick(0, 3) == 0) y = exp(y * 0.1), steps = 2, what += " exp (a kernel)";
    expect_matches_reference(y, steps, 2e-5 * std::sqrt(static_cast<double>(k)), what);
  }
}

TEST(LibraryCall, RandomConvolutionsMatchTheReference) {
  for (uint32_t seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int64_t groups = pick(1, 3), cin = groups * pick(1, 3), cout = groups * pick(1, 3);
    int64_t kh = pick(1, 3), kw = pick(1, 3);
    Conv2dOptions o;
    o.stride = {pick(1, 2), pick(1, 3)};
    o.padding = {pick(0, 2), pick(0, 1)};
    o.dilation = {pick(1, 2), pick(1, 2)};
    o.groups = groups;
    int64_t h = (kh - 1) * o.dilation[0] + pick(1, 9), w = (kw - 1) * o.dilation[1] + pick(1, 9);
    Tensor x = random_tensor({pick(1, 2), cin, h, w}, seed * 5 + 1, 1.0f);
    // A batch read with its first two axes swapped is copied dense first
    // (oneDNN's convolution is slow on other layouts: cpu_reads).
    size_t steps = 1;
    if (pick(0, 1)) {
      steps += x.shape()[0] > 1 && cin > 1;
      x = permute(random_tensor({cin, x.shape()[0], h, w}, seed * 5 + 2, 1.0f), {1, 0, 2, 3});
    }
    Tensor wt = random_tensor({cout, cin / groups, kh, kw}, seed * 5 + 3, 1.0f);
    bool bias = pick(0, 1);
    Tensor y = conv2d(x, wt, bias ? std::optional<Tensor>(random_tensor({cout}, seed * 5 + 4, 1.0f)) : std::nullopt, o);
    if (pick(0, 1)) y = relu(y);
    expect_matches_reference(y, steps, 2e-5 * std::sqrt(static_cast<double>(cin * kh * kw)),
                             "seed " + std::to_string(seed));
  }
}

// bfloat16: oneDNN sums in float32 and rounds once after its post-ops; the
// reference rounds after every node, so the two differ by a few bfloat16
// roundings (2^-9 relative) of the product, the bias and the result: where
// the bias cancels the product, 2^-9 of a product about sqrt(k) in size
// (2^-8 sqrt(k) was measured to fail).
TEST(LibraryCall, RandomBfloat16MatmulsAndConvolutionsWithEpiloguesMatchTheReference) {
  auto bf16 = [](Shape s, uint32_t seed) {
    Tensor t = astype(random_tensor(std::move(s), seed, 1.0f), DType::BFloat16);
    realize({t});  // an input of the graphs below, not a cast in them
    return t;
  };
  for (uint32_t seed = 0; seed < 30; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int64_t m = pick(1, 3) == 1 ? 130 : pick(1, 40), k = pick(1, 70), n = pick(1, 40);
    Tensor b = pick(0, 1) ? matrix_transpose(bf16({n, k}, seed * 7 + 2)) : bf16({k, n}, seed * 7 + 2);
    Tensor y = matmul(bf16({m, k}, seed * 7 + 1), b);
    std::string what = "bfloat16 seed " + std::to_string(seed);
    if (pick(0, 1)) y = y + bf16({n}, seed * 7 + 3), what += " +bias";
    if (pick(0, 2)) {
      int a = pick(0, 5);
      y = activation(a, y), what += " act" + std::to_string(a);
    }
    expect_matches_reference(y, 1, std::ldexp(1.0, -7) * std::sqrt(static_cast<double>(k)), what);
  }
  for (uint32_t seed = 0; seed < 10; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int64_t groups = pick(1, 2), cin = groups * pick(1, 3), cout = groups * pick(1, 3), kh = pick(1, 3);
    Conv2dOptions o;
    o.stride = {pick(1, 2), pick(1, 2)};
    o.padding = {pick(0, 1), pick(0, 1)};
    o.groups = groups;
    Tensor x = bf16({pick(1, 2), cin, kh + pick(1, 8), kh + pick(1, 8)}, seed * 5 + 1);
    Tensor y = relu(conv2d(x, bf16({cout, cin / groups, kh, kh}, seed * 5 + 2), bf16({cout}, seed * 5 + 3), o));
    expect_matches_reference(y, 1, std::ldexp(1.0, -7) * std::sqrt(static_cast<double>(cin * kh * kh)),
                             "bfloat16 conv seed " + std::to_string(seed));
  }
}

TEST(LibraryCall, APrimitiveIsCreatedOncePerShape) {
  Tensor a = random_tensor({24, 40}, 1), b = random_tensor({40, 12}, 2), bias = random_tensor({12}, 3);
  Lowered l = lower(std::vector<Tensor>{relu(matmul(a, b) + bias)});
  Schedule s = make_schedule(l.graph);
  Stats& st = Runtime::get().stats();
  int64_t before = st.library_primitives_created.load(), on_reference = st.library_calls_reference.load();
  for (int i = 0; i < 3; ++i) execute(s, l.inputs, allocate_array);
  if (st.library_calls_reference.load() > on_reference) GTEST_SKIP() << "braze is built without oneDNN";
  EXPECT_LE(st.library_primitives_created.load() - before, 1);
  int64_t after = st.library_primitives_created.load();
  execute(s, l.inputs, allocate_array);
  EXPECT_EQ(st.library_primitives_created.load(), after);
}

TEST(LibraryCall, AProgramLooksItsPrimitivesUpOnceAndReplaysWithoutLookups) {
  Tensor a = random_tensor({24, 40}, 4), b = random_tensor({40, 12}, 5), bias = random_tensor({12}, 6);
  Tensor c = random_tensor({12, 8}, 7);
  Lowered l = lower(std::vector<Tensor>{matmul(relu(matmul(a, b) + bias), c)});
  int64_t before = library_lookups();
  Program program(l, KernelMode::Generated, {.arena = true, .poison = true}, allocate_array);
  ASSERT_EQ(library_lookups() - before, 2) << explain(program.schedule());  // one per library call, when built
  int64_t built = library_lookups();
  std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
  for (int run = 0; run < 3; ++run) {
    std::vector<Array> inputs = l.inputs;
    std::vector<Array> got = program.run(inputs, l.scalars, allocate_array);
    EXPECT_EQ(library_lookups(), built) << "run " << run;
    ASSERT_EQ(got[0].numel(), want[0].numel());
    for (int64_t i = 0; i < want[0].numel(); ++i) {
      double w = load_double(want[0].dtype, want[0].data.get(), i);
      ASSERT_NEAR(load_double(got[0].dtype, got[0].data.get(), i), w, 1e-4 * (1 + std::abs(w))) << "run " << run;
    }
  }
}

TEST(LibraryCall, ExplainNamesThePostOpsAndWhereTheChainStops) {
  Tensor h = matmul(random_tensor({8, 8}, 4), random_tensor({8, 8}, 5)) + random_tensor({8}, 6);
  std::string text = explain(make_schedule(lower(std::vector<Tensor>{log(sigmoid(h))}).graph));
  EXPECT_NE(text.find("post-op add Input#"), std::string::npos) << text;
  EXPECT_NE(text.find("post-op sigmoid"), std::string::npos) << text;
  EXPECT_NE(text.find("Log is not a post-op the library applies"), std::string::npos) << text;
}

}  // namespace
}  // namespace braze
