// Which outputs a program may write over the inputs they alias.
#pragma once

#include <vector>

#include "fusion/schedule.h"

namespace braze {

// Note [In-place outputs]
// assign(w, w - lr * g) writes its result into storage its own program
// reads. Staged (the executor writes such an output aside and copies it at
// the end: run_prepared), that costs a second write and read of every
// element; an Adam step paid it three times per parameter (the parameter
// and both moments). An output is written straight over the input it
// aliases when no step can tell the difference: the kernel that computes it
// is element-wise (a reduction kernel reads a row or column in several
// passes, and what it writes may depend on elements it has not read yet),
// reads that input only at the index it writes (through the dense layout
// of its domain, which is the output's), and no later step reads the
// input. Each element is then read before it is overwritten, by the same
// thread, and never again. Decided once per program, from the schedule:
// per graph output, the graph input nodes it may overwrite. The executor
// writes in place only where an output is exactly the memory of such an
// input (the same address and size), and stages it otherwise. CPU programs
// only: the generated CUDA kernels declare their pointers __restrict__.
std::vector<std::vector<NodeId>> in_place_inputs(const Schedule& s);

}  // namespace braze
