// Scalar and element-wise binary post-ops (Note [Library epilogues]): a
// scale after a matmul, attention's `(q @ k.T) * s`, is part of the library
// call; a scalar parameter is read from memory at every run (Note [Scalar
// parameters]), so a new value replays the same program and primitive and
// is not baked; a constant of the graph is baked and keyed.
#include <gtest/gtest.h>

#include "fusion/schedule.h"
#include "graph/reference.h"
#include "jit_cpu/dnn.h"
#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/execute.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

using testing::random_tensor;

// The reference value of `y` (lowered with its constants as constants).
std::vector<double> reference_of(const Tensor& y) {
  Lowered l = lower(std::vector<Tensor>{y});
  Array a = reference::evaluate(l.graph, l.inputs, l.graph.outputs)[0];
  std::vector<double> out(a.numel());
  for (int64_t i = 0; i < a.numel(); ++i) out[i] = load_double(a.dtype, a.data.get(), i);
  return out;
}

void expect_near(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  std::vector<double> g = got.to_vector<double>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(g[i], want[i], 2e-5 * (1 + std::abs(want[i]))) << what << " at " << i;
}

struct Counts {
  int64_t compiled, launched, on_reference, created;
  static Counts now() {
    Stats& s = Runtime::get().stats();
    return {s.programs_compiled.load(), s.kernels_launched.load(), s.library_calls_reference.load(),
            s.library_primitives_created.load()};
  }
};

bool skip_without_library() {
  return !dnn::available() || Runtime::get().backend() == BackendKind::Reference;
}

TEST(LibraryScale, AttentionsScaleIsAPostOpAndANewValueReplaysWithItsOwnValue) {
  if (skip_without_library()) GTEST_SKIP() << "no oneDNN or the reference backend";
  Tensor q = random_tensor({2, 3, 16, 8}, 31, 1.0f), k = random_tensor({2, 3, 16, 8}, 32, 1.0f);
  Counts before = Counts::now();
  for (double scale : {0.125, 0.3, -1.75, 0.125}) {
    Tensor scores = matmul(q, matrix_transpose(k)) * scale;
    std::vector<double> want = reference_of(scores);
    Counts at = Counts::now();
    realize({scores});
    EXPECT_EQ(Counts::now().launched - at.launched, 1) << "one library call, no kernel; scale " << scale;
    expect_near(scores, want, "scale " + std::to_string(scale));
  }
  Counts after = Counts::now();
  EXPECT_EQ(after.compiled - before.compiled, 1) << "the scale is a parameter: one program for every value";
  EXPECT_LE(after.created - before.created, 1) << "and one primitive";
  EXPECT_EQ(after.on_reference, before.on_reference);
}

TEST(LibraryScale, DivSubAndMulByTensorsAreBinaryPostOps) {
  if (skip_without_library()) GTEST_SKIP() << "no oneDNN or the reference backend";
  Tensor x = random_tensor({20, 12}, 41, 1.0f), w = random_tensor({12, 9}, 42, 1.0f);
  Tensor row = random_tensor({9}, 43, 1.0f), full = random_tensor({20, 9}, 44, 1.0f);
  Tensor col = random_tensor({20, 1}, 45, 1.0f);
  realize({row, full, col});
  struct Case {
    std::string what;
    Tensor y;
    int64_t launches = 1;
  } cases[] = {
      {"/ 7.5", matmul(x, w) / 7.5},
      {"- row", matmul(x, w) - row},
      {"* full", matmul(x, w) * full},
      // A value per row is a kernel after the call: oneDNN would run the
      // whole call on its reference implementation (cpu_refuse).
      {"* col, + row, relu", relu(matmul(x, w) * col + row), 2},
      {"scale after bias and gelu", gelu(matmul(x, w) + row) * 0.7},
  };
  for (Case& c : cases) {
    std::vector<double> want = reference_of(c.y);
    Counts at = Counts::now();
    realize({c.y});
    EXPECT_EQ(Counts::now().launched - at.launched, c.launches) << c.what;
    EXPECT_EQ(Counts::now().on_reference, at.on_reference) << c.what;
    expect_near(c.y, want, c.what);
  }
}

TEST(LibraryScale, ConstantsOfTheGraphAreBakedAndKeyedByValue) {
  if (skip_without_library()) GTEST_SKIP() << "no oneDNN or the reference backend";
  // lower() without parameters keeps 0.5 and 3.0 as constants: eltwise_linear
  // post-ops whose values must be part of the primitive's key.
  Tensor x = random_tensor({8, 5}, 51, 1.0f), w = random_tensor({5, 6}, 52, 1.0f);
  for (double c : {0.5, 3.0, 0.5}) {
    Tensor y = matmul(x, w) * c + 2.0;
    Lowered l = lower(std::vector<Tensor>{y});
    Schedule s = make_schedule(l.graph);
    ASSERT_EQ(s.steps.size(), 1u) << explain(s);
    ASSERT_EQ(s.steps[0].group.post_ops.size(), 1u) << "two constants in a row fold into one linear post-op";
    std::string text = explain(s);
    EXPECT_NE(text.find("post-op linear"), std::string::npos) << text;
    Array got = execute(s, l.inputs, allocate_array)[0];
    std::vector<double> want = reference_of(y);
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(load_double(got.dtype, got.data.get(), i), want[i], 2e-5 * (1 + std::abs(want[i]))) << c;
  }
}

TEST(LibraryScale, TheChainStopsWhereThePostOpWouldComputeSomethingElse) {
  Tensor h = matmul(random_tensor({8, 8}, 61), random_tensor({8, 8}, 62));
  std::string text = explain(make_schedule(lower(std::vector<Tensor>{random_tensor({8}, 63) - h}).graph));  // b - x @ w
  EXPECT_NE(text.find("Sub has the library's value on its right"), std::string::npos) << text;
}

}  // namespace
}  // namespace braze
