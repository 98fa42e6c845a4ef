// matmul through cuBLASLt and conv2d through cuDNN on a GPU (CTest
// cuda_libraries_gpu, label gpu), against the reference interpreter: the
// random cases whose plans CudaLibrarySemantics checks on the host, the
// epilogues' launch counts, TF32, replays and workspaces. Each test skips
// without a driver and a GPU. Written on a machine without one: never run
// there.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/reference.h"
#include "runtime/context.h"
#include "runtime/transfer.h"
#include "tests/cpp/cuda_test_env.h"
#include "tests/cpp/jit_check.h"
#include "tests/cpp/jit_cuda_library.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

using testing::kCuda;

// `roots` (CPU tensors) lowered to one graph, lifted onto the GPU with
// their inputs copied there, realized there as one program and compared
// output by output with the reference interpreter on the host.
void expect_on_gpu_matches_reference(const std::vector<Tensor>& roots, const std::vector<std::string>& what) {
  Lowered l = lower(roots);
  std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
  std::vector<Array> on_device;
  for (const Array& a : l.inputs) on_device.push_back(copy_to(a, kCuda));
  std::vector<Tensor> got = lift(l.graph, on_device);
  realize(got);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].device(), kCuda);
    EXPECT_TRUE(testing::close(got[i].host_data(), want[i], testing::library_tolerance(want[i].dtype))) << what.at(i);
  }
}

TEST(CudaLibrariesGpu, RandomMatmulsMatchTheReference) {
  BRAZE_SKIP_WITHOUT_GPU();
  std::vector<Tensor> roots;
  std::vector<std::string> what;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    what.emplace_back();
    roots.push_back(testing::random_matmul(seed, what.back()));
  }
  int64_t before = Runtime::get().stats().library_calls_reference.load();
  expect_on_gpu_matches_reference(roots, what);
  EXPECT_EQ(Runtime::get().stats().library_calls_reference.load(), before) << "a call ran on the host";
}

TEST(CudaLibrariesGpu, RandomConvolutionsMatchTheReference) {
  BRAZE_SKIP_WITHOUT_GPU();
  std::vector<Tensor> roots;
  std::vector<std::string> what;
  for (uint32_t seed = 0; seed < 400 && roots.size() < 150; ++seed) {
    std::string w;
    if (std::optional<Tensor> y = testing::random_conv(seed, w)) roots.push_back(*y), what.push_back(w);
  }
  expect_on_gpu_matches_reference(roots, what);
}

TEST(CudaLibrariesGpu, ConvolutionsWithBiasAndActivationsMatchTheReference) {
  BRAZE_SKIP_WITHOUT_GPU();
  using testing::random_tensor;
  Tensor x = random_tensor({2, 4, 17, 13}, 1, 1.0f), w = random_tensor({8, 2, 3, 3}, 2, 0.5f);
  Tensor b = random_tensor({8}, 3, 1.0f);
  Conv2dOptions o{{2, 1}, {1, 2}, {1, 2}, 2};
  std::vector<Tensor> roots{relu(conv2d(x, w, b, o)), silu(conv2d(x, w, b, o) * 0.5),
                            conv2d(x, w, std::nullopt, o) + random_tensor({2, 8, 9, 13}, 4, 1.0f)};
  expect_on_gpu_matches_reference(roots, {"bias relu", "bias scale silu", "residual"});
}

// relu(x @ w + b) is one cuBLASLt call and nothing else; gelu with erf
// adds one kernel; a replay makes no library object and allocates only
// its output.
TEST(CudaLibrariesGpu, EpiloguesRunInsideTheCall) {
  BRAZE_SKIP_WITHOUT_GPU();
  using testing::random_tensor;
  Tensor x = to(random_tensor({64, 96}, 1, 1.0f), kCuda), w = to(random_tensor({96, 48}, 2, 0.2f), kCuda);
  Tensor b = to(random_tensor({48}, 3, 1.0f), kCuda);
  Stats& st = Runtime::get().stats();
  for (int run = 0; run < 3; ++run) {
    int64_t launched = st.kernels_launched.load(), created = st.library_primitives_created.load();
    int64_t allocated = st.allocations.load();
    Tensor y = relu(matmul(x, w) + b);
    y.data();
    EXPECT_EQ(st.kernels_launched.load() - launched, 1) << "run " << run;
    if (run > 0) {
      EXPECT_EQ(st.library_primitives_created.load(), created) << "run " << run;
      EXPECT_EQ(st.allocations.load() - allocated, 1) << "run " << run << ": the output only";
    }
    Tensor want = relu(matmul(to(x, Device{}), to(w, Device{})) + to(b, Device{}));
    EXPECT_TRUE(testing::close(y.host_data(), want.data(), 1e-5));
  }
  int64_t launched = st.kernels_launched.load();
  gelu(matmul(x, w) + b).data();
  EXPECT_EQ(st.kernels_launched.load() - launched, 2) << "the call, then gelu (erf) as a kernel";
}

// Without BRAZE_ALLOW_TF32, float32 is float32: a product over 4096 terms
// stays within float32's error. With it, the program is another one.
TEST(CudaLibrariesGpu, Tf32OnlyWhenAllowed) {
  BRAZE_SKIP_WITHOUT_GPU();
  using testing::random_tensor;
  Tensor x = random_tensor({128, 4096}, 1, 1.0f), w = random_tensor({4096, 64}, 2, 1.0f);
  Tensor want = matmul(astype(x, DType::Float64), astype(w, DType::Float64));
  auto error = [&] {
    Tensor y = matmul(to(x, kCuda), to(w, kCuda));
    Array got = y.host_data(), ref = want.data();
    double worst = 0;
    for (int64_t i = 0; i < got.numel(); ++i)
      worst = std::max(worst, std::abs(load_double(got.dtype, got.data.get(), i) - load_double(ref.dtype, ref.data.get(), i)));
    return worst / 64.0;  // |terms| ~ 1: sums of 4096 have sigma 64
  };
  double exact = error();
  EXPECT_LT(exact, 1e-4) << "float32 without TF32";
  int64_t programs = Runtime::get().stats().programs_compiled.load();
  testing::ScopedEnv tf32("BRAZE_ALLOW_TF32", "1");
  double fast = error();
  EXPECT_EQ(Runtime::get().stats().programs_compiled.load() - programs, 1) << "TF32 is part of the program's key";
  EXPECT_LT(fast, 1e-2);
  std::printf("max error / sqrt(K): float32 %.3g, TF32 allowed %.3g\n", exact, fast);
}

}  // namespace
}  // namespace braze
