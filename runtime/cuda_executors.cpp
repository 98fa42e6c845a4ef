#include "runtime/cuda_executors.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "graph/check.h"
#include "jit_cuda/driver_objects.h"
#include "jit_cuda/emulated_executor.h"
#include "runtime/driver_executor.h"

namespace braze {

std::shared_ptr<cuda::DeviceExecutor> cuda_executor(Device d) {
  BRAZE_ASSERT(d.kind == DeviceKind::CUDA, "cuda_executor for ", d.str());
  const char* env = std::getenv("BRAZE_CUDA");
  std::string mode = env ? env : "";
  BRAZE_CHECK(mode.empty() || mode == "driver" || mode == "emulate", "BRAZE_CUDA='", mode,
              "' is not a mode; expected 'driver' (the default) or 'emulate'");
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (mode == "emulate") {
    static auto emulated = std::make_shared<cuda::EmulatedExecutor>();
    return emulated;
  }
  // A failure is not kept: a later call tries again (and says the same).
  // Never destroyed: releasing a context from a static destructor may call
  // into a libcuda that is already being torn down at exit.
  static auto* drivers = new std::map<int, std::shared_ptr<cuda::DeviceExecutor>>;
  if (auto it = drivers->find(d.index); it != drivers->end()) return it->second;
  try {
    return (*drivers)[d.index] = make_driver_executor(d.index);
  } catch (const std::exception& e) {
    throw std::runtime_error("device '" + d.str() + "' is not available: " + e.what() +
                             "\n(without a GPU, BRAZE_CUDA=emulate runs CUDA kernels in host emulation, "
                             "a checking mode; device='cpu' runs on the CPU)");
  }
}

std::optional<std::string> cuda_absent() {
  if (const char* m = std::getenv("BRAZE_CUDA"); m && std::string(m) == "emulate")
    return "BRAZE_CUDA=emulate: host emulation, not a GPU";
  try {
    cuda::driver();
    if (cuda::device_count() == 0) return "the CUDA driver " + cuda::driver().path + " counts no device";
  } catch (const cuda::CudaUnavailable& e) {
    if (e.why() == cuda::CudaUnavailable::Why::NotFound) return e.what();
  } catch (const cuda::CudaError& e) {
    if (e.error_name() == "CUDA_ERROR_NO_DEVICE") return e.what();
  }
  return std::nullopt;
}

}  // namespace braze
