// What the CUDA tests share: an environment variable set for a scope, and
// what a test that needs a GPU does without one (BRAZE_SKIP_WITHOUT_GPU).
#pragma once

#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
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

// BRAZE_REQUIRE_GPU=1 (scripts/gpu_check.sh): this run is on a GPU, so a
// test that needs one fails where it would skip.
inline bool gpu_required() {
  const char* v = std::getenv("BRAZE_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

}  // namespace braze::testing

// For a test that needs a GPU, first in its body: skips, saying why, where
// this machine has none (cuda_absent(): no driver, no device, emulation);
// fails instead under BRAZE_REQUIRE_GPU=1. A GPU that is there but cannot
// be used is no reason to skip: the test goes on, and cuda_executor's error
// fails it.
#define BRAZE_SKIP_WITHOUT_GPU()                                                             \
  if (std::optional<std::string> braze_no_gpu = ::braze::cuda_absent()) {                   \
    if (::braze::testing::gpu_required()) FAIL() << "BRAZE_REQUIRE_GPU=1, but " << *braze_no_gpu; \
    GTEST_SKIP() << *braze_no_gpu << " (BRAZE_CUDA=emulate checks the same path on the host)";    \
  }
