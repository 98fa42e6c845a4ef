// NVRTC, resolved at run time (Note [Loading CUDA libraries]).
#pragma once

#include <nvrtc.h>  // types and prototypes only: nothing is linked

#include <string>

namespace braze::cuda {

#define BRAZE_NVRTC_FUNCTIONS(X)                                                                           \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize)     \
  X(nvrtcGetCUBIN) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)

struct NvrtcApi {
#define BRAZE_DECLARE(name) decltype(&::name) name = nullptr;
  BRAZE_NVRTC_FUNCTIONS(BRAZE_DECLARE)
#undef BRAZE_DECLARE
  std::string path;  // the libnvrtc that was opened
  int major = 0, minor = 0;
  std::string version() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// NVRTC, loaded on first use; throws CudaUnavailable when it is missing.
// NVRTC needs no GPU and no driver, so braze compiles (and tests compile)
// CUDA kernels on any machine that has it. Thread-safe.
const NvrtcApi& nvrtc();

// Whether nvrtc() loads here: what decides if a test that compiles CUDA
// runs or skips.
bool nvrtc_available();

// Throws CudaError for a failed NVRTC call, with NVRTC's text for the code.
void check_nvrtc(nvrtcResult r, const char* call, const std::string& where);

}  // namespace braze::cuda

#define BRAZE_NVRTC(fn, args, where) \
  ::braze::cuda::check_nvrtc(::braze::cuda::nvrtc().fn args, #fn, where)
