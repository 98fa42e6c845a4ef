// The C++ API end to end: record lazily, realize, read the result.
#include <gtest/gtest.h>

#include "runtime/braze.h"

namespace braze {
namespace {

TEST(Tensor, RecordsLazilyAndRealizesOnDemand) {
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * 2.0 + 1.0;
  EXPECT_FALSE(y.is_realized());
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.dtype(), DType::Float32);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 5, 7, 9, 11, 13}));
  EXPECT_TRUE(y.is_realized());
}

TEST(Tensor, RealizedTensorBecomesALeaf) {
  Tensor x = from_vector<float>({1, 2}, {2});
  Tensor y = exp(x);
  realize({y});
  EXPECT_TRUE(y.node()->inputs.empty());
}

TEST(Tensor, ReprDoesNotRealize) {
  Tensor y = exp(from_vector<float>({1, 2}, {2}));
  EXPECT_EQ(y.repr(), "Tensor(shape=[2], dtype=float32, device=cpu, lazy)");
  EXPECT_FALSE(y.is_realized());
}

TEST(Tensor, SoftmaxRowsSumToOne) {
  Tensor x = from_vector<float>({1, 2, 3, -1, 0, 1000}, {2, 3});
  std::vector<float> s = sum(softmax(x), Axes{{-1}}).to_vector<float>();
  for (float v : s) EXPECT_NEAR(v, 1.0f, 1e-6);
}

TEST(Tensor, ShapeErrorNamesTheOpAndShapes) {
  Tensor a = zeros({2, 3});
  Tensor b = zeros({4});
  try {
    (void)add(a, b);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("add"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
  }
  // braze keeps working after the error.
  EXPECT_EQ(sum(a + 1.0).item(), 6.0);
}

}  // namespace
}  // namespace braze
