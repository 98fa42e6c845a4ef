// How the CLI names a node: "Exp#3", as explain() does, so the outputs of
// `braze graph` and `braze fuse` can be read side by side.
#pragma once

#include <string>

#include "graph/graph.h"

namespace braze::cli {

inline std::string node_name(const Graph& g, NodeId id) {
  return std::string(info(g[id].op).name) + "#" + std::to_string(id);
}

}  // namespace braze::cli
