// Where a subcommand's graph comes from: a file saved with save_graph_file /
// bz.save_graph. Every subcommand takes the same source options.
#pragma once

#include <string>
#include <vector>

#include "graph/array.h"
#include "graph/graph.h"

namespace braze::cli {

struct SourceOptions {
  std::string file;
};

struct GraphSource {
  Graph graph;
  std::vector<Array> inputs;  // one per input node when the file saved its data; else empty
};

// Throws std::invalid_argument (a missing file, malformed JSON, an invalid
// graph) with a message that names the file.
GraphSource load_source(const SourceOptions& options);

}  // namespace braze::cli
