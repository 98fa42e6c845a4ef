// Partition: which nodes of a graph run together as one kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusion/epilogue.h"
#include "fusion/kernel_spec.h"
#include "graph/graph.h"

namespace braze {

// Group limits. Past them a group is closed and a new one starts; the edge
// between them is recorded with the limit as its reason.
//   kMaxOpsPerKernel: a body this long no longer fits the code generator's
//     register allocation window and compile time grows with it, while the
//     memory traffic saved by fusing one more op into an already long chain
//     is a small fraction of the total.
//   kMaxInputsPerKernel: each buffer input is a pointer the kernel keeps
//     live through its loops; past this many, loads of pointers and address
//     arithmetic dominate the inner loop.
inline constexpr size_t kMaxOpsPerKernel = 128;
inline constexpr size_t kMaxInputsPerKernel = 24;

struct FusedGroup {
  enum class Kind : uint8_t { Kernel, Library };
  Kind kind = Kind::Kernel;
  Shape domain;                      // D (Note [Kernel spaces])
  std::vector<int64_t> reduce_axes;  // A, sorted; empty: element-wise
  std::vector<NodeId> nodes;         // topological order
  std::vector<NodeId> outputs;       // members read outside the group or returned
  // Library groups: nodes[0] is the matmul/conv2d, then its epilogue
  // (Note [Library epilogues]); outputs holds the epilogue's last value.
  std::vector<PostOp> post_ops;
};

// An edge producer -> consumer that crosses groups: the producer is written
// to memory and read back. `reason` says why they did not fuse.
struct UnfusedEdge {
  NodeId producer;
  NodeId consumer;
  std::string reason;
};

struct Partition {
  std::vector<FusedGroup> groups;  // in the order they run
  std::vector<Space> space;        // per node: its space in its group
  // Per node: an index expression no group holds, computed by every kernel
  // that reads it (Note [Index expressions are recomputed], partition.cpp).
  std::vector<bool> inlined;
  std::vector<UnfusedEdge> unfused;
};

// Expects a graph after the pass pipeline: views sit on leaves or on nodes
// that end an index space (Note [Views sink to the leaves]), and every graph
// output is a computed node.
// Post-ops join a library call as far as `rules` let them (Note [Library
// capabilities]).
Partition partition(const Graph& g, const LibraryRules& rules = cpu_library_rules());

}  // namespace braze
