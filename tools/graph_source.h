// Where a subcommand's graph comes from: a file saved with save_graph_file /
// bz.save_graph, or an expression with its declared inputs (tools/expr.h).
// Every subcommand takes the same source options.
#pragma once

#include <string>
#include <vector>

#include "graph/array.h"
#include "graph/graph.h"

namespace braze::cli {

struct SourceOptions {
  std::string file;
  std::string expr;                 // instead of a file
  std::vector<std::string> inputs;  // with expr: "x:f32[4096,4096]"
};

struct GraphSource {
  Graph graph;
  std::vector<Array> inputs;  // one per input node when the file saved its data; else empty
  std::vector<std::string> input_names;  // by input number, for an expression; else empty
};

// Throws std::invalid_argument (a missing file, malformed JSON, an invalid
// graph, an expression that does not parse) naming the file or the column.
GraphSource load_source(const SourceOptions& options);

}  // namespace braze::cli
