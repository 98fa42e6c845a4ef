// What the oneDNN braze is built with runs on this machine: its version,
// its instruction set, and whether bfloat16 calls run through it (`braze
// doctor`, the tests, Note [oneDNN primitives]).
#include <oneapi/dnnl/dnnl.hpp>

#include "jit_cpu/dnn.h"

namespace braze::dnn {

bool available() { return true; }

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (cpu runtime " + (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other") + ")";
}

std::string isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::all: return "all";
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  }
  return "unknown";
}

bool sums_int8_exactly() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx2_vnni:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx: return true;
    default: return false;
  }
}

bool runs_bfloat16() {
  // Asked of oneDNN itself rather than read from cpuid: it is what decides,
  // and DNNL_MAX_CPU_ISA may hold it below what the CPU has.
  static const bool runs = [] {
    using dnnl::memory;
    memory::desc md({1, 1}, memory::data_type::bf16, memory::format_tag::ab);
    try {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(md, md, md), dnnl::engine(dnnl::engine::kind::cpu, 0));
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return runs;
}

}  // namespace braze::dnn
