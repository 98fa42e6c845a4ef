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
// one first written by step k are alive together, except for the one
// overlap Note [In-place outputs] allows.
struct BufferLife {
  NodeId node;
  int64_t bytes;  // itemsize x numel: what the writer stores, unpadded
  int32_t first;
  int32_t last;
  // Index in Liveness::scratch of the dead input this buffer may be written
  // over (Note [In-place outputs]), or -1.
  int32_t in_place_of = -1;
  // A step's workspace (Note [Step workspaces]), not a node's value: `node`
  // is then the step's first output, naming it for the reader.
  bool workspace = false;
};

// Note [Step workspaces]
// A library call needs memory of its own while it runs: oneDNN's
// scratchpad (user mode: the caller passes it) and the right operand
// packed into the layout the product reads fastest (Note [Packed matmul
// weights]). Neither is read after the step, so each is a buffer whose
// life is that one step, [k, k], and the planner places it in the arena
// like any intermediate: it shares bytes with values dead before step k
// or born after it, never with the step's operands or its output.
// Step::workspace_bytes says how much (the runtime asks the backend when
// it builds the schedule of a program, so `braze plan`, BRAZE_DUMP=plan
// and bz.explain show it too); liveness() adds one such buffer per step
// that needs one, after the step's outputs. A workspace is never
// user-visible and never written in place of anything.

// Note [In-place outputs]
// An element-wise kernel may write an output over one of its inputs when
// that input is a scratch buffer (never a graph input or output) whose last
// read is this step, of the same bytes and item size, and every load of it
// in the kernel reads element i exactly where the kernel writes element i
// of the output: the kernel has no reduction and the input's view over
// the domain is the dense row-major one (no broadcast, transpose, slice
// or offset). Then each element is read before the same element is written
// and never read again, in generated code (loads precede the store of each
// vector; tails are masked, never recomputed) as in the spec interpreter
// (which stores outputs after the whole body). liveness() records the
// candidate in BufferLife::in_place_of (each input taken by at most one
// output); the planner gives the two one offset, and the verifier allows
// exactly that overlap: equal offsets and bytes, the input's life ending at
// the step where the output's begins. Poison mode does not clear an input
// whose bytes an output has taken over.

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

// The lives with every in-place chain (a buffer, the output written over
// it, the output written over that, ...) as one life from the first write
// to the last read, of the first buffer's bytes; `chain_of[i]` receives the
// merged entry of scratch[i]. Without in-place candidates, a copy.
Liveness merge_in_place(const Liveness& l, std::vector<size_t>* chain_of = nullptr);

// The most scratch bytes alive at once over the steps, each buffer padded
// to `alignment`, an input and the output written over it in place counted
// once (the lives of merge_in_place): no plan's arena can be smaller.
int64_t lower_bound(const Liveness& l, int64_t alignment);
// The arena with no reuse at all: every scratch buffer padded, summed.
int64_t no_reuse_bytes(const Liveness& l, int64_t alignment);

}  // namespace braze::memplan
