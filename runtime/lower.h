// Lowering lazy tensors to a Graph: what realize() runs, and what
// bz.save_graph and bz.explain show.
#pragma once

#include <span>
#include <vector>

#include "graph/array.h"
#include "graph/graph.h"
#include "runtime/tensor.h"

namespace braze {

struct Lowered {
  Graph graph;               // outputs = the roots, in order
  std::vector<Array> inputs;  // data of the realized tensors the graph reads, by input number
};

Lowered lower(std::span<const Tensor> roots);

}  // namespace braze

namespace braze {

// Tensors for the graph's outputs, reading `inputs` (one per input node).
std::vector<Tensor> lift(const Graph& graph, std::span<const Array> inputs);

}  // namespace braze
