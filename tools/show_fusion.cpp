// `braze fuse`: what explain() says, or the same facts as JSON for tools.
#include <nlohmann/json.hpp>

#include <ostream>

#include "fusion/schedule.h"
#include "graph/check.h"
#include "runtime/lower.h"
#include "tools/commands.h"
#include "tools/node_names.h"

namespace braze::cli {

namespace {

nlohmann::json names(const Graph& g, const std::vector<NodeId>& ids) {
  nlohmann::json a = nlohmann::json::array();
  for (NodeId id : ids) a.push_back(node_name(g, id));
  return a;
}

nlohmann::json to_json(const Schedule& s) {
  nlohmann::json steps = nlohmann::json::array();
  for (const Step& st : s.steps) {
    nlohmann::json j;
    bool kernel = st.group.kind == FusedGroup::Kind::Kernel;
    j["kind"] = kernel ? "kernel" : "library";
    j["nodes"] = names(s.graph, st.group.nodes);
    j["outputs"] = names(s.graph, st.group.outputs);
    j["domain"] = st.group.domain;
    j["reduce_axes"] = st.group.reduce_axes;
    if (kernel) {
      j["key"] = kernel_key(st.spec).hex();
      j["reads"] = names(s.graph, st.reads);
      j["spec"] = canonical_text(st.spec);
    }
    steps.push_back(std::move(j));
  }
  nlohmann::json unfused = nlohmann::json::array();
  for (const UnfusedEdge& e : s.unfused)
    unfused.push_back({{"producer", node_name(s.graph, e.producer)},
                       {"consumer", node_name(s.graph, e.consumer)},
                       {"reason", e.reason}});
  return {{"steps", steps}, {"unfused", unfused}};
}

}  // namespace

void show_fusion(const GraphSource& src, const std::string& format, std::ostream& out) {
  BRAZE_CHECK(format == "text" || format == "json", "fuse: unknown format '", format, "' (text, json)");
  Schedule s = realize_schedule(src.graph);
  if (format == "text") out << explain(s);
  else out << to_json(s).dump(1) << "\n";
}

}  // namespace braze::cli
