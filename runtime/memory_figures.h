// What braze's bounded caches hold now against their bounds (Note
// [Bounded caches] in runtime/program.h): `braze doctor`'s memory section
// and bz._core._memory() (tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braze {

struct CacheFigures {
  std::string cache;     // "programs", "cpu_kernels", "onednn_primitives", "idle_arenas"
  std::string variable;  // the environment variable that bounds it
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t limit = 0;
};

// One row per bounded cache of this process, in that order. Reading them
// makes the runtime context, so a bad bound in the environment throws
// here, naming the variable.
std::vector<CacheFigures> memory_figures();

}  // namespace braze
