// Note [Half library calls in float32] (fusion/library_rules.h).
#include <vector>

#include "fusion/library_rules.h"
#include "fusion/passes.h"

namespace braze {

Graph widened_library_calls(const Graph& g, bool (*widens)(const Graph& g, const Node& call)) {
  bool changed = false;
  Graph out = rewrite_nodes(g, [&](Graph& o, const Node& n, NodeId) {
    if ((n.op != Op::MatMul && n.op != Op::Conv2d) || !widens(o, n)) return o.add(n);
    changed = true;
    std::vector<NodeId> operands;
    for (NodeId in : n.inputs)
      operands.push_back(o[in].dtype == DType::Float32
                             ? in
                             : o.apply(Op::Cast, {in}, Attr{{static_cast<int64_t>(DType::Float32)}, {}}));
    NodeId call = o.apply(n.op, operands, n.attr);
    return o.apply(Op::Cast, {call}, Attr{{static_cast<int64_t>(n.dtype)}, {}});
  });
  return changed ? out : g;
}

}  // namespace braze
