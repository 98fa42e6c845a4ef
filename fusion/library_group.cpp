#include "fusion/library_group.h"

#include <algorithm>
#include <unordered_map>

#include "graph/check.h"
#include "graph/reference.h"

namespace braze {

namespace {

bool in_group(const FusedGroup& group, NodeId id) {
  return std::find(group.nodes.begin(), group.nodes.end(), id) != group.nodes.end();
}

}  // namespace

std::vector<NodeId> library_reads(const Graph& g, const FusedGroup& group) {
  std::vector<NodeId> out;
  for (NodeId id : group.nodes)
    for (NodeId i : g[id].inputs) {
      NodeId b = g.base(i);
      if (in_group(group, b) || (g[b].op != Op::Input && info(g[b].op).kind == FusionKind::Leaf)) continue;
      if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
    }
  return out;
}

Array evaluate_library_group(const Graph& g, const FusedGroup& group, const std::function<const Array&(NodeId)>& buffer,
                             const ArrayAllocator& allocate) {
  BRAZE_ASSERT(group.kind == FusedGroup::Kind::Library && group.outputs.size() == 1, "not a library group");
  std::unordered_map<NodeId, Array> values;  // members and constants
  auto array_of = [&](NodeId b) -> const Array& {
    if (auto it = values.find(b); it != values.end()) return it->second;
    if (g[b].op != Op::Input && info(g[b].op).kind == FusionKind::Leaf)
      return values.emplace(b, reference::evaluate_node(g[b], {})).first->second;
    return buffer(b);
  };
  NodeId out = group.outputs[0];
  for (NodeId id : group.nodes) {
    std::vector<reference::StridedArray> in;
    for (NodeId i : g[id].inputs) in.push_back({&array_of(g.base(i)), g[i].view});
    values[id] = id == out ? reference::evaluate_node(g[id], in, allocate) : reference::evaluate_node(g[id], in);
  }
  return values.at(out);
}

}  // namespace braze
