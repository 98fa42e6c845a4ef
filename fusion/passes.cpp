// The pipeline driver, and the node-by-node rebuild the local passes share.
#include "fusion/passes.h"

#include <algorithm>

#include "graph/check.h"

namespace braze {

namespace {

// The order matters:
//   fold_constants  first: constant subexpressions become the constants
//                   that simplify's rules look for (1.5 - 0.5 is the 1 of
//                   x * 1);
//   simplify        exact rewrites (Note [Exact simplification]);
//   eliminate_dead  drops what the rewrites left unread (the 1 of x * 1,
//                   a folded constant's operands);
//   sum_integer_matmuls
//                   integer matmuls no library runs become reductions
//                   (Note [Integer matmul as a sum]), before the passes
//                   that place views and outputs;
//   dense_outputs   then gives every output, as it now is, a dense value;
//   push_views      sinks the views of the final graph to the leaves, so
//                   that the partition sees one index space per kernel
//                   (Note [Views sink to the leaves]);
//   reduce_in_memory_order
//                   after push_views: it needs the views at the leaves to
//                   see which order memory has (Note [Reductions in memory
//                   order]);
//   integer_matmul  last: a matmul's casts seen through the views that
//                   stay above them (Note [Integer matmul]).
constexpr PassEntry kPipeline[] = {
    {"fold_constants", fold_constants},
    {"simplify", simplify},
    {"eliminate_dead", eliminate_dead},
    {"sum_integer_matmuls", sum_integer_matmuls},
    {"dense_outputs", dense_outputs},
    {"push_views", push_views},
    {"reduce_in_memory_order", reduce_in_memory_order},
    {"integer_matmul", integer_matmul},
};

// What every pass keeps: realize binds inputs by number and reads outputs
// by position.
void check_interface(const Graph& before, const Graph& after, std::string_view pass) {
  auto same = [&](NodeId a, NodeId b) { return before[a].dtype == after[b].dtype && before[a].shape() == after[b].shape(); };
  BRAZE_ASSERT(before.inputs().size() == after.inputs().size() && before.outputs.size() == after.outputs.size(),
               pass, ": changed the number of inputs or outputs");
  for (size_t i = 0; i < before.inputs().size(); ++i)
    BRAZE_ASSERT(same(before.inputs()[i], after.inputs()[i]), pass, ": changed input ", i);
  for (size_t i = 0; i < before.outputs.size(); ++i)
    BRAZE_ASSERT(same(before.outputs[i], after.outputs[i]), pass, ": changed the type of output ", i);
}

}  // namespace

std::vector<bool> live_nodes(const Graph& g) {
  // Ids are topological: a node's inputs have smaller ids, so one sweep
  // from the top marks everything the outputs reach.
  std::vector<bool> live(g.size(), false);
  for (NodeId o : g.outputs) live[o] = true;
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;)
    if (live[id])
      for (NodeId i : g[id].inputs) live[i] = true;
  return live;
}

std::vector<uint32_t> count_readers(const Graph& g) {
  std::vector<bool> live = live_nodes(g);
  std::vector<uint32_t> readers(g.size(), 0);
  for (NodeId o : g.outputs) ++readers[o];
  // From the top, so a view's readers are all counted before it passes
  // them on to what it views.
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;) {
    if (!live[id]) continue;
    uint32_t reads = is_movement(g[id].op) ? readers[id] : 1;
    for (NodeId i : g[id].inputs) readers[i] += reads;
  }
  return readers;
}

Graph rewrite_nodes(const Graph& g, const Rewrite& rewrite) {
  std::vector<bool> live = live_nodes(g);
  Graph out;
  std::vector<NodeId> to(g.size());
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g[id];
    if (n.op == Op::Input) {
      to[id] = out.add(n);  // inputs are bound by number: all of them stay
    } else if (live[id]) {
      Node m = n;
      for (NodeId& i : m.inputs) i = to[i];
      to[id] = rewrite(out, m, id);
    }
  }
  for (NodeId o : g.outputs) out.outputs.push_back(to[o]);
  return out;
}

std::span<const PassEntry> pipeline() { return kPipeline; }

Graph run_pipeline(Graph g, std::span<const std::string_view> skip) {
  for (std::string_view name : skip)
    BRAZE_CHECK(std::any_of(std::begin(kPipeline), std::end(kPipeline), [&](const PassEntry& p) { return p.name == name; }),
                "run_pipeline: no pass is called ", name);
  for (const PassEntry& p : kPipeline) {
    if (std::find(skip.begin(), skip.end(), p.name) != skip.end()) continue;
    Graph next = p.run(g);
    check_interface(g, next, p.name);
    g = std::move(next);
  }
  return g;
}

}  // namespace braze
