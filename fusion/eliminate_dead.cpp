// Note [Dead nodes]
// A node that no output reaches is dropped. Safe because nothing observes
// it: the graph is pure (no op has an effect besides its value), and the
// inputs, which realize binds by number, all stay, read or not. The
// traversal lives in rewrite_nodes, so every pass built on it (folding,
// simplification) skips dead nodes too; this pass, the identity rewrite,
// drops what those rewrites leave unread in the graph they build, such as
// the constant 1 of a simplified x * 1. push_views, which rebuilds from the
// outputs, drops dead nodes as well, but this is the pass that promises it.
#include "fusion/passes.h"

namespace braze {

Graph eliminate_dead(const Graph& g) {
  return rewrite_nodes(g, [](Graph& out, const Node& n, NodeId) { return out.add(n); });
}

}  // namespace braze
