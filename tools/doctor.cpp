// `braze doctor`: what this machine offers braze. The CUDA libraries and
// devices come from doctor_cuda.cpp where jit_cuda is built. The libraries are
// looked for the way the CUDA backend will load them (dlopen, never linked:
// DESIGN.md section 5), so the answer is the one braze itself would get.
#include <dlfcn.h>
#include <link.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <ostream>

#include "jit_cpu/disassemble.h"
#include "jit_cpu/dnn.h"
#include "jit_cpu/kernel_cache.h"
#include "jit_cpu/thread_pool.h"
#include "runtime/context.h"
#include "runtime/disk_cache.h"
#include "runtime/memory_figures.h"
#include "tools/commands.h"
#include "tools/sass.h"
#if BRAZE_HAVE_CUDA_BACKEND
#include "tools/doctor_cuda.h"
#endif

namespace braze::cli {

namespace {

#if !BRAZE_HAVE_CUDA_BACKEND
// Without jit_cuda: the libraries found by dlopen of their sonames.
struct Library {
  std::string what;
  std::vector<std::string> sonames;  // tried in order: the versioned names a runtime install has first
};

// A library found: its path and version, or why not.
nlohmann::json probe(const Library& lib) {
  for (const std::string& so : lib.sonames) {
    void* h = dlopen(so.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!h) continue;
    nlohmann::json j = {{"library", lib.what}, {"found", true}, {"soname", so}};
    link_map* map = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) j["path"] = map->l_name;
    if (lib.what == "libnvrtc") {
      using Fn = int (*)(int*, int*);
      int major = 0, minor = 0;
      if (auto f = reinterpret_cast<Fn>(dlsym(h, "nvrtcVersion")); f && f(&major, &minor) == 0)
        j["version"] = std::to_string(major) + "." + std::to_string(minor);
    } else if (lib.what == "libcuda") {
      using Fn = int (*)(int*);
      int v = 0;
      if (auto f = reinterpret_cast<Fn>(dlsym(h, "cuDriverGetVersion")); f && f(&v) == 0)
        j["version"] = std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    } else if (lib.what == "libcublas") {
      using Fn = int (*)(int, int*);  // cublasGetProperty(MAJOR_VERSION=0 / MINOR_VERSION=1 / PATCH_LEVEL=2)
      int major = 0, minor = 0;
      if (auto f = reinterpret_cast<Fn>(dlsym(h, "cublasGetProperty")); f && f(0, &major) == 0 && f(1, &minor) == 0)
        j["version"] = std::to_string(major) + "." + std::to_string(minor);
    }
    dlclose(h);
    return j;
  }
  return {{"library", lib.what}, {"found", false}, {"tried", lib.sonames}};
}

const std::vector<Library>& cuda_libraries() {
  static const std::vector<Library> libs = {
      {"libcuda", {"libcuda.so.1", "libcuda.so"}},
      {"libnvrtc", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}},
      {"libcublas", {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}},
  };
  return libs;
}
#endif

// The disk cache as DiskCache sees it (runtime/disk_cache.h): a refused or
// unusable directory says why, as `braze cache` does.
nlohmann::json cache_facts() {
  DiskCache disk(DiskCache::default_dir());
  bool usable = disk.check();
  DiskCache::Usage u = disk.usage();
  std::error_code ec;
  return {{"directory", disk.dir().string()},
          {"memory_kernels", jit::KernelCache::get().size()},
          {"exists", std::filesystem::is_directory(disk.dir(), ec)},
          {"entries", u.entries},
          {"temporaries", u.temporaries},
          {"bytes", u.bytes},
          {"not_used_because", usable ? nlohmann::json(nullptr) : nlohmann::json(disk.disabled_reason())}};
}

// Note [Bounded caches] (runtime/program.h): each cache's bound, where it
// comes from, and what this process holds (nothing yet, in a fresh one).
nlohmann::json memory_facts() {
  nlohmann::json rows = nlohmann::json::array();
  for (const CacheFigures& c : memory_figures())
    rows.push_back(
        {{"cache", c.cache}, {"variable", c.variable}, {"entries", c.entries}, {"bytes", c.bytes}, {"limit", c.limit}});
  return rows;
}

nlohmann::json facts() {
  nlohmann::json cpu = {{"avx2", jit::cpu_supports(jit::Isa::Avx2)}, {"avx512", jit::cpu_supports(jit::Isa::Avx512)},
                        {"threads", jit::ThreadPool::get().size()}};
  try {
    cpu["isa"] = name(jit::host_isa());
  } catch (const std::exception& e) {
    cpu["isa"] = nullptr;
    cpu["isa_error"] = e.what();
  }
#if BRAZE_HAVE_CUDA_BACKEND
  nlohmann::json cuda = cuda_library_facts();
  nlohmann::json devices = cuda_device_facts();
#else
  // No CUDA backend in this build: still say what the machine has.
  nlohmann::json cuda = nlohmann::json::array();
  for (const Library& lib : cuda_libraries()) cuda.push_back(probe(lib));
  nlohmann::json devices = {{"devices", nlohmann::json::array()},
                             {"none_because", "this braze has no CUDA backend (no CUDA headers at build time)"}};
#endif
  std::string tool = jit::disassembler();
  std::optional<CudaDisassembler> sass = find_cuda_disassembler();
  return {{"cpu", cpu},
          {"disassembler", tool.empty() ? nlohmann::json(nullptr) : nlohmann::json(tool)},
          {"library_calls",
           {{"onednn", dnn::available()},
            {"library", dnn::version()},
            {"isa", dnn::available() ? nlohmann::json(dnn::isa()) : nlohmann::json(nullptr)},
            {"bfloat16", dnn::runs_bfloat16()},
            {"int8", dnn::sums_int8_exactly()},
            {"float64_blas", dnn::blas().empty() ? nlohmann::json(nullptr) : nlohmann::json(dnn::blas())}}},
          {"cuda_backend", BRAZE_HAVE_CUDA_BACKEND != 0},
          {"cuda", cuda},
          {"cuda_driver_version", devices.value("driver_version", nlohmann::json(nullptr))},
          {"cuda_devices", devices["devices"]},
          {"cuda_devices_none_because", devices.value("none_because", nlohmann::json(nullptr))},
          {"cuda_disassembler", sass ? nlohmann::json(sass->path) : nlohmann::json(nullptr)},
          {"cache", cache_facts()},
          {"memory", memory_facts()}};
}

std::string yes(bool b) { return b ? "yes" : "no"; }

}  // namespace

void doctor(const std::string& format, std::ostream& out) {
  nlohmann::json f = facts();
  if (format == "json") {
    out << f.dump(1) << "\n";
    return;
  }
  const nlohmann::json& cpu = f["cpu"];
  out << "cpu: generated code targets "
      << (cpu["isa"].is_null() ? "nothing (" + cpu["isa_error"].get<std::string>() + ")" : cpu["isa"].get<std::string>())
      << "; avx2 " << yes(cpu["avx2"]) << ", avx512 " << yes(cpu["avx512"]) << "; " << cpu["threads"].get<int>()
      << " thread(s)\n";
  out << "disassembler: "
      << (f["disassembler"].is_null() ? "none (built without Zydis: asm dumps list code bytes)"
                                      : f["disassembler"].get<std::string>())
      << "\n";
  const nlohmann::json& lib = f["library_calls"];
  out << "matmul/conv2d on the cpu: " << lib["library"].get<std::string>();
  if (lib["onednn"])
    out << ", its kernels for " << lib["isa"].get<std::string>() << "; bfloat16 "
        << (lib["bfloat16"] ? "through it" : "on the reference interpreter (oneDNN 2.6 needs AVX-512)")
        << "; int8 into int32 " << (lib["int8"] ? "through it" : "on the reference interpreter (exact sums need VNNI)");
  out << "; float64 matmul "
      << (lib["float64_blas"].is_null() ? "on the reference interpreter (built without OpenBLAS)"
                                        : "through " + lib["float64_blas"].get<std::string>());
  out << "\n";
  for (const nlohmann::json& lib : f["cuda"]) {
    out << lib["library"].get<std::string>() << ": ";
    if (!lib["found"]) {
      out << "not found" << (lib.contains("override") ? " (set " + lib["override"].get<std::string>() + ")" : "")
          << "\n";
      continue;
    }
    out << "found " << lib.value("path", lib.value("soname", ""));
    if (lib.contains("version")) out << " (version " << lib["version"].get<std::string>() << ")";
    if (lib.contains("error")) out << "; " << lib["error"].get<std::string>();
    out << "\n";
  }
  if (!f["cuda_backend"]) out << "cuda backend: not built (no CUDA headers at build time)\n";
  if (f["cuda_devices"].empty()) {
    out << "cuda devices: none: " << f["cuda_devices_none_because"].get<std::string>() << "\n";
  } else {
    out << "cuda devices: " << f["cuda_devices"].size() << " (driver API "
        << f["cuda_driver_version"].get<std::string>() << ")\n";
    for (const nlohmann::json& d : f["cuda_devices"])
      out << "  cuda:" << d["index"].get<int>() << ": " << d["name"].get<std::string>() << ", "
          << d["arch"].get<std::string>() << " (compute capability " << d["compute_capability"].get<std::string>()
          << "), " << std::fixed << std::setprecision(1) << d["memory_bytes"].get<double>() / (1 << 30) << " GiB, "
          << d["multiprocessors"].get<int>() << " multiprocessors"
          << (d["braze_can_target"].get<bool>() ? "" : "; braze's kernels need sm_80 or later") << "\n";
  }
  out << "cuda disassembler (--emit sass): "
      << (f["cuda_disassembler"].is_null() ? "none (nvdisasm or cuobjdump: not in $PATH, $CUDA_HOME/bin, "
                                             "$CUDA_PATH/bin or /usr/local/cuda*/bin)"
                                           : f["cuda_disassembler"].get<std::string>())
      << "\n";
  const nlohmann::json& c = f["cache"];
  out << "cache: " << c["memory_kernels"].get<size_t>() << " kernel(s) in memory; disk cache "
      << c["directory"].get<std::string>();
  if (!c["not_used_because"].is_null())
    out << ": not used: " << c["not_used_because"].get<std::string>() << "; compiled kernels are not kept\n";
  else if (c["exists"])
    out << ": " << c["entries"].get<int64_t>() << " entr" << (c["entries"] == 1 ? "y" : "ies") << ", "
        << c["bytes"].get<int64_t>() << " bytes\n";
  else
    out << " (not created yet)\n";
  out << "memory (each cache drops its least recently used entries past its bound):\n";
  for (const nlohmann::json& m : f["memory"])
    out << "  " << m["cache"].get<std::string>() << ": " << m["entries"].get<int64_t>() << " kept, "
        << std::fixed << std::setprecision(1) << m["bytes"].get<double>() / (1 << 20) << " of "
        << m["limit"].get<double>() / (1 << 20) << " MB (" << m["variable"].get<std::string>() << ")\n";
}

}  // namespace braze::cli
