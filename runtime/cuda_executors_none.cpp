// cuda_executor() in a build without jit_cuda (no CUDA headers at configure
// time): no CUDA backend exists (Note [CUDA executors]).
#include "runtime/cuda_executors.h"

#include <stdexcept>

namespace braze {

std::shared_ptr<cuda::DeviceExecutor> cuda_executor(Device d) {
  throw std::runtime_error("device '" + d.str() +
                           "' is not available: this build of braze has no CUDA backend (CMake found no CUDA "
                           "headers, cuda.h and nvrtc.h; set CUDA_HOME and rebuild); use device='cpu'");
}

std::optional<std::string> cuda_absent() {
  return "this build of braze has no CUDA backend (CMake found no CUDA headers)";
}

}  // namespace braze
