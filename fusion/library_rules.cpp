// Note [Library capabilities] (library_rules.h).
#include "fusion/library_rules.h"

#include "fusion/passes.h"

namespace braze {

const LibraryRules& cpu_library_rules() {
  static const LibraryRules rules{"oneDNN", nullptr, nullptr};
  return rules;
}

Graph copy_unread_operands(const Graph& g, const LibraryRules& rules) {
  if (!rules.reads) return g;
  bool any = false;
  for (const Node& n : g.nodes())
    if (info(n.op).kind == FusionKind::Opaque)
      for (size_t i = 0; i < n.inputs.size(); ++i) any = any || !rules.reads(g, n, i);
  if (!any) return g;
  // `n` arrives with its inputs numbered in `to`: the rules read their views there.
  return rewrite_nodes(g, [&](Graph& to, const Node& n, NodeId) {
    if (info(n.op).kind != FusionKind::Opaque) return to.add(n);
    Node m = n;
    for (size_t i = 0; i < m.inputs.size(); ++i)
      if (!rules.reads(to, n, i)) m.inputs[i] = to.apply(Op::Copy, {m.inputs[i]});
    return to.add(m);
  });
}

}  // namespace braze
