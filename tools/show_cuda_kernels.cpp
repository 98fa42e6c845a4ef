// `braze kernels --target cuda`: per kernel the CUDA C++ that jit_cuda
// renders for it, or the PTX / cubin NVRTC makes of that source for an
// architecture, with ptxas's register and shared-memory counts. Needs
// NVRTC, never a GPU or a driver: nothing is loaded or launched.
#include <nlohmann/json.hpp>

#include <ostream>

#include "fusion/schedule.h"
#include "graph/check.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/nvrtc_api.h"
#include "jit_cuda/nvrtc_compile.h"
#include "tools/commands.h"
#include "tools/node_names.h"

namespace braze::cli {

namespace {

nlohmann::json cuda_kernel(const KernelSpec& spec, const std::string& emit, int arch) {
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
    j["registers"] = r.registers;
    j["shared_bytes"] = r.shared_bytes;
    j["stack_bytes"] = r.stack_bytes;
    j["spill_store_bytes"] = r.spill_store_bytes;
    j["spill_load_bytes"] = r.spill_load_bytes;
    j["compile_ms"] = c.seconds * 1e3;
  }
  return j;
}

void print_text(const nlohmann::json& j, std::ostream& out) {
  out << "kernel " << j["name"].get<std::string>() << ": " << j["shape"].get<std::string>() << ", "
      << j["threads_per_block"].get<int>() << " threads per block, " << j["work"].get<int64_t>()
      << (j["shape"] == "block per row" ? " row(s)" : " work item(s)") << "\n";
  if (j.contains("cuda")) {
    out << j["cuda"].get<std::string>();
  } else if (j.contains("ptx")) {
    out << j["ptx"].get<std::string>();
  } else {
    out << "cubin: " << j["cubin_bytes"].get<size_t>() << " bytes, " << j["registers"].get<int>() << " registers, "
        << j["shared_bytes"].get<int>() << " bytes shared memory, " << j["stack_bytes"].get<int>()
        << " bytes stack, spills " << j["spill_store_bytes"].get<int>() << "/" << j["spill_load_bytes"].get<int>()
        << " bytes stored/loaded; NVRTC took " << static_cast<int>(j["compile_ms"].get<double>()) << " ms\n";
  }
}

}  // namespace

void show_cuda_kernels(const GraphSource& src, const std::string& emit, const std::string& arch_name,
                       const std::string& format, std::ostream& out) {
  BRAZE_CHECK(format == "text" || format == "json", "kernels: unknown format '", format, "' (text, json)");
  BRAZE_CHECK(emit == "cuda" || emit == "ptx" || emit == "cubin", "kernels: unknown --emit '", emit,
              "' (cuda, ptx, cubin)");
  // The architecture is checked even for --emit cuda, so a typo is never
  // silently ignored; that needs NVRTC only when it is given.
  int arch = 90;
  if (!arch_name.empty() || emit != "cuda") arch = cuda::parse_arch(arch_name.empty() ? "sm_90" : arch_name);
  Schedule s = make_schedule(src.graph);
  nlohmann::json all = nlohmann::json::array();
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& st = s.steps[k];
    nlohmann::json j = {{"step", k}};
    if (st.group.kind == FusedGroup::Kind::Library)
      j["library"] = "library call " + node_name(s.graph, st.group.nodes[0]) + " " + to_string(st.group.domain) +
                     ": no generated code\n";
    else
      j.update(cuda_kernel(st.spec, emit, arch));
    if (format == "json") {
      all.push_back(std::move(j));
      continue;
    }
    out << (k ? "\n" : "") << "=== step " << k << " ===\n";
    if (j.contains("library")) out << j["library"].get<std::string>();
    else print_text(j, out);
  }
  if (format == "json") {
    nlohmann::json top = {{"target", "cuda"}, {"emit", emit}, {"kernels", all}};
    if (emit != "cuda" || !arch_name.empty()) top["arch"] = "sm_" + std::to_string(arch);
    out << top.dump(1) << "\n";
  }
}

}  // namespace braze::cli
