#include "jit_cpu/isa.h"

#include <xbyak/xbyak_util.h>

#include <cstdlib>
#include <string>

#include "graph/check.h"

namespace braze::jit {

std::string_view name(Isa isa) { return isa == Isa::Avx512 ? "avx512" : "avx2"; }

bool cpu_supports(Isa isa) {
  static const Xbyak::util::Cpu cpu;
  using C = Xbyak::util::Cpu;
  bool avx2 = cpu.has(C::tAVX2) && cpu.has(C::tFMA) && cpu.has(C::tF16C);
  if (isa == Isa::Avx2) return avx2;
  return avx2 && cpu.has(C::tAVX512F) && cpu.has(C::tAVX512BW) && cpu.has(C::tAVX512DQ) && cpu.has(C::tAVX512VL);
}

Isa host_isa() {
  const char* env = std::getenv("BRAZE_CPU_ISA");
  std::string v = env ? env : "";
  if (v.empty()) {
    if (cpu_supports(Isa::Avx512)) return Isa::Avx512;
    BRAZE_CHECK(cpu_supports(Isa::Avx2), "braze's CPU backend needs AVX2, FMA and F16C; this CPU lacks them");
    return Isa::Avx2;
  }
  BRAZE_CHECK(v == "avx512" || v == "avx2", "BRAZE_CPU_ISA='", v, "' is not an ISA; expected 'avx512' or 'avx2'");
  Isa isa = v == "avx512" ? Isa::Avx512 : Isa::Avx2;
  BRAZE_CHECK(cpu_supports(isa), "BRAZE_CPU_ISA=", v, " but this CPU does not support it");
  return isa;
}

}  // namespace braze::jit
