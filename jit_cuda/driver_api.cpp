#include "jit_cuda/driver_api.h"

#include <cudaTypedefs.h>  // PFN_*: each version's signature

#include <exception>
#include <memory>
#include <mutex>
#include <type_traits>

#include "jit_cuda/cuda_error.h"

namespace braze::cuda {

namespace {

// Note [Entry points at an older version]: the version asked for has the
// signature cuda.h declares (cudaTypedefs.h names each version's).
static_assert(std::is_same_v<decltype(&::cuCtxSynchronize), PFN_cuCtxSynchronize_v2000>);

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

struct LoadedDriver {
  std::unique_ptr<SharedLibrary> lib;
  DriverApi api;
};

// Note [Tables live until exit]
// The tables of entry points (this driver's, and load_once's for NVRTC,
// cuBLASLt and cuDNN) are made once and never destroyed, nor are their
// libraries closed. The runtime's caches are statics too: at exit, cached
// programs free their device memory and library descriptors through these
// tables, in whatever order static destructors run. A function-local
// static table made after the runtime would be destroyed first (its
// library dlclosed), and the first cuMemFree at exit would jump into
// unmapped code: a crash after the work succeeded.

// libcuda opened and its entry points resolved; no cuInit (a driver on a
// machine without a GPU loads, and says its version, but fails cuInit).
LoadedDriver load_driver() {
  LoadedDriver d;
  d.lib = open_library(CudaLibrary::Driver);
  d.api.path = d.lib->path();
  // cuGetProcAddress is the one symbol taken by name; every other entry
  // point comes through it, versioned.
  auto get = reinterpret_cast<GetProcAddress>(d.lib->symbol("cuGetProcAddress_v2"));
  if (!get) get = reinterpret_cast<GetProcAddress>(d.lib->symbol("cuGetProcAddress"));
  if (!get)
    throw CudaUnavailable("braze: CUDA is not available: " + d.api.path +
                          " has no cuGetProcAddress (a driver older than CUDA 12); update the NVIDIA driver");
  std::string missing;
// `text` is stringized by the macro that names the call, before cuda.h's
// macros turn cuMemAlloc into cuMemAlloc_v2: cuGetProcAddress takes the
// plain name.
#define BRAZE_RESOLVE_NAMED(member, text, version)                                                           \
  {                                                                                                          \
    void* fn = nullptr;                                                                                      \
    CUdriverProcAddressQueryResult status{};                                                                 \
    if (get(text, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS && fn)                 \
      d.api.member = reinterpret_cast<decltype(d.api.member)>(fn);                                           \
    else                                                                                                     \
      missing += std::string(" ") + text;                                                                    \
  }
#define BRAZE_RESOLVE(name) BRAZE_RESOLVE_NAMED(name, #name, CUDA_VERSION)
#define BRAZE_RESOLVE_AT(name, version) BRAZE_RESOLVE_NAMED(name, #name, version)
  BRAZE_DRIVER_FUNCTIONS(BRAZE_RESOLVE)
  BRAZE_DRIVER_FUNCTIONS_AT(BRAZE_RESOLVE_AT)
#undef BRAZE_RESOLVE
#undef BRAZE_RESOLVE_AT
#undef BRAZE_RESOLVE_NAMED
  if (!missing.empty())
    throw CudaUnavailable("braze: CUDA is not available: the driver " + d.api.path + " lacks entry points for CUDA " +
                          std::to_string(CUDA_VERSION / 1000) + ":" + missing + "; update the NVIDIA driver");
  d.api.cuDriverGetVersion(&d.api.version);
  return d;
}

void initialise(const DriverApi& api) {
  if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
    // Named here: the shared lookup (driver_error_name) only trusts a driver that initialised.
    const char* name = nullptr;
    const char* text = nullptr;
    api.cuGetErrorName(r, &name);
    api.cuGetErrorString(r, &text);
    throw CudaError("libcuda", "cuInit", static_cast<int>(r), name ? name : "CUresult " + std::to_string(r),
                    text ? text : "", "initialising the CUDA driver " + api.path);
  }
}

// The loaded driver or the exception that loading it raised, decided once;
// then cuInit's outcome, decided once.
struct DriverState {
  std::once_flag loaded_once, initialised_once;
  LoadedDriver driver;
  std::exception_ptr load_failure, init_failure;
  bool api_usable = false;  // error names may be asked for even when cuInit failed
};

DriverState& state() {
  static auto* s = new DriverState;  // Note [Tables live until exit]
  return *s;
}

const DriverApi* usable_api() {
  DriverState& s = state();
  return s.api_usable ? &s.driver.api : nullptr;
}

const DriverApi& loaded() {
  DriverState& s = state();
  std::call_once(s.loaded_once, [&] {
    try {
      s.driver = load_driver();
    } catch (...) {
      s.load_failure = std::current_exception();
    }
  });
  if (s.load_failure) std::rethrow_exception(s.load_failure);
  return s.driver.api;
}

}  // namespace

const DriverApi& driver() {
  DriverState& s = state();
  const DriverApi& api = loaded();
  std::call_once(s.initialised_once, [&] {
    try {
      initialise(api);
      s.api_usable = true;
    } catch (...) {
      s.init_failure = std::current_exception();
    }
  });
  if (s.init_failure) std::rethrow_exception(s.init_failure);
  return api;
}

int driver_cuda_version() {
  try {
    return loaded().version;
  } catch (const CudaUnavailable&) {
    return 0;
  }
}

std::string driver_error_name(CUresult r) {
  const char* s = nullptr;
  if (const DriverApi* api = usable_api(); api && api->cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUresult " + std::to_string(static_cast<int>(r));
}

std::string driver_error_text(CUresult r) {
  const char* s = nullptr;
  if (const DriverApi* api = usable_api(); api && api->cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
  return {};
}

void check_driver(CUresult r, const char* call, const std::string& where) {
  if (r == CUDA_SUCCESS) return;
  throw CudaError("libcuda", call, static_cast<int>(r), driver_error_name(r), driver_error_text(r), where);
}

}  // namespace braze::cuda
