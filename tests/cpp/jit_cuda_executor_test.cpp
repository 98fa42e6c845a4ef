// The device executors (jit_cuda/executor.h) and CUDA tensors through the
// C++ API: host emulation here (BRAZE_CUDA=emulate, no GPU needed), the
// driver in the CudaDriverGpu tests (CTest label `gpu`), which skip without
// a driver and a device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "jit_cuda/emulated_executor.h"
#include "jit_cuda/emulated_kernels.h"
#include "runtime/braze.h"
#include "graph/reference.h"
#include "runtime/context.h"
#include "runtime/cuda_executors.h"
#include "tests/cpp/cuda_test_env.h"
#include "tests/cpp/jit_check.h"
#include "tests/cpp/jit_cuda_specs.h"
#include "tests/cpp/random_graph.h"

namespace braze {
namespace {

using testing::kCuda;
using testing::ScopedEnv;

KernelSpec spec_of(const Tensor& t) {
  Schedule s = make_schedule(lower(std::vector<Tensor>{t}).graph);
  for (const Step& step : s.steps)
    if (step.group.kind == FusedGroup::Kind::Kernel) return step.spec;
  throw std::logic_error("no kernel step");
}

TEST(CudaEmulation, LoadsEachKernelOncePerKeyEvenWhenThreadsRace) {
  cuda::EmulatedExecutor ex;
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  KernelSpec a = spec_of(exp(x) * 3.0f);
  KernelSpec b = spec_of(softmax(x, -1));
  std::vector<std::shared_ptr<const cuda::DeviceKernel>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const KernelSpec* specs[] = {t % 2 ? &a : &b, t % 2 ? &b : &a};
      got[t] = ex.load(specs)[0].kernel;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(got[0], got[2]);
  EXPECT_EQ(got[1], got[3]);
  EXPECT_NE(got[0], got[1]);
  const KernelSpec* again[] = {&a};
  std::vector<cuda::LoadedKernel> hit = ex.load(again);
  EXPECT_EQ(hit[0].origin, cuda::KernelOrigin::Memory);
  EXPECT_EQ(hit[0].kernel, got[1]);
}

TEST(CudaEmulation, AMissingCompilerIsAClearError) {
  ScopedEnv cxx("CXX", "/nonexistent/braze-c++");
  Tensor x = from_vector<float>({1, 2}, {2});
  std::vector<cuda::CudaKernelSource> k{cuda::render_cuda(spec_of(exp(x)))};
  try {
    cuda::EmulatedKernels so(k);
    FAIL() << "compiled without a compiler";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/braze-c++' was not found"), std::string::npos) << e.what();
  }
}

TEST(CudaEmulation, TensorsRunOnTheEmulatedDevice) {
  ScopedEnv mode("BRAZE_CUDA", "emulate");
  Tensor x = from_vector<float>({0.5f, -1, 2, 3, -4, 0.25f}, {2, 3});
  Tensor xd = to(x, kCuda);
  EXPECT_EQ(xd.device(), kCuda);
  EXPECT_EQ(xd.data().device, kCuda);
  EXPECT_TRUE(cuda::executor_of(xd.data().data));
  Tensor y = sum(exp(xd) * 2.0f + xd, std::vector<int64_t>{1});
  EXPECT_EQ(y.device(), kCuda);
  std::vector<float> got = y.to_vector<float>();
  std::vector<float> want = sum(exp(x) * 2.0f + x, std::vector<int64_t>{1}).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * std::abs(want[i]));
  Tensor back = to(y, Device{});
  EXPECT_EQ(back.device(), Device{});
  EXPECT_EQ(back.to_vector<float>(), got);
}

// The fuzzer's random graphs as CUDA tensors, all realized as one device
// program (one host compile): multi-step programs with arena buffers and
// scalar parameters, against the reference interpreter. On a GPU run
// (BRAZE_REQUIRE_GPU=1) on the GPU, e.g. 500 graphs with BRAZE_FUZZ_GRAPHS.
TEST(CudaEmulation, RandomGraphsOnTheDeviceMatchTheReference) {
  ScopedEnv mode("BRAZE_CUDA", testing::checked_cuda_mode());
  std::vector<Tensor> roots;
  std::vector<Array> want;
  std::vector<uint32_t> seed_of;
  const uint32_t first = testing::fuzz_first(), count = testing::fuzz_graphs(60);
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed, {.well_conditioned = true}).build(inputs);
    for (Array& a : reference::evaluate(g, inputs, g.outputs)) want.push_back(std::move(a));
    std::vector<Array> on_device;
    for (const Array& a : inputs) on_device.push_back(copy_to(a, kCuda));
    // lift's tensors live where the inputs are: on the device.
    for (Tensor& t : lift(g, on_device)) roots.push_back(std::move(t)), seed_of.push_back(seed);
  }
  Runtime::get().reset_stats();
  realize(roots);
  EXPECT_EQ(Runtime::get().stats().programs_compiled.load(), 1);
  EXPECT_EQ(Runtime::get().stats().kernels_interpreted.load(), 0);
  for (size_t i = 0; i < roots.size(); ++i) {
    ASSERT_EQ(roots[i].device(), kCuda);
    EXPECT_TRUE(testing::close(roots[i].host_data(), want[i], 1e-4)) << "seed " << seed_of[i];
  }
}

TEST(CudaEmulation, OpsOnTwoDevicesAreAnError) {
  ScopedEnv mode("BRAZE_CUDA", "emulate");
  Tensor x = from_vector<float>({1, 2}, {2});
  EXPECT_THROW(x + to(x, kCuda), std::invalid_argument);
}

TEST(CudaDriver, NoDriverIsAClearErrorAndTheCpuWorks) {
  ScopedEnv mode("BRAZE_CUDA", nullptr);
  ScopedEnv lib("BRAZE_LIBCUDA", "/nonexistent/libcuda.so.1");
  try {
    cuda_executor(kCuda);
    GTEST_SKIP() << "a CUDA driver was already loaded by this process";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("device 'cuda:0' is not available"), std::string::npos) << m;
    EXPECT_NE(m.find("BRAZE_CUDA=emulate"), std::string::npos) << m;
  }
  EXPECT_EQ((from_vector<float>({1, 2}, {2}) * 2.0f).to_vector<float>(), (std::vector<float>{2, 4}));  // the CPU works
}

// --- on a GPU (CTest label gpu) ------------------------------------------------

TEST(CudaDriverGpu, CopiesAndAKernelOnTheDevice) {
  std::shared_ptr<cuda::DeviceExecutor> ex = testing::gpu_or_null();
  if (!ex) GTEST_SKIP() << testing::kNoGpu;
  EXPECT_FALSE(ex->emulated());
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = softmax(to(x, kCuda) * 0.5f, -1);
  std::vector<float> got = y.to_vector<float>();
  std::vector<float> want = softmax(x * 0.5f, -1).to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f);
}

}  // namespace
}  // namespace braze
