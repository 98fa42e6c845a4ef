#include "jit_cuda/library_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

#include "jit_cuda/cuda_error.h"

namespace braze::cuda {

namespace {

// Newest first: a machine with two toolkits gets the newer one.
std::vector<std::string> sonames(CudaLibrary lib) {
  switch (lib) {
    case CudaLibrary::Driver: return {"libcuda.so.1"};
    case CudaLibrary::Nvrtc: return {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    case CudaLibrary::CublasLt: return {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
    case CudaLibrary::Cudnn: return {"libcudnn.so.9", "libcudnn.so"};
  }
  return {};
}

std::vector<std::string> toolkit_dirs() {
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* d = std::getenv(var); d && *d) dirs.push_back(std::string(d) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}

}  // namespace

const char* library_name(CudaLibrary lib) {
  switch (lib) {
    case CudaLibrary::Driver: return "libcuda";
    case CudaLibrary::Nvrtc: return "libnvrtc";
    case CudaLibrary::CublasLt: return "libcublasLt";
    case CudaLibrary::Cudnn: return "libcudnn";
  }
  return "?";
}

const char* override_variable(CudaLibrary lib) {
  switch (lib) {
    case CudaLibrary::Driver: return "BRAZE_LIBCUDA";
    case CudaLibrary::Nvrtc: return "BRAZE_LIBNVRTC";
    case CudaLibrary::CublasLt: return "BRAZE_LIBCUBLASLT";
    case CudaLibrary::Cudnn: return "BRAZE_LIBCUDNN";
  }
  return "?";
}

std::vector<std::string> candidate_paths(CudaLibrary lib) {
  if (const char* p = std::getenv(override_variable(lib)); p && *p) return {p};
  std::vector<std::string> out = sonames(lib);
  if (lib == CudaLibrary::Driver) return out;  // Note [Loading CUDA libraries]: never a toolkit stub
  for (const std::string& dir : toolkit_dirs())
    for (const std::string& so : sonames(lib)) out.push_back(dir + "/" + so);
  return out;
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

void* SharedLibrary::symbol(const char* name) const { return dlsym(handle_, name); }

std::unique_ptr<SharedLibrary> open_library(CudaLibrary lib) {
  std::string tried;
  for (const std::string& path : candidate_paths(lib)) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);  // Note [Loading CUDA libraries]
    if (!h) {
      const char* why = dlerror();
      tried += "\n  " + path + ": " + (why ? why : "not found");
      continue;
    }
    std::string real = path;
    link_map* map = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) real = map->l_name;
    return std::make_unique<SharedLibrary>(h, real);
  }
  // Without libcuda or NVRTC there is no CUDA at all; without cuBLASLt or
  // cuDNN, only the ops that need them fail.
  const char* what = lib == CudaLibrary::CublasLt ? "cuBLASLt" : lib == CudaLibrary::Cudnn ? "cuDNN" : "CUDA";
  std::string msg = std::string("braze: ") + what + " is not available: " + library_name(lib) +
                    " was not found; tried:" + tried + "\nset " + override_variable(lib) + " to the library's path";
  if (lib == CudaLibrary::Driver) msg += " (libcuda comes with the NVIDIA driver; is one installed?)";
  throw CudaUnavailable(msg);
}

}  // namespace braze::cuda
