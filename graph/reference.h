// The reference interpreter: evaluates any graph with plain loops.
//
// Slow on purpose and kept obviously right: it is the oracle that every
// backend and every fuzzer is checked against. Floats compute in double and
// round once on store; integers compute in int64 and wrap on store.
#pragma once

#include <span>
#include <vector>

#include "graph/array.h"
#include "graph/graph.h"

namespace braze::reference {

// A base array read through a view (shape, strides, offset in elements).
struct StridedArray {
  const Array* base;
  View view;
};

// Evaluates one node: a computed op (element-wise, reduction, library op)
// whose inputs are given as strided arrays of the node's input shapes, or a
// Const/Arange leaf (no inputs). What the graph interpreter runs per node,
// and what the fused-kernel evaluator reuses so both agree bit for bit.
Array evaluate_node(const Node& node, std::span<const StridedArray> inputs,
                    const ArrayAllocator& allocate = allocate_array);

// `inputs` are bound by input number and must match the input nodes' dtypes
// and shapes. Returns one dense array per id in `outputs`.
std::vector<Array> evaluate(const Graph& graph, std::span<const Array> inputs,
                            std::span<const NodeId> outputs,
                            const ArrayAllocator& allocate = allocate_array);

}  // namespace braze::reference
