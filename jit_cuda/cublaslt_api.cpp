#include "jit_cuda/cublaslt_api.h"

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/library_loader.h"

namespace braze::cuda {

namespace {

void resolve_all(const SharedLibrary& lib, CublasLtApi& api, std::string& missing) {
#define BRAZE_RESOLVE(name) resolve(lib, #name, api.name, missing);
  BRAZE_CUBLASLT_FUNCTIONS(BRAZE_RESOLVE)
#undef BRAZE_RESOLVE
}

// The CUDA runtime cuBLASLt was built for: what the driver must run (Note [Loading CUDA libraries]).
int cuda_version_of(const SharedLibrary& lib) {
  auto version = reinterpret_cast<decltype(&::cublasLtGetCudartVersion)>(lib.symbol("cublasLtGetCudartVersion"));
  return version ? static_cast<int>(version()) : 0;
}

LoadedApi<CublasLtApi> load() {
  LoadedApi<CublasLtApi> l = load_api(CudaLibrary::CublasLt, resolve_all,
                                      "(a cuBLASLt older than 11?); set BRAZE_LIBCUBLASLT to a newer one",
                                      cuda_version_of);
  l.api.version = l.api.cublasLtGetVersion();
  return l;
}

}  // namespace

const CublasLtApi& cublaslt() { return load_once(load); }

bool cublaslt_available() { return loads(cublaslt); }

void check_cublaslt(cublasStatus_t s, const char* call, const std::string& where) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const CublasLtApi& api = cublaslt();
  const char* name = api.cublasLtGetStatusName(s);
  const char* text = api.cublasLtGetStatusString(s);
  throw CudaError("libcublasLt", call, static_cast<int>(s), name ? name : "cublasStatus_t " + std::to_string(s),
                  text ? text : "", where);
}

}  // namespace braze::cuda
