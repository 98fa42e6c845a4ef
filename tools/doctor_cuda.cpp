// The CUDA part of `braze doctor`: each library looked for exactly as the
// CUDA backend loads it (jit_cuda/library_loader.h), so the answer is the
// one braze itself gets, and the devices the driver API sees: name,
// architecture, memory, multiprocessors, or why there are none.
#include <nlohmann/json.hpp>

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/driver_api.h"
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

namespace {

// Why there is no device to list: libcuda missing or too old, cuInit
// failing (CUDA_ERROR_NO_DEVICE on a machine with a driver but no GPU), or a
// driver that counts none. "" when the driver loads.
std::string why_no_driver() {
  try {
    cuda::driver();
    return "";
  } catch (const cuda::CudaUnavailable& e) {
    // "braze: CUDA is not available: libcuda was not found; tried:" and the places, one per line.
    std::string why = first_line(e.what());
    for (const char* prefix : {"braze: CUDA is not available: "})
      if (why.starts_with(prefix)) why = why.substr(std::string(prefix).size());
    if (!why.ends_with("; tried:")) return why;  // found, but too old: the text says what to do
    why.resize(why.size() - 8);
    return why + " (set " + std::string(cuda::override_variable(cuda::CudaLibrary::Driver)) +
           " to its path; libcuda comes with the NVIDIA driver)";
  } catch (const cuda::CudaError& e) {
    return e.call() + " failed: " + e.error_name() + (e.error_text().empty() ? "" : " (" + e.error_text() + ")");
  }
}

// One attribute of a device.
int attribute(CUdevice dev, CUdevice_attribute a, const char* what) {
  int v = 0;
  BRAZE_CU(cuDeviceGetAttribute, (&v, a, dev), std::string("asking a CUDA device's ") + what);
  return v;
}

nlohmann::json device_facts(int ordinal) {
  CUdevice dev = 0;
  BRAZE_CU(cuDeviceGet, (&dev, ordinal), "opening CUDA device " + std::to_string(ordinal));
  char name[256] = {};
  BRAZE_CU(cuDeviceGetName, (name, sizeof name - 1, dev), "asking a CUDA device's name");
  size_t bytes = 0;
  BRAZE_CU(cuDeviceTotalMem, (&bytes, dev), "asking a CUDA device's memory");
  int major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
  int minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
  return {{"index", ordinal},
          {"name", name},
          {"arch", "sm_" + std::to_string(major * 10 + minor)},
          {"compute_capability", std::to_string(major) + "." + std::to_string(minor)},
          {"memory_bytes", bytes},
          {"multiprocessors", attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count")},
          // Generated code converts bfloat16 with sm_80's instructions (nvrtc_compile.h).
          {"braze_can_target", major >= 8}};
}

}  // namespace

nlohmann::json cuda_device_facts() {
  // Asked of each device through the driver API, with no context made: a
  // context takes GPU memory and time, and doctor only looks.
  nlohmann::json j = {{"devices", nlohmann::json::array()}};
  if (std::string why = why_no_driver(); !why.empty()) {
    j["none_because"] = why;
    return j;
  }
  try {
    const cuda::DriverApi& d = cuda::driver();
    j["driver_version"] = std::to_string(d.version / 1000) + "." + std::to_string(d.version % 1000 / 10);
    int n = 0;
    BRAZE_CU(cuDeviceGetCount, (&n), "counting CUDA devices");
    for (int i = 0; i < n; ++i) j["devices"].push_back(device_facts(i));
    if (n == 0) j["none_because"] = "the driver finds no CUDA device";
  } catch (const std::exception& e) {
    j["none_because"] = first_line(e.what());
  }
  return j;
}

}  // namespace braze::cli
