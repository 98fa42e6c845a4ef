// Note [Views sink to the leaves] (fusion/passes.h).
#include <algorithm>
#include <map>

#include "fusion/epilogue.h"
#include "fusion/passes.h"
#include "graph/check.h"

namespace braze {

namespace {

struct Move {
  Op op;
  std::vector<int64_t> ints;
  friend auto operator<=>(const Move&, const Move&) = default;
};

class ViewPusher {
 public:
  explicit ViewPusher(const Graph& g) : g_(g), epilogue_(epilogue_members(g)) {
    for (NodeId id : g.inputs()) ids_[{id, {}}] = out_.input(g[id].dtype, g[id].shape());
  }

  Graph run() {
    for (NodeId id : g_.outputs) out_.outputs.push_back(rebuild(id, {}));
    return std::move(out_);
  }

 private:
  // The node `id` seen through `moves` (innermost first), in the new graph.
  NodeId rebuild(NodeId id, const std::vector<Move>& moves) {
    auto key = std::make_pair(id, moves);
    if (auto it = ids_.find(key); it != ids_.end()) return it->second;
    NodeId result = rebuild_uncached(id, moves);
    ids_.emplace(std::move(key), result);
    return result;
  }

  NodeId rebuild_uncached(NodeId id, const std::vector<Move>& moves) {
    const Node& n = g_[id];
    if (is_movement(n.op)) {
      std::vector<Move> inner{{n.op, n.attr.ints}};
      inner.insert(inner.end(), moves.begin(), moves.end());
      return rebuild(n.inputs[0], inner);
    }
    if (!moves.empty() && is_elementwise(n.op) && n.op != Op::Copy && !epilogue_[id] && pushable(n, moves) &&
        !(broadcasts(moves) && is_row_statistic(id))) {
      std::vector<NodeId> in;
      for (NodeId i : n.inputs) in.push_back(rebuild(i, moves));
      return out_.apply(n.op, in, n.attr);
    }
    if (moves.empty()) return rebuild_plain(n);
    NodeId base = rebuild(id, {});
    for (const Move& m : moves) base = out_.apply(m.op, {base}, Attr{m.ints, {}});
    return base;
  }

  NodeId rebuild_plain(const Node& n) {
    if (info(n.op).kind == FusionKind::Leaf) {
      BRAZE_ASSERT(n.op != Op::Input, "inputs are created up front");
      return out_.add(n);
    }
    const bool library = info(n.op).kind == FusionKind::Opaque;
    std::vector<NodeId> in;
    for (NodeId i : n.inputs) in.push_back(library ? rebuild_operand(i) : rebuild(i, {}));
    return out_.apply(n.op, in, n.attr);
  }

  // A library call's operand: a view of an element-wise result stays on top
  // of it (Note [Views sink to the leaves], the third exception).
  NodeId rebuild_operand(NodeId id) {
    std::vector<Move> moves;  // innermost first
    NodeId base = id;
    for (; is_movement(g_[base].op); base = g_[base].inputs[0])
      moves.insert(moves.begin(), Move{g_[base].op, g_[base].attr.ints});
    if (moves.empty() || !is_elementwise(g_[base].op)) return rebuild(id, {});
    NodeId r = rebuild(base, {});
    for (const Move& m : moves) r = out_.apply(m.op, {r}, Attr{m.ints, {}});
    return r;
  }

  static bool broadcasts(const std::vector<Move>& moves) {
    return std::any_of(moves.begin(), moves.end(), [](const Move& m) { return m.op == Op::Expand; });
  }

  // Whether element-wise node `id` computes from a reduction's result: a
  // per-row value such as layer_norm's rsqrt(var + eps). A broadcast of it
  // stays on top, so it is computed once per row and read back over the row
  // (Note [Kernel spaces]) instead of once per element.
  bool is_row_statistic(NodeId id) {
    if (auto it = row_statistic_.find(id); it != row_statistic_.end()) return it->second;
    const Node& n = g_[id];
    bool r = false;
    if (is_reduce(n.op)) r = true;
    else if (is_elementwise(n.op))
      for (NodeId i : n.inputs) r = r || is_row_statistic(g_.base(i));
    row_statistic_[id] = r;
    return r;
  }

  // Whether every input can take the moves as a view (a reshape of a
  // strided layout may not be expressible; then the moves stay on top).
  bool pushable(const Node& n, const std::vector<Move>& moves) const {
    for (NodeId i : n.inputs) {
      std::optional<View> v = g_[i].view;
      for (const Move& m : moves)
        if (!(v = move_view(*v, m.op, m.ints))) return false;
    }
    return true;
  }

  const Graph& g_;
  std::vector<bool> epilogue_;  // post-op nodes of library calls: views stay above them
  Graph out_;
  std::map<std::pair<NodeId, std::vector<Move>>, NodeId> ids_;
  std::map<NodeId, bool> row_statistic_;
};

}  // namespace

Graph push_views(const Graph& g) { return ViewPusher(g).run(); }

}  // namespace braze
