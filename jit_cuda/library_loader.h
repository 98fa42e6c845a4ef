// Finding and opening the CUDA libraries at run time (dlopen), so that one
// braze build runs on machines with and without CUDA (DESIGN.md section 5).
#pragma once

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit_cuda/cuda_error.h"

namespace braze::cuda {

// Note [Loading CUDA libraries]
// braze never links libcuda, libnvrtc, cuBLAS(Lt) or cuDNN: it dlopens them
// the first time they are needed (a test, jit_cuda_no_link_deps, checks the
// NEEDED entries of every braze binary). Each library is looked for in order:
//   1. the path in its override variable (BRAZE_LIBCUDA, BRAZE_LIBNVRTC,
//      BRAZE_LIBCUBLASLT, BRAZE_LIBCUDNN), and only there when it is set, so
//      a wrong override is an error, not a silent fallback;
//   2. its versioned sonames through the dynamic loader's own search
//      (LD_LIBRARY_PATH, the ld.so cache), newest first;
//   3. the same names in the lib folders of NVIDIA's pip wheels
//      (site-packages/nvidia/*/lib: nvidia/cudnn/lib/libcudnn.so.9,
//      nvidia/cu13/lib/libnvrtc.so.13, ...), which PyTorch, JAX and CuPy
//      install and no loader path names. The site-packages folders are
//      those of the Python modules this process has mapped (braze's own
//      module among them, so a Python process that imported braze finds
//      its environment's wheels); a process that is not Python finds none;
//   4. the same names under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
//      /usr/local/cuda/lib64 (a toolkit installed but not registered).
// libcuda is the driver's library and only ever comes from 1 or 2: a copy
// in a toolkit directory is a stub that cannot run anything.
// NVRTC, cuBLASLt and cuDNN must not be newer than the driver: a CUDA 12
// driver cannot load what a CUDA 13 NVRTC compiles, nor run CUDA 13's
// cuBLASLt. Where the driver loads, a candidate made for a newer CUDA major
// version (asked of the library: nvrtcVersion, cublasLtGetCudartVersion,
// cudnnGetCudartVersion) is passed over for an older soname; when no
// candidate fits, the error is one line naming both versions. Where there
// is no driver, any version loads (compiling kernels needs no GPU).
// When nothing is found, CudaUnavailable lists every place tried with the
// loader's reason, and names the variable to set.
// A library, once opened, stays loaded until the process ends
// (RTLD_NODELETE): unloading NVRTC or cuBLASLt at exit bought nothing and
// dropped the blocks their own static copies of libstdc++ keep for the
// process's life, which LeakSanitizer then reported as leaks from an unknown
// module (34 C++ tests under scripts/sanitize.sh address).
enum class CudaLibrary { Driver, Nvrtc, CublasLt, Cudnn };
inline constexpr CudaLibrary kAllCudaLibraries[] = {CudaLibrary::Driver, CudaLibrary::Nvrtc, CudaLibrary::CublasLt,
                                                    CudaLibrary::Cudnn};

const char* library_name(CudaLibrary lib);  // "libcuda", "libnvrtc", "libcublasLt", "libcudnn"
const char* override_variable(CudaLibrary lib);  // "BRAZE_LIBCUDA", ...

// Where a library would be looked for, in order (the override alone if set).
std::vector<std::string> candidate_paths(CudaLibrary lib);

// The site-packages (or dist-packages) folders of the files this process
// has mapped, and the lib folders of NVIDIA wheels in them
// (site-packages/nvidia/*/lib), each once, in a fixed order.
std::vector<std::string> python_site_dirs();
std::vector<std::string> wheel_library_dirs();

// The CUDA version of the driver (cuDriverGetVersion: 12080 is 12.8), or 0
// where there is no libcuda. Needs no GPU (no cuInit). driver_api.cpp.
int driver_cuda_version();

// "13.0" for 13000.
std::string cuda_version_text(int version);

// An open library; dlclose on destruction (it stays loaded: see above).
class SharedLibrary {
 public:
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The symbol's address, or null.
  void* symbol(const char* name) const;
  const std::string& path() const { return path_; }  // the file the loader opened

 private:
  void* handle_;
  std::string path_;
};

// The CUDA version an open library was made for (13000), or 0 when it
// cannot say.
using CudaVersionOf = int (*)(const SharedLibrary&);

// Opens the library or throws CudaUnavailable saying what was tried. With
// `version_of`, a candidate newer than the driver (driver_cuda_version())
// is passed over (Note [Loading CUDA libraries]).
std::unique_ptr<SharedLibrary> open_library(CudaLibrary lib, CudaVersionOf version_of = nullptr);

// A table of entry points and the library they came from.
template <class Api>
struct LoadedApi {
  std::unique_ptr<SharedLibrary> library;
  Api api;
};

// The table `load` makes, made on first use, once per process and Api
// type (thread-safe). A failure (CudaUnavailable, saying what was not
// found) is kept and rethrown by every later call, so each call says the
// same thing and nothing is retried half-loaded.
// The table is never destroyed (nor its library closed): programs cached
// by the runtime release their descriptors and device memory through it
// from static destructors, which may run after this function's statics
// would have been destroyed (Note [Tables live until exit] in driver_api.cpp).
template <class Api>
const Api& load_once(LoadedApi<Api> (*load)()) {
  static std::once_flag once;
  static auto* loaded = new LoadedApi<Api>;
  static std::exception_ptr failure;
  std::call_once(once, [&] {
    try {
      *loaded = load();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
  return loaded->api;
}

// Looks `name` up in `lib` (dlsym) into `fn`; adds " name" to `missing`
// when the library lacks it.
template <class Fn>
void resolve(const SharedLibrary& lib, const char* name, Fn& fn, std::string& missing) {
  if (void* p = lib.symbol(name)) fn = reinterpret_cast<Fn>(p);
  else missing += std::string(" ") + name;
}

// Opens `lib` and fills a table: `resolve_all` resolve()s each entry
// point into it. Throws CudaUnavailable naming the entry points the
// library lacks, then `hint` (which version is needed, which variable to set).
template <class Api>
LoadedApi<Api> load_api(CudaLibrary lib, void (*resolve_all)(const SharedLibrary&, Api&, std::string& missing),
                        const std::string& hint, CudaVersionOf version_of = nullptr) {
  LoadedApi<Api> l{open_library(lib, version_of), {}};
  l.api.path = l.library->path();
  std::string missing;
  resolve_all(*l.library, l.api, missing);
  if (!missing.empty())
    throw CudaUnavailable(std::string("braze: ") + library_name(lib) + " is not usable: " + l.api.path + " lacks" +
                          missing + " " + hint);
  return l;
}

// Whether `get` (nvrtc, cublaslt, cudnn) loads its library here: what
// decides if a test that needs it runs or skips.
template <class Api>
bool loads(const Api& (*get)()) {
  try {
    get();
    return true;
  } catch (const CudaUnavailable&) {
    return false;
  }
}


}  // namespace braze::cuda
