// BRAZE_DUMP=cuda,ptx (Note [CUDA dump texts] in runtime/dump_cuda.h): the
// words, the files a Dumper writes for a kernel, and that they are the
// texts `braze kernels --target cuda` prints (one function makes both).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "jit_cuda/cuda_source.h"
#include "jit_cuda/nvrtc_api.h"
#include "runtime/braze.h"
#include "runtime/dump.h"
#include "runtime/dump_cuda.h"
#include "runtime/lower.h"

namespace braze {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Schedule softmax_schedule() {
  std::vector<float> v(4 * 50);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
  return make_schedule(lower(std::vector<Tensor>{softmax(from_vector<float>(v, {4, 50}))}).graph);
}

TEST(CudaDumpOptions, CudaAndPtxAreWords) {
  std::vector<std::string> unknown;
  DumpOptions o = parse_dump_options("cuda, ptx", nullptr, unknown);
  EXPECT_TRUE(o.cuda && o.ptx && o.any());
  EXPECT_FALSE(o.fused || o.assembly || o.graph || o.plan);
  EXPECT_TRUE(unknown.empty());
  EXPECT_NE(std::string(kDumpWords).find("cuda, ptx"), std::string::npos) << "the error lists them";
  EXPECT_EQ(check_cuda_dumps(/*cuda=*/true, /*ptx=*/false), 0) << "the source needs no NVRTC and no architecture";
}

TEST(CudaDumpOptions, BadDumpArchIsAnErrorNamingTheVariable) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  for (const char* bad : {"sm_70", "volta", "sm_999"}) {
    ::setenv("BRAZE_DUMP_ARCH", bad, 1);
    try {
      check_cuda_dumps(false, true);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("BRAZE_DUMP_ARCH: ")) << e.what();
    }
  }
  ::setenv("BRAZE_DUMP_ARCH", "sm_80", 1);
  EXPECT_EQ(check_cuda_dumps(false, true), 80);
  ::unsetenv("BRAZE_DUMP_ARCH");
  EXPECT_EQ(check_cuda_dumps(false, true), default_cuda_arch());
}

TEST(CudaDumpText, SourceIsTheRenderedKernelAfterOneCommentLine) {
  Schedule s = softmax_schedule();
  ASSERT_EQ(s.steps.size(), 1u);
  cuda::CudaKernelSource k = cuda::render_cuda(s.steps[0].spec);
  std::string text = cuda_dump_text(s.steps[0].spec);
  EXPECT_EQ(text, "// kernel " + k.name + ": block per row, " + std::to_string(k.launch.threads) +
                      " threads per block, 4 row(s)\n" + k.source);
  EXPECT_EQ(cuda_kernel_line(s.steps[0].spec) + "\n", text.substr(0, text.find('\n') + 1));
}

class CudaDumperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("braze_cuda_dump_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(CudaDumperTest, WritesTheSourceAndThePtxByKeyAndArchitecture) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  Dumper d(DumpOptions{.cuda = true, .ptx = true, .ptx_arch = 80, .dir = dir_});
  Schedule s = softmax_schedule();
  const Step& step = s.steps[0];
  jit::Isa isa = jit::host_isa();
  jit::Lookup found = jit::KernelCache::get().find_or_compile(step.spec, isa);
  d.kernel(s, step, found, isa);
  std::string key = kernel_key(step.spec).hex();
  EXPECT_EQ(read(dir_ / (key + ".cu")), cuda_dump_text(step.spec));
  std::string ptx = read(dir_ / (key + ".sm_80.ptx"));
  EXPECT_EQ(ptx, ptx_dump_text(step.spec, 80)) << "the same bytes every time";
  EXPECT_TRUE(ptx.starts_with(cuda_kernel_line(step.spec) + "; PTX for sm_80 by NVRTC " + cuda::nvrtc().version() +
                              "\n"))
      << ptx.substr(0, 300);
  EXPECT_NE(ptx.find(".target sm_80"), std::string::npos);
  EXPECT_NE(ptx.find(".entry " + cuda::render_cuda(step.spec).name), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / (key + ".fused.txt"))) << "only what was asked for";
}

TEST_F(CudaDumperTest, InterpretedCpuKernelsAreStillRenderedForCuda) {
  // int64 runs on the CPU's spec interpreter (jit_cpu/README.md); the CUDA
  // backend renders it all the same, so its dump is real source.
  Dumper d(DumpOptions{.cuda = true, .dir = dir_});
  Tensor t = from_vector<int64_t>({1, 2, 3}, {3}) * from_vector<int64_t>({4, 5, 6}, {3});
  Schedule s = make_schedule(lower(std::vector<Tensor>{t}).graph);
  jit::Isa isa = jit::host_isa();
  jit::Lookup found = jit::KernelCache::get().find_or_compile(s.steps[0].spec, isa);
  d.kernel(s, s.steps[0], found, isa);
  std::string cu = read(dir_ / (kernel_key(s.steps[0].spec).hex() + ".cu"));
  EXPECT_NE(cu.find("extern \"C\" __global__"), std::string::npos) << cu;
  EXPECT_NE(cu.find("const long long* __restrict__ in0"), std::string::npos) << cu;
}

}  // namespace
}  // namespace braze
