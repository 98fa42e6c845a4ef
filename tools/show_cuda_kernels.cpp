// `braze kernels --target cuda`: per kernel the CUDA C++ that jit_cuda
// renders for it, or the PTX / cubin NVRTC makes of that source for an
// architecture, with ptxas's register and shared-memory counts, or the
// cubin's SASS where the toolkit's disassembler is installed. Needs NVRTC
// (and for SASS nvdisasm or cuobjdump), never a GPU or a driver: nothing is
// loaded or launched.
#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>

#include "fusion/schedule.h"
#include "graph/check.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/nvrtc_api.h"
#include "jit_cuda/nvrtc_compile.h"
#include "runtime/dump_cuda.h"
#include "tools/commands.h"
#include "tools/node_names.h"
#include "tools/sass.h"

namespace braze::cli {

namespace {

nlohmann::json cuda_kernel(const KernelSpec& spec, const std::string& emit, int arch,
                           const std::optional<CudaDisassembler>& sass_tool) {
  cuda::CudaKernelSource k = cuda::render_cuda(spec);
  nlohmann::json j = {{"key", kernel_key(spec).hex()},
                      {"name", k.name},
                      {"shape", cuda::name(k.launch.shape)},
                      {"threads_per_block", k.launch.threads},
                      {"work", k.launch.work}};
  if (emit == "cuda") {
    j["cuda"] = k.source;
  } else if (emit == "ptx") {
    cuda::CompiledCuda c = cuda::compile_cuda(k.source, k.name, arch, cuda::CudaImage::Ptx);
    j["ptx"] = std::string(reinterpret_cast<const char*>(c.image.data()));
    j["compile_ms"] = c.seconds * 1e3;
  } else {
    cuda::CompiledCuda c = cuda::compile_cuda(k.source, k.name, arch, cuda::CudaImage::Cubin, true);
    cuda::KernelResources r = cuda::parse_resources(c.log, k.name);
    j["cubin_bytes"] = c.image.size();
    j["registers"] = r.registers;  // -1: ptxas did not report the kernel
    j["shared_bytes"] = r.shared_bytes;
    j["stack_bytes"] = r.stack_bytes;
    j["spill_store_bytes"] = r.spill_store_bytes;
    j["spill_load_bytes"] = r.spill_load_bytes;
    j["compile_ms"] = c.seconds * 1e3;
    if (sass_tool) j["sass"] = disassemble_cubin(*sass_tool, c.image);
  }
  return j;
}

// The cubin's facts on one line, after the kernel line.
void print_cubin(const nlohmann::json& j, std::ostream& out) {
  int registers = j["registers"].get<int>();
  out << "// cubin: " << j["cubin_bytes"].get<size_t>() << " bytes, "
      << (registers < 0 ? std::string("registers not reported") : std::to_string(registers) + " registers") << ", "
      << j["shared_bytes"].get<int>() << " bytes shared memory, " << j["stack_bytes"].get<int>()
      << " bytes stack, spills " << j["spill_store_bytes"].get<int>() << "/" << j["spill_load_bytes"].get<int>()
      << " bytes stored/loaded; NVRTC took " << static_cast<int>(j["compile_ms"].get<double>()) << " ms\n";
}

}  // namespace

void show_cuda_kernels(const GraphSource& src, const std::string& emit, const std::string& arch_name,
                       const std::string& format, std::ostream& out) {
  BRAZE_CHECK(format == "text" || format == "json", "kernels: unknown format '", format, "' (text, json)");
  BRAZE_CHECK(emit == "cuda" || emit == "ptx" || emit == "cubin" || emit == "sass", "kernels: unknown --emit '", emit,
              "' (cuda, ptx, cubin, sass)");
  // The architecture is checked even for --emit cuda, so a typo is never
  // silently ignored; that needs NVRTC only when it is given. Without
  // --arch: the GPU's, else sm_90 (Note [CUDA dump texts]).
  int arch = kDefaultCudaArch;
  if (!arch_name.empty()) arch = cuda::parse_arch(arch_name);
  else if (emit != "cuda") arch = default_cuda_arch();
  // A missing disassembler is reported before anything is compiled.
  std::optional<CudaDisassembler> sass_tool;
  if (emit == "sass") sass_tool = require_cuda_disassembler();
  Schedule s = make_schedule(src.graph);
  nlohmann::json all = nlohmann::json::array();
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& st = s.steps[k];
    if (format == "text") out << (k ? "\n" : "") << "=== step " << k << " ===\n";
    std::string library;
    if (st.group.kind == FusedGroup::Kind::Library)
      library = "library call " + node_name(s.graph, st.group.nodes[0]) + " " + to_string(st.group.domain) +
                ": no generated code\n";
    if (format == "text") {
      // The source and the PTX are exactly what BRAZE_DUMP=cuda,ptx writes.
      if (!library.empty()) out << library;
      else if (emit == "cuda") out << cuda_dump_text(st.spec);
      else if (emit == "ptx") out << ptx_dump_text(st.spec, arch);
      else {
        nlohmann::json j = cuda_kernel(st.spec, emit, arch, sass_tool);
        out << cuda_kernel_line(st.spec) << "\n";
        print_cubin(j, out);
        if (j.contains("sass"))
          out << "// SASS for sm_" << arch << ", disassembled by " << sass_tool->path << "\n"
              << j["sass"].get<std::string>();
      }
      continue;
    }
    nlohmann::json j = {{"step", k}};
    if (!library.empty()) j["library"] = library;
    else j.update(cuda_kernel(st.spec, emit, arch, sass_tool));
    all.push_back(std::move(j));
  }
  if (format == "json") {
    nlohmann::json top = {{"target", "cuda"}, {"emit", emit}, {"kernels", all}};
    if (emit != "cuda" || !arch_name.empty()) top["arch"] = "sm_" + std::to_string(arch);
    if (sass_tool) top["disassembler"] = sass_tool->path;
    out << top.dump(1) << "\n";
  }
}

}  // namespace braze::cli
