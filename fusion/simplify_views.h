// The movement half of the simplify pass (Note [Movement chains]).
#pragma once

#include <optional>

#include "graph/graph.h"

namespace braze {

// A shorter chain of movement ops in `g` reading the same elements as
// movement node `n` (its inputs already in `g`), or nullopt.
std::optional<NodeId> simplify_movement(Graph& g, const Node& n);

}  // namespace braze
