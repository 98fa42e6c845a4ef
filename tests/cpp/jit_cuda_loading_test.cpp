// Loading the CUDA libraries at run time: overrides, clear errors, and what
// works with no GPU (NVRTC and the descriptors of cuBLASLt and cuDNN need
// none; their handles do).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "jit_cuda/cublaslt_matmul.h"
#include "jit_cuda/cuda_error.h"
#include "jit_cuda/cudnn_conv.h"
#include "jit_cuda/library_calls.h"
#include "jit_cuda/driver_objects.h"
#include "jit_cuda/library_loader.h"
#include "jit_cuda/nvrtc_api.h"
#include "tests/cpp/cuda_test_env.h"
#include "tests/cpp/jit_cuda_library.h"
#include "tests/cpp/random_tensor.h"

namespace braze::cuda {
namespace {

using testing::ScopedEnv;

TEST(JitCudaLoading, OverrideIsTheOnlyPlaceTried) {
  ScopedEnv env("BRAZE_LIBNVRTC", "/nonexistent/libnvrtc.so.99");
  EXPECT_EQ(candidate_paths(CudaLibrary::Nvrtc), std::vector<std::string>{"/nonexistent/libnvrtc.so.99"});
  try {
    open_library(CudaLibrary::Nvrtc);
    FAIL() << "opened a library that does not exist";
  } catch (const CudaUnavailable& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("libnvrtc was not found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("/nonexistent/libnvrtc.so.99"), std::string::npos) << msg;
    EXPECT_NE(msg.find("set BRAZE_LIBNVRTC"), std::string::npos) << msg;
  }
}

TEST(JitCudaLoading, AnOpenedLibraryStaysLoaded) {
  // Note [Loading CUDA libraries]: RTLD_NODELETE. (Run alone, as CTest runs
  // it: in a process that already loaded NVRTC it would stay loaded anyway.)
  std::unique_ptr<SharedLibrary> lib;
  try {
    lib = open_library(CudaLibrary::Nvrtc);
  } catch (const CudaUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
  std::string path = lib->path();
  lib.reset();
  void* again = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(again, nullptr) << path << " was unloaded";
  if (again) dlclose(again);
}

TEST(JitCudaLoading, DriverIsNeverTakenFromAToolkitDirectory) {
  // The toolkit's lib64/stubs/libcuda.so cannot run kernels.
  unsetenv("BRAZE_LIBCUDA");
  for (const std::string& p : candidate_paths(CudaLibrary::Driver))
    EXPECT_EQ(p.find('/'), std::string::npos) << p;
  for (CudaLibrary lib : kAllCudaLibraries) {
    EXPECT_FALSE(candidate_paths(lib).empty()) << library_name(lib);
    EXPECT_EQ(std::string(override_variable(lib)).rfind("BRAZE_LIB", 0), 0u);
  }
}

TEST(JitCudaLoading, ErrorNamesCallLibraryCodeAndPlace) {
  CudaError e("libcuda", "cuModuleLoadData", 200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid",
              "loading the cubin of add_f32");
  EXPECT_STREQ(e.what(),
               "braze: loading the cubin of add_f32: cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (device "
               "kernel image is invalid)");
  EXPECT_EQ(e.code(), 200);
  EXPECT_EQ(e.library(), "libcuda");
}


TEST(JitCudaLoading, NvrtcLoadsAndReportsItsVersion) {
  if (!nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  const NvrtcApi& api = nvrtc();
  EXPECT_GE(api.major, 11);
  EXPECT_FALSE(api.path.empty());
  int n = 0;
  BRAZE_NVRTC(nvrtcGetNumSupportedArchs, (&n), "test");
  EXPECT_GT(n, 0);
}

TEST(JitCudaLoading, NvrtcFailureCarriesNvrtcsName) {
  if (!nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  try {
    check_nvrtc(NVRTC_ERROR_COMPILATION, "nvrtcCompileProgram", "compiling kernel k");
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.error_name(), "NVRTC_ERROR_COMPILATION");
    EXPECT_STREQ(e.what(), "braze: compiling kernel k: nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION");
  }
}

TEST(JitCudaLoading, NoDriverIsAClearErrorAndStaysOne) {
  // With a GPU this checks that the driver works; without one, that the
  // error says what is missing, and says it again on the next call.
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      const DriverApi& api = driver();
      EXPECT_GE(api.version, 12000);
      EXPECT_GE(device_count(), 0);
    } catch (const CudaUnavailable& e) {
      EXPECT_NE(std::string(e.what()).find("libcuda was not found"), std::string::npos) << e.what();
    } catch (const CudaError& e) {
      EXPECT_EQ(e.call(), "cuInit") << e.what();  // a driver without a usable device
    }
  }
}


TEST(JitCudaLoading, LibraryOverridesAreTheOnlyPlaceTried) {
  struct Case {
    CudaLibrary lib;
    const char* variable;
    const char* name;
  };
  for (Case c : {Case{CudaLibrary::CublasLt, "BRAZE_LIBCUBLASLT", "libcublasLt"},
                 Case{CudaLibrary::Cudnn, "BRAZE_LIBCUDNN", "libcudnn"}}) {
    ScopedEnv env(c.variable, "/nonexistent");
    try {
      open_library(c.lib);
      FAIL() << "opened /nonexistent";
    } catch (const CudaUnavailable& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(std::string(c.name) + " was not found; tried:\n  /nonexistent: "), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string("set ") + c.variable), std::string::npos) << msg;
    }
  }
}

TEST(JitCudaLoading, CublasLtAndCudnnNameTheirErrors) {
  if (!cublaslt_available() || !cudnn_available()) GTEST_SKIP() << "no libcublasLt or libcudnn on this machine";
  EXPECT_GE(cublaslt().version, 110000u);
  EXPECT_GE(cudnn().version, 90000u);
  try {
    check_cublaslt(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul", "running matmul k");
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.library(), "libcublasLt");
    EXPECT_EQ(e.error_name(), "CUBLAS_STATUS_NOT_SUPPORTED");
    EXPECT_EQ(std::string(e.what()).rfind("braze: running matmul k: cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED (", 0),
              0u)
        << e.what();
  }
  try {
    check_cudnn(CUDNN_STATUS_BAD_PARAM, "cudnnConvolutionForward", "running conv2d k");
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.library(), "libcudnn");
    EXPECT_EQ(e.error_name(), "CUDNN_STATUS_BAD_PARAM");
    EXPECT_EQ(std::string(e.what()).rfind("braze: running conv2d k: cudnnConvolutionForward failed: CUDNN_STATUS_BAD_PARAM", 0),
              0u)
        << e.what();
  }
}

TEST(JitCudaLoading, LibraryHandlesNeedADeviceAndSaySo) {
  // With a GPU the handles are made; without one, the real libraries'
  // refusal comes back as a CudaError naming the call and their status.
  if (!cublaslt_available() || !cudnn_available()) GTEST_SKIP() << "no libcublasLt or libcudnn on this machine";
  try {
    LtHandle h;
    EXPECT_NE(h.get(), nullptr);
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "cublasLtCreate") << e.what();
    EXPECT_NE(std::string(e.what()).find("creating a cuBLASLt handle"), std::string::npos) << e.what();
  }
  try {
    CudnnHandle h(nullptr);
    EXPECT_NE(h.get(), nullptr);
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "cudnnCreate") << e.what();
  }
}

// A library is loaded once per process: each case runs in a fresh one
// (a threadsafe death test re-executes the test binary), where the first
// call of its kind finds the library missing. No GPU is needed to get there.
TEST(JitCudaLoadingDeathTest, AMissingLibraryNamesTheOpThatNeededIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto first_call = [](const char* variable, const Tensor& y) {
    ::setenv(variable, "/nonexistent/lib.so", 1);
    Schedule s = testing::cuda_schedule(y);
    try {
      LibraryCalls(nullptr).prepare(s.graph, testing::library_step(s).group, {});
    } catch (const CudaUnavailable& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::exit(0);
    }
    std::exit(1);
  };
  using testing::random_tensor;
  EXPECT_EXIT(first_call("BRAZE_LIBCUBLASLT", matmul(random_tensor({4, 4}, 1), random_tensor({4, 4}, 2))),
              ::testing::ExitedWithCode(0),
              "matmul on cuda needs cuBLASLt, which could not be loaded: .*libcublasLt was not found.*"
              "/nonexistent/lib.so.*set BRAZE_LIBCUBLASLT");
  EXPECT_EXIT(first_call("BRAZE_LIBCUDNN", conv2d(random_tensor({1, 2, 5, 5}, 1), random_tensor({3, 2, 3, 3}, 2))),
              ::testing::ExitedWithCode(0),
              "conv2d on cuda needs cuDNN, which could not be loaded: .*libcudnn was not found.*set BRAZE_LIBCUDNN");
}

}  // namespace
}  // namespace braze::cuda
