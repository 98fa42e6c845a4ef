#include "jit_cuda/nvrtc_api.h"

#include <exception>
#include <memory>
#include <mutex>

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/library_loader.h"

namespace braze::cuda {

namespace {

struct NvrtcState {
  std::once_flag once;
  std::unique_ptr<SharedLibrary> lib;
  NvrtcApi api;
  std::exception_ptr failure;
};

NvrtcState& state() {
  static NvrtcState s;
  return s;
}

void load(NvrtcState& s) {
  s.lib = open_library(CudaLibrary::Nvrtc);
  s.api.path = s.lib->path();
  std::string missing;
#define BRAZE_RESOLVE(name)                                                          \
  if (void* fn = s.lib->symbol(#name)) s.api.name = reinterpret_cast<decltype(s.api.name)>(fn); \
  else missing += std::string(" ") + #name;
  BRAZE_NVRTC_FUNCTIONS(BRAZE_RESOLVE)
#undef BRAZE_RESOLVE
  if (!missing.empty())
    throw CudaUnavailable("braze: CUDA is not available: " + s.api.path + " lacks" + missing +
                          " (an NVRTC older than 11.2?); set BRAZE_LIBNVRTC to a newer one");
  s.api.nvrtcVersion(&s.api.major, &s.api.minor);
}

}  // namespace

const NvrtcApi& nvrtc() {
  NvrtcState& s = state();
  std::call_once(s.once, [&] {
    try {
      load(s);
    } catch (...) {
      s.lib.reset();
      s.failure = std::current_exception();
    }
  });
  if (s.failure) std::rethrow_exception(s.failure);
  return s.api;
}

bool nvrtc_available() {
  try {
    nvrtc();
    return true;
  } catch (const CudaUnavailable&) {
    return false;
  }
}

void check_nvrtc(nvrtcResult r, const char* call, const std::string& where) {
  if (r == NVRTC_SUCCESS) return;
  // nvrtcGetErrorString returns the enumerator's name ("NVRTC_ERROR_COMPILATION").
  const NvrtcApi& api = nvrtc();
  const char* name = api.nvrtcGetErrorString(r);
  throw CudaError("libnvrtc", call, static_cast<int>(r), name ? name : "nvrtcResult " + std::to_string(r), "", where);
}

}  // namespace braze::cuda
