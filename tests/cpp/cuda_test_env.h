// What the CUDA tests share: an environment variable set for a scope, and
// the driver's device executor where there is a GPU (tests that need one
// skip without it).
#pragma once

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "runtime/cuda_executors.h"

namespace braze::testing {

// Sets (or, with null, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

inline const Device kCuda{DeviceKind::CUDA, 0};

// BRAZE_REQUIRE_GPU=1 (a GPU run, scripts/gpu_check.sh): the checks that
// run CUDA kernels in host emulation run them on the GPU instead.
inline bool gpu_required() {
  const char* v = std::getenv("BRAZE_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

// BRAZE_CUDA for those checks: emulation, or the driver on a GPU run.
inline const char* checked_cuda_mode() { return gpu_required() ? nullptr : "emulate"; }

// The driver's executor for cuda:0, or null without a driver and a GPU
// (or under BRAZE_CUDA=emulate, which is not a GPU).
inline std::shared_ptr<cuda::DeviceExecutor> gpu_or_null() {
  if (const char* m = std::getenv("BRAZE_CUDA"); m && std::string(m) == "emulate") return nullptr;
  try {
    return cuda_executor(kCuda);
  } catch (const std::exception&) {
    return nullptr;
  }
}

inline constexpr const char* kNoGpu = "no CUDA driver or device here (BRAZE_CUDA=emulate checks the same path on the host)";

}  // namespace braze::testing
