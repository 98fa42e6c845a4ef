// The CUDA texts of a kernel in a build without the CUDA headers: there is
// no CUDA backend to render them, and each function says so.
#include <stdexcept>

#include "runtime/dump_cuda.h"

namespace braze {

namespace {

[[noreturn]] void no_backend(const std::string& what) {
  throw std::invalid_argument(what + " needs braze's CUDA backend, which this build lacks (no CUDA headers, "
                              "cuda.h and nvrtc.h, at build time; rebuild with CUDA_HOME set)");
}

}  // namespace

bool cuda_backend_built() { return false; }
std::string cuda_kernel_line(const KernelSpec&) { no_backend("CUDA source"); }
std::string cuda_dump_text(const KernelSpec&) { no_backend("CUDA source"); }
std::string ptx_dump_text(const KernelSpec&, int) { no_backend("PTX"); }
int default_cuda_arch() { return kDefaultCudaArch; }

int check_cuda_dumps(bool cuda, bool ptx) {
  if (cuda || ptx) no_backend(std::string("BRAZE_DUMP: '") + (cuda ? "cuda" : "ptx") + "'");
  return 0;
}

}  // namespace braze
