// The pipeline driver, and the node-by-node rebuild the local passes share.
#include "fusion/passes.h"

namespace braze {

Graph rewrite_nodes(const Graph& g, const std::function<NodeId(Graph& out, const Node& n)>& rewrite) {
  // Ids are topological: a node's inputs have smaller ids, so one sweep
  // from the top marks everything the outputs reach.
  std::vector<bool> live(g.size(), false);
  for (NodeId o : g.outputs) live[o] = true;
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;)
    if (live[id])
      for (NodeId i : g[id].inputs) live[i] = true;

  Graph out;
  std::vector<NodeId> to(g.size());
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g[id];
    if (n.op == Op::Input) {
      to[id] = out.add(n);  // inputs are bound by number: all of them stay
    } else if (live[id]) {
      Node m = n;
      for (NodeId& i : m.inputs) i = to[i];
      to[id] = rewrite(out, m);
    }
  }
  for (NodeId o : g.outputs) out.outputs.push_back(to[o]);
  return out;
}

Graph run_pipeline(Graph g) {
  for (const PassEntry& p : kPipeline) g = p.run(g);
  return g;
}

}  // namespace braze
