// Runs a schedule on the CPU: kernel steps, then library calls, in order.
#pragma once

#include <span>
#include <vector>

#include "fusion/schedule.h"
#include "graph/array.h"

namespace braze {

// How kernel steps run: generated machine code (what realize uses; a spec
// the generator cannot emit falls back to the interpreter), or the spec
// interpreter only (bit-identical to the reference: for testing fusion).
enum class KernelMode { Generated, Interpreted };

// `inputs` bound by input number; returns one dense array per graph output.
// Counts kernels_launched. `step_ns`, when given, receives each step's wall
// time in nanoseconds, in schedule order (what `braze run` prints).
std::vector<Array> execute(const Schedule& s, std::span<const Array> inputs, const ArrayAllocator& allocate,
                           KernelMode mode = KernelMode::Generated, std::vector<int64_t>* step_ns = nullptr);

}  // namespace braze
