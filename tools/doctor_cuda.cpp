// The CUDA part of `braze doctor`: each library looked for exactly as the
// CUDA backend loads it (jit_cuda/library_loader.h), so the answer is the
// one braze itself gets, and the devices the driver sees.
#include <nlohmann/json.hpp>

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/driver_objects.h"
#include "jit_cuda/library_loader.h"
#include "jit_cuda/nvrtc_api.h"
#include "tools/doctor_cuda.h"

namespace braze::cli {

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// A version number the library reports about itself, or "".
std::string version_of(cuda::CudaLibrary lib, const cuda::SharedLibrary& so) {
  switch (lib) {
    case cuda::CudaLibrary::Driver: {
      const cuda::DriverApi& d = cuda::driver();
      return std::to_string(d.version / 1000) + "." + std::to_string(d.version % 1000 / 10);
    }
    case cuda::CudaLibrary::Nvrtc: return cuda::nvrtc().version();
    case cuda::CudaLibrary::CublasLt: {
      auto f = reinterpret_cast<size_t (*)()>(so.symbol("cublasLtGetVersion"));  // 130100 is 13.1.0
      if (!f) return "";
      size_t v = f();
      return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
    }
    case cuda::CudaLibrary::Cudnn: {
      auto f = reinterpret_cast<size_t (*)()>(so.symbol("cudnnGetVersion"));  // 91000 is 9.10.0
      if (!f) return "";
      size_t v = f();
      return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
    }
  }
  return "";
}

}  // namespace

nlohmann::json cuda_library_facts() {
  nlohmann::json libs = nlohmann::json::array();
  for (cuda::CudaLibrary lib : cuda::kAllCudaLibraries) {
    nlohmann::json j = {{"library", cuda::library_name(lib)}, {"override", cuda::override_variable(lib)}};
    try {
      std::unique_ptr<cuda::SharedLibrary> so = cuda::open_library(lib);
      j["found"] = true;
      j["path"] = so->path();
      try {
        if (std::string v = version_of(lib, *so); !v.empty()) j["version"] = v;
      } catch (const std::exception& e) {  // a driver that loads but cannot initialise
        j["error"] = first_line(e.what());
      }
    } catch (const cuda::CudaUnavailable& e) {
      j["found"] = false;
      j["tried"] = cuda::candidate_paths(lib);
    }
    libs.push_back(std::move(j));
  }
  return libs;
}

nlohmann::json cuda_device_facts() {
  nlohmann::json devices = nlohmann::json::array();
  try {
    for (int d = 0, n = cuda::device_count(); d < n; ++d) {
      cuda::Context ctx(d);
      devices.push_back({{"index", d}, {"name", ctx.device_name()}, {"arch", "sm_" + std::to_string(ctx.compute_capability())}});
    }
  } catch (const std::exception&) {
    // No driver or no device: the libraries' entries say why.
  }
  return devices;
}

}  // namespace braze::cli
