#include "jit_cuda/nvrtc_compile.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "graph/check.h"
#include "jit_cuda/cuda_error.h"
#include "jit_cuda/embedded_headers.h"
#include "jit_cuda/nvrtc_api.h"

namespace braze::cuda {

namespace {

// Destroys the program on every path out of compile_cuda.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtc().nvrtcDestroyProgram(&p);
  }
};

std::string program_log(nvrtcProgram p, const std::string& what) {
  size_t n = 0;
  BRAZE_NVRTC(nvrtcGetProgramLogSize, (p, &n), "reading the NVRTC log of " + what);
  std::string log(n, '\0');
  if (n) BRAZE_NVRTC(nvrtcGetProgramLog, (p, log.data()), "reading the NVRTC log of " + what);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

int parse_arch(const std::string& arch) {
  std::string digits = arch.rfind("sm_", 0) == 0 ? arch.substr(3) : arch;
  BRAZE_CHECK(!digits.empty() && digits.size() <= 3 && std::all_of(digits.begin(), digits.end(), ::isdigit),
              "bad CUDA architecture '", arch, "': expected sm_80, sm_90, ...");
  int sm = std::stoi(digits);
  BRAZE_CHECK(sm >= 80, "CUDA architecture ", arch, " is not supported: braze's kernels need sm_80 or later");
  const NvrtcApi& api = nvrtc();
  int n = 0;
  BRAZE_NVRTC(nvrtcGetNumSupportedArchs, (&n), "listing NVRTC's architectures");
  std::vector<int> archs(n);
  BRAZE_NVRTC(nvrtcGetSupportedArchs, (archs.data()), "listing NVRTC's architectures");
  std::string known;
  for (int a : archs) known += " sm_" + std::to_string(a);
  BRAZE_CHECK(std::find(archs.begin(), archs.end(), sm) != archs.end(), "NVRTC ", api.version(),
              " cannot compile for ", arch, "; it knows", known);
  return sm;
}

std::vector<std::string> nvrtc_options(int arch, CudaImage image) {
  std::string target = image == CudaImage::Cubin ? "sm_" : "compute_";
  // No fast math: the CPU's accuracy bounds hold (exact division, IEEE sqrt).
  return {"--gpu-architecture=" + target + std::to_string(arch), "--std=c++17", "--device-as-default-execution-space"};
}

CompiledCuda compile_cuda(const std::string& source, const std::string& what, int arch, CudaImage image,
                          bool resource_usage) {
  const NvrtcApi& api = nvrtc();
  std::vector<const char*> names, texts;
  for (const EmbeddedHeader& h : device_headers()) names.push_back(h.include_name), texts.push_back(h.text);
  Program prog;
  BRAZE_NVRTC(nvrtcCreateProgram,
              (&prog.p, source.c_str(), (what + ".cu").c_str(), static_cast<int>(names.size()), texts.data(),
               names.data()),
              "creating the NVRTC program of " + what);
  std::vector<std::string> opts = nvrtc_options(arch, image);
  if (resource_usage && image == CudaImage::Cubin) opts.push_back("--ptxas-options=--verbose");
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());

  CompiledCuda out;
  auto t0 = std::chrono::steady_clock::now();
  nvrtcResult r = api.nvrtcCompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.log = program_log(prog.p, what);
  if (r != NVRTC_SUCCESS) {
    const char* name = api.nvrtcGetErrorString(r);
    throw CudaError("libnvrtc", "nvrtcCompileProgram", static_cast<int>(r), name ? name : "?", out.log,
                    "compiling " + what + " for sm_" + std::to_string(arch));
  }
  size_t n = 0;
  if (image == CudaImage::Cubin) {
    BRAZE_NVRTC(nvrtcGetCUBINSize, (prog.p, &n), "reading the cubin of " + what);
    out.image.resize(n);
    BRAZE_NVRTC(nvrtcGetCUBIN, (prog.p, reinterpret_cast<char*>(out.image.data())), "reading the cubin of " + what);
  } else {
    BRAZE_NVRTC(nvrtcGetPTXSize, (prog.p, &n), "reading the PTX of " + what);
    out.image.resize(n);
    BRAZE_NVRTC(nvrtcGetPTX, (prog.p, reinterpret_cast<char*>(out.image.data())), "reading the PTX of " + what);
  }
  return out;
}

}  // namespace braze::cuda

namespace braze::cuda {

namespace {

// The number just before `unit` in `line` ("256 bytes smem" -> 256), or -1.
int number_before(const std::string& line, const std::string& unit) {
  size_t at = line.find(unit);
  if (at == std::string::npos || at < 2) return -1;
  size_t end = at - 1, begin = end;  // line[end] is the space before the unit
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  return begin == end ? -1 : std::stoi(line.substr(begin, end - begin));
}

}  // namespace

KernelResources parse_resources(const std::string& log, const std::string& name) {
  KernelResources r;
  bool in_kernel = false;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? log.size() : nl + 1;
    if (line.find("Compiling entry function") != std::string::npos)
      in_kernel = line.find("'" + name + "'") != std::string::npos;
    if (!in_kernel) continue;
    if (int n = number_before(line, "bytes stack frame"); n >= 0) r.stack_bytes = n;
    if (int n = number_before(line, "bytes spill stores"); n >= 0) r.spill_store_bytes = n;
    if (int n = number_before(line, "bytes spill loads"); n >= 0) r.spill_load_bytes = n;
    if (int n = number_before(line, "registers"); n >= 0) r.registers = n;
    if (int n = number_before(line, "bytes smem"); n >= 0) r.shared_bytes = n;
  }
  return r;
}

}  // namespace braze::cuda
