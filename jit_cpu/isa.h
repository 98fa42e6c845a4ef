// Which x86-64 vector ISA the CPU JIT targets.
#pragma once

#include <string_view>

namespace braze::jit {

enum class Isa { Avx2, Avx512 };

std::string_view name(Isa isa);
bool cpu_supports(Isa isa);
// The best ISA this CPU has, or the one BRAZE_CPU_ISA names ("avx512",
// "avx2"), so both code paths are tested on one machine. Throws if the
// variable names an unknown ISA or one the CPU lacks.
Isa host_isa();

}  // namespace braze::jit
