// `braze doctor` on a machine with GPUs: every device the driver counts,
// with its name and architecture as the driver API reports them. CTest
// label `gpu`; without a GPU each test skips and says why.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/driver_api.h"
#include "tests/cli/run_cli.h"

namespace braze {
namespace {

// The number of GPUs, or why there are none (then GTEST_SKIP).
int gpu_count(std::string& why) {
  try {
    int n = 0;
    BRAZE_CU(cuDeviceGetCount, (&n), "counting CUDA devices");
    if (n == 0) why = "the CUDA driver finds no device";
    return n;
  } catch (const std::exception& e) {
    std::string what = e.what();
    why = "no usable CUDA driver: " + what.substr(0, what.find('\n'));
    return 0;
  }
}

TEST(CliGpu, DoctorListsEachGpuWithItsArchitectureAndMemory) {
  std::string why;
  int n = gpu_count(why);
  if (n == 0) GTEST_SKIP() << "no GPU here (" << why << ")";
  testing::CliResult r = testing::cli({"doctor", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cuda_devices"].size(), static_cast<size_t>(n)) << j;
  EXPECT_TRUE(j["cuda_devices_none_because"].is_null()) << j;
  const cuda::DriverApi& d = cuda::driver();
  EXPECT_EQ(j["cuda_driver_version"], std::to_string(d.version / 1000) + "." + std::to_string(d.version % 1000 / 10));
  for (int i = 0; i < n; ++i) {
    const nlohmann::json& dev = j["cuda_devices"][i];
    CUdevice h = 0;
    int major = 0, minor = 0;
    char name[256] = {};
    BRAZE_CU(cuDeviceGet, (&h, i), "test");
    BRAZE_CU(cuDeviceGetName, (name, sizeof name - 1, h), "test");
    BRAZE_CU(cuDeviceGetAttribute, (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, h), "test");
    BRAZE_CU(cuDeviceGetAttribute, (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, h), "test");
    EXPECT_EQ(dev["index"], i);
    EXPECT_EQ(dev["name"], name);
    EXPECT_EQ(dev["arch"], "sm_" + std::to_string(major * 10 + minor));
    EXPECT_GT(dev["memory_bytes"].get<double>(), 1e9) << dev;
    EXPECT_GT(dev["multiprocessors"].get<int>(), 0) << dev;
  }
  testing::CliResult text = testing::cli({"doctor"});
  EXPECT_NE(text.out.find("cuda devices: " + std::to_string(n) + " (driver API "), std::string::npos) << text.out;
  std::string first = "  cuda:0: " + j["cuda_devices"][0]["name"].get<std::string>() + ", " +
                      j["cuda_devices"][0]["arch"].get<std::string>() + " (compute capability ";
  EXPECT_NE(text.out.find(first), std::string::npos) << text.out;
}

TEST(CliGpu, PtxWithoutArchTargetsTheGpu) {
  std::string why;
  if (gpu_count(why) == 0) GTEST_SKIP() << "no GPU here (" << why << ")";
  testing::CliResult doctor = testing::cli({"doctor", "--format", "json"});
  std::string arch = nlohmann::json::parse(doctor.out)["cuda_devices"][0]["arch"];
  testing::CliResult r = testing::cli({"kernels", "--target", "cuda", "--emit", "ptx", "--expr", "exp(x)", "--input",
                                       "x:f32[1000]"});
  if (r.code != 0 && r.err.find("cannot compile for") != std::string::npos)
    GTEST_SKIP() << "this NVRTC cannot target the GPU: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("; PTX for " + arch + " by NVRTC"), std::string::npos) << r.out.substr(0, 400);
}

}  // namespace
}  // namespace braze
