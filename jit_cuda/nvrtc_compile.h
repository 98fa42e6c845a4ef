// CUDA source -> cubin (or PTX) with NVRTC. Needs no GPU and no driver.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace braze::cuda {

// "sm_90" or "90" -> 90. Throws std::invalid_argument for anything else,
// or an architecture below sm_80 (generated code converts bfloat16 with
// instructions sm_80 introduced) or one this NVRTC cannot target.
int parse_arch(const std::string& arch);

enum class CudaImage { Cubin, Ptx };

// The NVRTC options braze compiles with, for an architecture: part of
// every disk cache key. Cubin: "--gpu-architecture=sm_XX" compiles
// straight to machine code (no PTX JIT when the module loads).
std::vector<std::string> nvrtc_options(int arch, CudaImage image);

struct CompiledCuda {
  std::vector<std::byte> image;  // the cubin, or PTX text with its final NUL
  std::string log;               // NVRTC's log; with `resource_usage`, ptxas's per-kernel lines
  double seconds = 0;            // wall time of nvrtcCompileProgram
};

// Compiles `source` (which may hold several kernels) for `arch`.
// `what` names it in errors. A compile error throws CudaError whose text is
// NVRTC's log. `resource_usage` asks ptxas for registers, shared memory and
// spills per kernel (in `log`; cubin only).
CompiledCuda compile_cuda(const std::string& source, const std::string& what, int arch, CudaImage image,
                          bool resource_usage = false);

}  // namespace braze::cuda

namespace braze::cuda {

// What ptxas reported for one kernel (compile_cuda with resource_usage).
struct KernelResources {
  int registers = -1;  // -1: not reported
  int shared_bytes = 0;
  int stack_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
};

// The resources of kernel `name` in a ptxas --verbose log; registers stays
// -1 when the log does not mention the kernel.
KernelResources parse_resources(const std::string& log, const std::string& name);

}  // namespace braze::cuda
