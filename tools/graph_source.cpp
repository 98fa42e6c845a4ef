#include "tools/graph_source.h"

#include <filesystem>
#include <stdexcept>

#include "graph/check.h"
#include "graph/serialize.h"
#include "tools/expr.h"

namespace braze::cli {

GraphSource load_source(const SourceOptions& options) {
  BRAZE_CHECK(options.file.empty() || options.expr.empty(), "give a FILE or --expr, not both");
  BRAZE_CHECK(options.inputs.empty() || !options.expr.empty(), "--input declares an input of --expr; there is none");
  if (!options.expr.empty()) {
    std::vector<ExprInput> declared;
    for (const std::string& d : options.inputs) declared.push_back(parse_input_decl(d));
    ExprGraph e = graph_of_expression(options.expr, declared);
    return {std::move(e.graph), {}, std::move(e.input_names)};
  }
  BRAZE_CHECK(!options.file.empty(), "no graph: give a FILE saved with save_graph, or --expr");
  BRAZE_CHECK(std::filesystem::is_regular_file(options.file), options.file, ": no such file");
  SavedGraph saved;
  try {
    saved = load_graph_file(options.file);
  } catch (const std::exception& e) {
    throw std::invalid_argument(options.file + ": " + e.what());
  }
  return {std::move(saved.graph), std::move(saved.inputs), {}};
}

}  // namespace braze::cli
