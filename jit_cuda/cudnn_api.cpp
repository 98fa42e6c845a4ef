#include "jit_cuda/cudnn_api.h"

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/library_loader.h"

namespace braze::cuda {

namespace {

void resolve_all(const SharedLibrary& lib, CudnnApi& api, std::string& missing) {
#define BRAZE_RESOLVE(name) resolve(lib, #name, api.name, missing);
  BRAZE_CUDNN_FUNCTIONS(BRAZE_RESOLVE)
#undef BRAZE_RESOLVE
}

// The CUDA runtime cuDNN was built for (a cu12 or cu13 wheel): what the
// driver must run (Note [Loading CUDA libraries]).
int cuda_version_of(const SharedLibrary& lib) {
  auto version = reinterpret_cast<decltype(&::cudnnGetCudartVersion)>(lib.symbol("cudnnGetCudartVersion"));
  return version ? static_cast<int>(version()) : 0;
}

LoadedApi<CudnnApi> load() {
  LoadedApi<CudnnApi> l = load_api(CudaLibrary::Cudnn, resolve_all,
                                   "(braze needs cuDNN 9); set BRAZE_LIBCUDNN to another one", cuda_version_of);
  l.api.version = l.api.cudnnGetVersion();
  return l;
}

}  // namespace

const CudnnApi& cudnn() { return load_once(load); }

bool cudnn_available() { return loads(cudnn); }

void check_cudnn(cudnnStatus_t s, const char* call, const std::string& where) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const CudnnApi& api = cudnn();
  const char* name = api.cudnnGetErrorString(s);  // the enumerator's name: "CUDNN_STATUS_BAD_PARAM"
  // cuDNN 9 keeps a message of what went wrong per thread.
  char text[512] = {};
  api.cudnnGetLastErrorString(text, sizeof text);
  throw CudaError("libcudnn", call, static_cast<int>(s), name ? name : "cudnnStatus_t " + std::to_string(s), text,
                  where);
}

}  // namespace braze::cuda
