#include "jit_cuda/emulated_kernels.h"

#include <dlfcn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "graph/check.h"
#include "jit_cuda/embedded_headers.h"

namespace braze::cuda {

namespace fs = std::filesystem;

namespace {

void write_headers(const fs::path& dir, std::span<const EmbeddedHeader> headers) {
  for (const EmbeddedHeader& h : headers) {
    fs::create_directories((dir / h.include_name).parent_path());
    std::ofstream(dir / h.include_name) << h.text;
  }
}

// A directory of our own (mkdtemp): two processes, or two compiles in one
// process, never write the same files.
fs::path make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "braze_emulate_XXXXXX").string();
  BRAZE_CHECK(::mkdtemp(pattern.data()) != nullptr, "host emulation: cannot create a directory like ", pattern);
  return pattern;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Removes the build directory however the constructor leaves.
struct RemoveOnExit {
  fs::path dir;
  ~RemoveOnExit() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

std::string host_compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

EmulatedKernels::EmulatedKernels(std::span<const CudaKernelSource> kernels) {
  RemoveOnExit tmp{make_temp_dir()};
  const fs::path& dir = tmp.dir;
  write_headers(dir, device_headers());
  write_headers(dir, emulation_headers());
  {
    std::ofstream src(dir / "kernels.cpp");
    for (const CudaKernelSource& k : kernels) {
      src << k.source << "\nextern \"C\" void " << k.name << "_host(void* const* p) { " << k.name << "(";
      for (size_t i = 0; i < k.param_types.size(); ++i)
        src << (i ? ", " : "") << "*static_cast<" << k.param_types[i] << "*>(p[" << i << "])";
      src << "); }\n";
    }
  }
  // -O1: most of the time is the compiler's front end; -O2 buys little for
  // code that exists to be checked, not timed.
  std::string cxx = host_compiler();
  std::string cmd = cxx + " -std=c++20 -O1 -shared -fPIC -w -I" + dir.string() + " -include " +
                    (dir / "braze/host_emulation.h").string() + " " + (dir / "kernels.cpp").string() + " -o " +
                    (dir / "kernels.so").string() + " >" + (dir / "log.txt").string() + " 2>&1";
  int status = std::system(cmd.c_str());
  int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127)
    throw std::runtime_error("host emulation of CUDA (BRAZE_CUDA=emulate) needs a C++ compiler, and '" + cxx +
                             "' was not found; install one or point $CXX at it");
  if (code != 0)
    throw std::runtime_error("host emulation: compiling " + std::to_string(kernels.size()) +
                             " kernel(s) failed (exit " + std::to_string(code) + "): " + cmd + "\n" +
                             read_file(dir / "log.txt").substr(0, 20000));
  handle_ = ::dlopen((dir / "kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error(std::string("host emulation: cannot load the compiled kernels: ") + ::dlerror());
  launch_ = reinterpret_cast<decltype(launch_)>(::dlsym(handle_, "bz_emu_launch"));
  BRAZE_ASSERT(launch_, "host emulation: bz_emu_launch missing from the compiled kernels");
}

EmulatedKernels::~EmulatedKernels() {
  if (handle_) ::dlclose(handle_);
}

EmulatedKernels::Entry EmulatedKernels::entry(const std::string& kernel_name) const {
  auto e = reinterpret_cast<Entry>(::dlsym(handle_, (kernel_name + "_host").c_str()));
  BRAZE_ASSERT(e, "host emulation: kernel ", kernel_name, " missing from its compiled object");
  return e;
}

void EmulatedKernels::launch(Entry entry, void* const* params, unsigned grid, unsigned block) const {
  launch_(entry, params, grid, block);
}

}  // namespace braze::cuda
