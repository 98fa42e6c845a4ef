// `braze kernels --target cuda` and the CUDA part of `braze doctor`: no GPU
// needed; the tests that compile need NVRTC and skip without it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/nvrtc_api.h"
#include "tests/cli/run_cli.h"

namespace braze {
namespace {

using Result = testing::CliResult;
using testing::cli;
using testing::one_line;

std::vector<std::string> softmax_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"kernels", "--target", "cuda", "--expr", "softmax(x, axis=-1)", "--input",
                                "x:f16[64,1000]"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}


TEST(CliCuda, KernelsShowsTheCudaSourceOfSoftmaxAsOneBlockPerRowKernel) {
  Result r = cli(softmax_args({}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel bz_row_max_sub_exp_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block per row, 256 threads per block, 64 row(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("extern \"C\" __global__"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bz::block_reduce"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("=== step 1 ==="), std::string::npos) << "softmax is one kernel\n" << r.out;
  EXPECT_EQ(cli(softmax_args({})).out, r.out) << "the same graph gives the same source";
}

TEST(CliCuda, KernelsCompilesToCubinAndPtxWithoutAGpu) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  for (std::string arch : {"sm_80", "sm_90"}) {
    Result r = cli(softmax_args({"--emit", "cubin", "--arch", arch, "--format", "json"}));
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["arch"], arch);
    const nlohmann::json& k = j["kernels"][0];
    EXPECT_GT(k["cubin_bytes"].get<int>(), 1000) << k;
    EXPECT_GT(k["registers"].get<int>(), 0) << k;
    EXPECT_EQ(k["shared_bytes"].get<int>(), 2 * 32 * 4) << "two reductions of 32 floats each: " << k;
    EXPECT_EQ(k["spill_store_bytes"].get<int>(), 0) << k;
  }
  Result ptx = cli(softmax_args({"--emit", "ptx", "--arch", "sm_90"}));
  ASSERT_EQ(ptx.code, 0) << ptx.err;
  EXPECT_NE(ptx.out.find(".target sm_90"), std::string::npos) << ptx.out.substr(0, 2000);
  EXPECT_NE(ptx.out.find("shfl.sync.bfly"), std::string::npos) << "warp-shuffle reductions";
  Result text = cli(softmax_args({"--emit", "cubin"}));
  EXPECT_NE(text.out.find("registers"), std::string::npos) << text.out;
}

TEST(CliCuda, BadOptionsAreOneLineErrors) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  std::vector<Case> cases = {
      {softmax_args({"--emit", "sass"}), 2, "--emit"},
      {softmax_args({"--isa", "avx2"}), 1, "--isa applies to --target cpu"},
      {{"kernels", "--expr", "exp(x)", "--input", "x:f32[4]", "--emit", "ptx"}, 1, "--target cuda"},
  };
  if (cuda::nvrtc_available()) {
    cases.push_back({softmax_args({"--arch", "sm_70"}), 1, "need sm_80 or later"});
    cases.push_back({softmax_args({"--arch", "hopper"}), 1, "bad CUDA architecture 'hopper'"});
    cases.push_back({softmax_args({"--emit", "cubin", "--arch", "sm_999"}), 1, "cannot compile for sm_999"});
  }
  for (const Case& c : cases) {
    Result r = cli(c.args);
    EXPECT_EQ(r.code, c.code) << c.args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(CliCuda, DoctorListsEveryCudaLibraryWithItsOverride) {
  Result r = cli({"doctor", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["cuda_backend"].get<bool>());
  std::vector<std::string> names;
  for (const nlohmann::json& lib : j["cuda"]) {
    names.push_back(lib["library"]);
    EXPECT_TRUE(lib["override"].get<std::string>().starts_with("BRAZE_LIB")) << lib;
    EXPECT_EQ(lib["found"].get<bool>(), lib.contains("path")) << lib;
    if (!lib["found"].get<bool>()) {
      EXPECT_FALSE(lib["tried"].empty()) << lib;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"libcuda", "libnvrtc", "libcublasLt", "libcudnn"}));
  if (cuda::nvrtc_available()) {
    EXPECT_EQ(j["cuda"][1]["version"], cuda::nvrtc().version());
  }
  ::setenv("BRAZE_LIBCUDNN", "/nonexistent/libcudnn.so", 1);
  Result text = cli({"doctor"});
  ::unsetenv("BRAZE_LIBCUDNN");
  EXPECT_NE(text.out.find("libcudnn: not found (set BRAZE_LIBCUDNN)"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace braze
