// `braze graph`: the graph as a table, as the JSON of docs/graph-format.md,
// or as Graphviz dot.
#include <algorithm>
#include <ostream>
#include <sstream>

#include "graph/check.h"
#include "graph/serialize.h"
#include "tools/commands.h"
#include "tools/node_names.h"

namespace braze::cli {

namespace {

std::string type_of(const Node& n) { return std::string(name(n.dtype)) + to_string(n.shape()); }

// What a node does beyond its inputs: "input 0", "value 2.5", "[1]".
std::string attr_text(const Node& n, const std::vector<std::string>& input_names) {
  std::ostringstream s;
  if (n.op == Op::Input) {
    size_t k = static_cast<size_t>(n.attr.ints.at(0));
    return "input " + std::to_string(k) + (k < input_names.size() ? " '" + input_names[k] + "'" : "");
  }
  if (n.op == Op::Cast) return std::string(name(static_cast<DType>(n.attr.ints.at(0))));
  if (!n.attr.ints.empty()) s << to_string(n.attr.ints);
  for (size_t i = 0; i < n.attr.reals.size(); ++i) s << (i || !n.attr.ints.empty() ? " " : "") << n.attr.reals[i];
  return s.str();
}

std::string output_mark(const Graph& g, NodeId id) {
  auto it = std::find(g.outputs.begin(), g.outputs.end(), id);
  return it == g.outputs.end() ? "" : "  (output " + std::to_string(it - g.outputs.begin()) + ")";
}

void text(const Graph& g, const std::vector<std::string>& input_names, std::ostream& out) {
  out << g.size() << " node(s), " << g.inputs().size() << " input(s), " << g.outputs.size() << " output(s)\n";
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g[id];
    out << "  " << node_name(g, id) << ": " << type_of(n) << " = " << info(n.op).api << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) out << (i ? ", " : "") << node_name(g, n.inputs[i]);
    std::string attr = attr_text(n, input_names);
    out << (attr.empty() || n.inputs.empty() ? "" : ", ") << attr << ")" << output_mark(g, id) << "\n";
  }
}

void dot(const Graph& g, const std::vector<std::string>& input_names, std::ostream& out) {
  out << "digraph braze {\n  node [shape=box, fontname=monospace];\n";
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g[id];
    std::string attr = attr_text(n, input_names);
    out << "  n" << id << " [label=\"" << node_name(g, id) << "\\n" << type_of(n)
        << (attr.empty() ? "" : "\\n" + attr) << "\"";
    if (!output_mark(g, id).empty()) out << ", peripheries=2";
    out << "];\n";
    for (NodeId in : n.inputs) out << "  n" << in << " -> n" << id << ";\n";
  }
  out << "}\n";
}

}  // namespace

void show_graph(const GraphSource& src, const std::string& format, std::ostream& out) {
  if (format == "text") text(src.graph, src.input_names, out);
  else if (format == "dot") dot(src.graph, src.input_names, out);
  else if (format == "json") out << graph_to_json(src.graph, {}) << "\n";
  else BRAZE_CHECK(false, "graph: unknown format '", format, "' (text, json, dot)");
}

}  // namespace braze::cli
