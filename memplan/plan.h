// Arena offset assignment: every scratch buffer of a Liveness gets an offset
// in one arena, so that buffers alive at the same time never share bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memplan/liveness.h"

namespace braze::memplan {

// Note [Placement strategies]
// Both are heuristics: placing intervals in the least memory is NP-hard, so
// neither guarantees the lower bound (the most bytes alive at once).
//   GreedyBySize: largest buffer first, each at the lowest offset where it
//     does not overlap an already placed buffer whose life overlaps its own.
//     Sees the whole schedule before deciding anything.
//   HeapBestFit: walks the steps as an allocator would; at each step frees
//     what died and gives each newborn buffer (largest first) the smallest
//     free block that holds it, growing the arena's top otherwise. Decides
//     online, without knowing who comes next.
// The default is the one that measured better; memplan/README.md has the
// figures.
enum class Strategy : uint8_t { GreedyBySize, HeapBestFit };
inline constexpr Strategy kDefaultStrategy = Strategy::GreedyBySize;
const char* name(Strategy s);

struct PlanOptions {
  // Every offset is a multiple of it: full-width vector loads on the CPU
  // (64); the GPU wants at least 256.
  int64_t alignment = 64;
  Strategy strategy = kDefaultStrategy;
  // Write outputs over dead inputs where the lives allow it (Note [In-place
  // outputs]); off only to measure what it saves.
  bool in_place = true;
};

struct Placement {
  NodeId node;
  int64_t offset;
  int64_t bytes;  // reserved: the buffer's bytes padded to the alignment
};

struct MemoryPlan {
  std::vector<Placement> buffers;  // one per Liveness::scratch entry, same order
  int64_t arena_bytes = 0;         // a multiple of the alignment
  int64_t alignment = 64;
  Strategy strategy = kDefaultStrategy;
};

MemoryPlan plan_memory(const Liveness& l, const PlanOptions& options = {});

// Each buffer's life, size and offset, then the arena against its lower
// bound and the no-reuse total: what explain() and the CLI print.
std::string to_string(const Liveness& l, const MemoryPlan& p);
// to_string of the plan the runtime makes for `s`.
std::string explain_plan(const Schedule& s, const PlanOptions& options = {});

}  // namespace braze::memplan
