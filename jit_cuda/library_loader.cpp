#include "jit_cuda/library_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

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

std::vector<std::string> python_site_dirs() {
  // /proc/self/maps lists every mapped file: Python's extension modules
  // (braze's, NumPy's) sit under their environment's site-packages.
  std::set<std::string> dirs;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    size_t path = line.find('/');
    if (path == std::string::npos) continue;
    for (const char* name : {"/site-packages/", "/dist-packages/"})
      if (size_t at = line.find(name, path); at != std::string::npos)
        dirs.insert(line.substr(path, at + std::string(name).size() - 1 - path));
  }
  return {dirs.begin(), dirs.end()};
}

std::vector<std::string> wheel_library_dirs() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& site : python_site_dirs()) {
    std::error_code ec;
    std::vector<std::string> libs;
    for (const fs::directory_entry& e : fs::directory_iterator(fs::path(site) / "nvidia", ec))
      if (fs::is_directory(e.path() / "lib", ec)) libs.push_back((e.path() / "lib").string());
    std::sort(libs.begin(), libs.end());
    out.insert(out.end(), libs.begin(), libs.end());
  }
  return out;
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::vector<std::string> candidate_paths(CudaLibrary lib) {
  if (const char* p = std::getenv(override_variable(lib)); p && *p) return {p};
  std::vector<std::string> out = sonames(lib);
  if (lib == CudaLibrary::Driver) return out;  // Note [Loading CUDA libraries]: never a toolkit stub
  std::vector<std::string> dirs = wheel_library_dirs();
  for (const std::string& dir : toolkit_dirs()) dirs.push_back(dir);
  for (const std::string& dir : dirs)
    for (const std::string& so : sonames(lib)) out.push_back(dir + "/" + so);
  return out;
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

void* SharedLibrary::symbol(const char* name) const { return dlsym(handle_, name); }

std::unique_ptr<SharedLibrary> open_library(CudaLibrary lib, CudaVersionOf version_of) {
  const int driver = version_of ? driver_cuda_version() : 0;
  std::string tried, too_new;
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
    auto opened = std::make_unique<SharedLibrary>(h, real);
    if (driver > 0) {
      int made_for = version_of(*opened);
      if (made_for / 1000 > driver / 1000) {  // Note [Loading CUDA libraries]: an older soname may follow
        if (too_new.empty())
          too_new = std::string(library_name(lib)) + " " + real + " is CUDA " + cuda_version_text(made_for);
        tried += "\n  " + path + ": CUDA " + cuda_version_text(made_for) + ", newer than the driver";
        continue;
      }
    }
    return opened;
  }
  if (!too_new.empty())  // one line: what was found, what the driver is, what to do
    throw CudaUnavailable("braze: " + too_new + " but the NVIDIA driver is CUDA " + cuda_version_text(driver) +
                          ", which cannot run what it makes: set " + override_variable(lib) + " to a CUDA " +
                          std::to_string(driver / 1000) + " " + library_name(lib) + ", or update the driver");
  // Without libcuda or NVRTC there is no CUDA at all; without cuBLASLt or
  // cuDNN, only the ops that need them fail.
  const char* what = lib == CudaLibrary::CublasLt ? "cuBLASLt" : lib == CudaLibrary::Cudnn ? "cuDNN" : "CUDA";
  std::string msg = std::string("braze: ") + what + " is not available: " + library_name(lib) +
                    " was not found; tried:" + tried + "\nset " + override_variable(lib) + " to the library's path";
  if (lib == CudaLibrary::Driver) msg += " (libcuda comes with the NVIDIA driver; is one installed?)";
  throw CudaUnavailable(msg, CudaUnavailable::Why::NotFound);
}

}  // namespace braze::cuda
