#include "jit_cuda/driver_api.h"

#include <exception>
#include <memory>
#include <mutex>

#include "jit_cuda/cuda_error.h"

namespace braze::cuda {

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

struct LoadedDriver {
  std::unique_ptr<SharedLibrary> lib;
  DriverApi api;
};

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
#define BRAZE_RESOLVE(name)                                                                                  \
  {                                                                                                          \
    void* fn = nullptr;                                                                                      \
    CUdriverProcAddressQueryResult status{};                                                                 \
    if (get(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS && fn)           \
      d.api.name = reinterpret_cast<decltype(d.api.name)>(fn);                                               \
    else                                                                                                     \
      missing += std::string(" ") + #name;                                                                   \
  }
  BRAZE_DRIVER_FUNCTIONS(BRAZE_RESOLVE)
#undef BRAZE_RESOLVE
  if (!missing.empty())
    throw CudaUnavailable("braze: CUDA is not available: the driver " + d.api.path + " lacks entry points for CUDA " +
                          std::to_string(CUDA_VERSION / 1000) + ":" + missing + "; update the NVIDIA driver");
  if (CUresult r = d.api.cuInit(0); r != CUDA_SUCCESS) {
    // Named here: the shared lookup (driver_error_name) only trusts a driver that initialised.
    const char* name = nullptr;
    const char* text = nullptr;
    d.api.cuGetErrorName(r, &name);
    d.api.cuGetErrorString(r, &text);
    throw CudaError("libcuda", "cuInit", static_cast<int>(r), name ? name : "CUresult " + std::to_string(r),
                    text ? text : "", "initialising the CUDA driver " + d.api.path);
  }
  d.api.cuDriverGetVersion(&d.api.version);
  return d;
}

// The loaded driver or the exception that loading it raised, decided once.
struct DriverState {
  std::once_flag once;
  LoadedDriver driver;
  std::exception_ptr failure;
  bool api_usable = false;  // error names may be asked for even when cuInit failed
};

DriverState& state() {
  static DriverState s;
  return s;
}

const DriverApi* usable_api() {
  DriverState& s = state();
  return s.api_usable ? &s.driver.api : nullptr;
}

}  // namespace

const DriverApi& driver() {
  DriverState& s = state();
  std::call_once(s.once, [&] {
    try {
      s.driver = load_driver();
      s.api_usable = true;
    } catch (...) {
      s.failure = std::current_exception();
    }
  });
  if (s.failure) std::rethrow_exception(s.failure);
  return s.driver.api;
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
