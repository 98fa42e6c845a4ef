#include "tools/graph_source.h"

#include <filesystem>
#include <stdexcept>

#include "graph/check.h"
#include "graph/serialize.h"

namespace braze::cli {

GraphSource load_source(const SourceOptions& options) {
  BRAZE_CHECK(!options.file.empty(), "no graph: give a FILE saved with save_graph");
  BRAZE_CHECK(std::filesystem::is_regular_file(options.file), options.file, ": no such file");
  SavedGraph saved;
  try {
    saved = load_graph_file(options.file);
  } catch (const std::exception& e) {
    throw std::invalid_argument(options.file + ": " + e.what());
  }
  return {std::move(saved.graph), std::move(saved.inputs)};
}

}  // namespace braze::cli
