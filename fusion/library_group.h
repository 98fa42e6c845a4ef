// What a library group (a matmul/conv2d with its epilogue, Note [Library
// epilogues]) reads, and its value by the reference interpreter: shared by
// the executor's fallback, the planner's liveness and the tests.
#pragma once

#include <functional>
#include <vector>

#include "fusion/partition.h"
#include "graph/array.h"

namespace braze {

// The buffers the group reads, each once, in order of first use: the
// library node's operands and the addends of its Add post-ops (bases:
// inputs or values of earlier steps; constants are not buffers).
std::vector<NodeId> library_reads(const Graph& g, const FusedGroup& group);

// The group's output (group.outputs[0]) evaluated node by node with the
// reference interpreter. `buffer(b)` gives the array of each base that
// library_reads lists; the output comes from `allocate`, intermediates
// from the heap.
Array evaluate_library_group(const Graph& g, const FusedGroup& group, const std::function<const Array&(NodeId)>& buffer,
                             const ArrayAllocator& allocate);

}  // namespace braze
