// The CUDA texts of a kernel (Note [CUDA dump texts]), over jit_cuda.
#include "runtime/dump_cuda.h"

#include <cstdlib>
#include <exception>

#include "graph/check.h"
#include "jit_cuda/cuda_error.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/driver_api.h"
#include "jit_cuda/library_loader.h"
#include "jit_cuda/nvrtc_api.h"
#include "jit_cuda/nvrtc_compile.h"

namespace braze {

namespace {

// "// kernel bz_row_max_...: block per row, 256 threads per block, 64 row(s)"
std::string kernel_line(const cuda::CudaKernelSource& k) {
  const cuda::CudaLaunch& l = k.launch;
  return "// kernel " + k.name + ": " + cuda::name(l.shape) + ", " + std::to_string(l.threads) +
         " threads per block, " + std::to_string(l.work) +
         (l.shape == cuda::KernelShape::BlockPerRow ? " row(s)" : " work item(s)");
}

// The first device's compute capability as 90 for 9.0, or 0 when the
// driver is missing, fails to initialise or finds no device. Asked of the
// device itself (no context is made: that would take GPU memory).
int first_device_arch() {
  try {
    const cuda::DriverApi& d = cuda::driver();
    int n = 0;
    CUdevice dev = 0;
    int major = 0, minor = 0;
    if (d.cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0 || d.cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
        d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS)
      return 0;
    return major * 10 + minor;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

bool cuda_backend_built() { return true; }

std::string cuda_kernel_line(const KernelSpec& spec) { return kernel_line(cuda::render_cuda(spec)); }

std::string cuda_dump_text(const KernelSpec& spec) {
  cuda::CudaKernelSource k = cuda::render_cuda(spec);
  return kernel_line(k) + "\n" + k.source;
}

std::string ptx_dump_text(const KernelSpec& spec, int arch) {
  cuda::CudaKernelSource k = cuda::render_cuda(spec);
  cuda::CompiledCuda c = cuda::compile_cuda(k.source, k.name, arch, cuda::CudaImage::Ptx);
  // The image is the PTX text with its final NUL.
  std::string ptx(reinterpret_cast<const char*>(c.image.data()), c.image.empty() ? 0 : c.image.size() - 1);
  return kernel_line(k) + "; PTX for sm_" + std::to_string(arch) + " by NVRTC " + cuda::nvrtc().version() + "\n" +
         ptx;
}

int default_cuda_arch() {
  int arch = first_device_arch();
  if (arch == 0) return kDefaultCudaArch;
  try {
    return cuda::parse_arch(std::to_string(arch));  // sm_80 or later, and known to this NVRTC
  } catch (const std::exception&) {
    return kDefaultCudaArch;
  }
}

int check_cuda_dumps(bool /*cuda: the source needs nothing beyond this build*/, bool ptx) {
  if (!ptx) return 0;
  try {
    cuda::nvrtc();
  } catch (const cuda::CudaUnavailable&) {
    BRAZE_CHECK(false, "BRAZE_DUMP: 'ptx' needs NVRTC, and ", cuda::library_name(cuda::CudaLibrary::Nvrtc),
                " cannot be loaded (set ", cuda::override_variable(cuda::CudaLibrary::Nvrtc),
                " to its path; `braze doctor` lists where it was looked for)");
  }
  const char* arch = std::getenv("BRAZE_DUMP_ARCH");
  if (!arch || !*arch) return default_cuda_arch();
  try {
    return cuda::parse_arch(arch);
  } catch (const std::exception& e) {
    BRAZE_CHECK(false, "BRAZE_DUMP_ARCH: ", e.what());
  }
  return 0;  // not reached
}

}  // namespace braze
