// Graphs as JSON (a versioned format), so a graph can be handed to the CLI
// or saved and realized again later.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/array.h"
#include "graph/graph.h"

namespace braze {

// Bump when a reader of the previous version would misread the new one.
inline constexpr int kGraphFormatVersion = 1;

struct SavedGraph {
  Graph graph;
  std::vector<Array> inputs;  // the input data, one per input node, if saved
};

// `inputs` may be empty (structure only) or hold one array per input node.
std::string graph_to_json(const Graph& graph, std::span<const Array> inputs);
// Throws std::invalid_argument naming what is wrong with the text.
SavedGraph graph_from_json(std::string_view text);

void save_graph_file(const std::string& path, const Graph& graph, std::span<const Array> inputs);
SavedGraph load_graph_file(const std::string& path);

}  // namespace braze
