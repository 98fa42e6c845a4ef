#include "jit_cuda/nvrtc_api.h"

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/library_loader.h"

namespace braze::cuda {

namespace {

void resolve_all(const SharedLibrary& lib, NvrtcApi& api, std::string& missing) {
#define BRAZE_RESOLVE(name) resolve(lib, #name, api.name, missing);
  BRAZE_NVRTC_FUNCTIONS(BRAZE_RESOLVE)
#undef BRAZE_RESOLVE
}

// NVRTC's version is the CUDA version it targets (Note [Loading CUDA libraries]).
int cuda_version_of(const SharedLibrary& lib) {
  auto version = reinterpret_cast<decltype(&::nvrtcVersion)>(lib.symbol("nvrtcVersion"));
  int major = 0, minor = 0;
  if (!version || version(&major, &minor) != NVRTC_SUCCESS) return 0;
  return major * 1000 + minor * 10;
}

LoadedApi<NvrtcApi> load() {
  LoadedApi<NvrtcApi> l = load_api(CudaLibrary::Nvrtc, resolve_all,
                                   "(an NVRTC older than 11.2?); set BRAZE_LIBNVRTC to a newer one", cuda_version_of);
  l.api.nvrtcVersion(&l.api.major, &l.api.minor);
  return l;
}

}  // namespace

const NvrtcApi& nvrtc() { return load_once(load); }

bool nvrtc_available() { return loads(nvrtc); }

void check_nvrtc(nvrtcResult r, const char* call, const std::string& where) {
  if (r == NVRTC_SUCCESS) return;
  // nvrtcGetErrorString returns the enumerator's name ("NVRTC_ERROR_COMPILATION").
  const NvrtcApi& api = nvrtc();
  const char* name = api.nvrtcGetErrorString(r);
  throw CudaError("libnvrtc", call, static_cast<int>(r), name ? name : "nvrtcResult " + std::to_string(r), "", where);
}

}  // namespace braze::cuda
