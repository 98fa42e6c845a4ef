// `braze kernels --target cpu`: per kernel the text BRAZE_DUMP=fused,asm
// would write (runtime/dump.h), made from the same kernel cache the runtime
// uses, so what is shown is what would run. Any ISA can be shown on any
// x86-64 host: xbyak emits AVX-512 code without running it.
#include <nlohmann/json.hpp>

#include <ostream>

#include "fusion/schedule.h"
#include "graph/check.h"
#include "jit_cpu/kernel_cache.h"
#include "runtime/dump.h"
#include "runtime/lower.h"
#include "tools/commands.h"
#include "tools/node_names.h"

namespace braze::cli {

namespace {

jit::Isa parse_isa(const std::string& isa) {
  if (isa.empty()) return jit::host_isa();
  BRAZE_CHECK(isa == "avx2" || isa == "avx512", "kernels: unknown ISA '", isa, "' (avx2, avx512)");
  return isa == "avx2" ? jit::Isa::Avx2 : jit::Isa::Avx512;
}

std::string library_text(const Schedule& s, const Step& st) {
  return "library call " + node_name(s.graph, st.group.nodes[0]) + " " + to_string(st.group.domain) +
         ": no generated code\n";
}

}  // namespace

void show_kernels(const GraphSource& src, const std::string& isa_name, const std::string& format,
                  std::ostream& out) {
  BRAZE_CHECK(format == "text" || format == "json", "kernels: unknown format '", format, "' (text, json)");
  jit::Isa isa = parse_isa(isa_name);
  // The kernels realize runs: its numbers are parameters (Note [Scalar parameters]).
  Schedule s = realize_schedule(src.graph);
  nlohmann::json all = nlohmann::json::array();
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& st = s.steps[k];
    nlohmann::json j = {{"step", k}};
    if (st.group.kind == FusedGroup::Kind::Library) {
      j["library"] = library_text(s, st);
    } else {
      jit::Lookup found = jit::KernelCache::get().find_or_compile(st.spec, isa);
      j["key"] = kernel_key(st.spec).hex();
      j["generated"] = found.kernel != nullptr;
      j["fused"] = fused_text(s, st, found, isa);
      j["asm"] = asm_text(kernel_key(st.spec), found, isa);
    }
    if (format == "json") {
      all.push_back(std::move(j));
      continue;
    }
    out << (k ? "\n" : "") << "=== step " << k << " ===\n";
    if (j.contains("library")) out << j["library"].get<std::string>();
    else out << j["fused"].get<std::string>() << "\n" << j["asm"].get<std::string>();
  }
  if (format == "json") out << nlohmann::json{{"isa", name(isa)}, {"kernels", all}}.dump(1) << "\n";
}

}  // namespace braze::cli
