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

// Where the schedule's intermediate buffers live.
struct MemoryOptions {
  // Off: each intermediate is its own allocation. On: one arena, placed by
  // memplan/ and verified, holds them all; it is one allocation (counted
  // in allocations, bytes_allocated and arena_bytes). Graph outputs are
  // allocated on their own either way: the user keeps them.
  bool arena = false;
  // With the arena: every arena byte is set to 0xFF (a NaN in every float
  // dtype, -1 in every signed int) before the first step and each buffer's
  // bytes again after its last read, so that a planner bug shows up as a
  // wrong answer instead of a stale but plausible value.
  bool poison = false;
};

// `inputs` bound by input number; returns one dense array per graph output.
// Counts kernels_launched.
std::vector<Array> execute(const Schedule& s, std::span<const Array> inputs, const ArrayAllocator& allocate,
                           KernelMode mode = KernelMode::Generated, MemoryOptions memory = {});

}  // namespace braze
