// Liveness: which buffers a schedule writes and reads, and over which steps
// each one must keep its contents.
#pragma once

#include <cstdint>
#include <vector>

#include "fusion/schedule.h"

namespace braze::memplan {

// Note [Buffer lives]
// A buffer is the dense output of one node, written by exactly one step.
// Its life is the closed range of step indices [first, last]: `first` is the
// step that writes it, `last` the last step that reads it (`first` when no
// later step does). Two buffers may share memory only when their lives are
// disjoint. Lives that touch at one step overlap: a step reads all its
// inputs while it writes its outputs, so a buffer last read by step k and
// one first written by step k are alive together (writing over a dead input
// in place is a separate, element-wise-only decision).
struct BufferLife {
  NodeId node;
  int64_t bytes;  // itemsize x numel: what the writer stores, unpadded
  int32_t first;
  int32_t last;
};

inline bool lives_overlap(const BufferLife& a, const BufferLife& b) { return a.first <= b.last && b.first <= a.last; }

struct Liveness {
  // Intermediates: written by one step, read by later ones, invisible to
  // the user. Only these go into the arena. Ordered by first write, then by
  // node id: deterministic.
  std::vector<BufferLife> scratch;
  // Graph inputs and outputs, sorted: the user owns or keeps them, so they
  // have their own memory and are never planned as scratch.
  std::vector<NodeId> user_visible;
  int32_t steps = 0;
};

Liveness liveness(const Schedule& s);

inline int64_t align_up(int64_t bytes, int64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

// The most scratch bytes alive at once over the steps, each buffer padded
// to `alignment`: no plan's arena can be smaller.
int64_t lower_bound(const Liveness& l, int64_t alignment);
// The arena with no reuse at all: every scratch buffer padded, summed.
int64_t no_reuse_bytes(const Liveness& l, int64_t alignment);

}  // namespace braze::memplan
