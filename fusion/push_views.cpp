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
    count_views();
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
    if (!moves.empty() && is_elementwise(n.op) && n.op != Op::Copy && !epilogue_[id] && !kept(id) &&
        pushable(n, moves) && !(broadcasts(moves) && is_row_statistic(id)) && pads_little(id, moves)) {
      std::vector<NodeId> in;
      for (NodeId i : n.inputs) in.push_back(pads(moves) && g_[g_.base(i)].op == Op::Const ? constant_over(i, n, moves)
                                                                                     : rebuild(i, moves));
      return masked(n, out_.apply(n.op, in, n.attr), moves);
    }
    if (moves.empty()) return rebuild_plain(n);
    NodeId base = rebuild(id, {});
    for (const Move& m : moves) base = out_.apply(m.op, {base}, Attr{m.ints, {}});
    return reads_nothing(out_[base].view) ? zeros_like(base) : base;
  }

  // A view whose window is empty along some axis is all padding (a block of
  // a padded array sliced away, Note [Windows]): zeros, not a masked load
  // that never loads.
  static bool reads_nothing(const View& v) {
    return std::any_of(v.window.begin(), v.window.end(), [](const Window& w) { return w.hi <= w.lo; });
  }
  NodeId zeros_like(NodeId id) {
    const Shape shape = out_[id].shape();
    return out_.broadcast_to(out_.constant(out_[id].dtype, 0.0), shape);
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

  // Note [Padding sinks under a mask]: f computed over padded inputs is
  // f(0) in the padding, so where the moves pad, the value is selected
  // back to zero there by the window's index.
  NodeId masked(const Node& n, NodeId value, const std::vector<Move>& moves) {
    if (!pads(moves)) return value;
    std::optional<View> v = moved(n.shape(), moves);
    BRAZE_ASSERT(v, "push_views: moves that pushable() took do not compose");
    const Shape shape = out_[value].shape();  // a copy: apply() below grows the node storage
    NodeId mask = kNone;
    for (size_t d = 0; d < v->window.size(); ++d) {
      const Window w = v->window[d];
      if (w == Window{0, shape[d]}) continue;
      DType t = shape[d] < (int64_t{1} << 31) ? DType::Int32 : DType::Int64;
      Shape along(shape.size(), 1);
      along[d] = shape[d];
      // Built at the whole shape from views of a leaf, as push_views leaves
      // everything else: no broadcast stands above a computed node.
      NodeId i = out_.broadcast_to(out_.apply(Op::Reshape, {out_.arange(t, shape[d], 0, 1)}, Attr{along, {}}), shape);
      NodeId inside = out_.apply(Op::LogicalAnd, {out_.apply(Op::Ge, {i, out_.constant_int(t, w.lo)}),
                                                   out_.apply(Op::Lt, {i, out_.constant_int(t, w.hi)})});
      mask = mask == kNone ? inside : out_.apply(Op::LogicalAnd, {mask, inside});
    }
    if (mask == kNone) return value;
    return out_.apply(Op::Where, {mask, value, out_.constant(out_[value].dtype, 0.0)});
  }

  static constexpr NodeId kNone = ~NodeId{0};

  // Note [Padding sinks under a mask]: pushed, a pad computes the node over
  // the padded shape, padding included. A stencil's pad adds a border; a
  // lazy concatenation pads each part to the whole result, which would
  // compute every part k times over (np.concatenate([x, sin(x), tanh(x),
  // x * x]) @ w ran at 0.6x NumPy). So a pad sinks where it at most doubles
  // the elements; else the node is computed once and read through its
  // window.
  bool pads_little(NodeId id, const std::vector<Move>& moves) {
    if (!pads(moves)) return true;
    std::optional<View> v = moved(g_[id].shape(), moves);
    return !v || v->numel() <= 2 * numel(g_[id].shape());
  }

  // A dense array of `shape` seen through `moves`: the shape and window a
  // node pushed through them has; nullopt where a reshape would copy.
  static std::optional<View> moved(const Shape& shape, const std::vector<Move>& moves) {
    std::optional<View> v = View::contiguous(shape);
    for (const Move& m : moves)
      if (!(v = move_view(*v, m.op, m.ints))) break;
    return v;
  }

  static bool pads(const std::vector<Move>& moves) {
    return std::any_of(moves.begin(), moves.end(), [](const Move& m) { return m.op == Op::Pad; });
  }

  // A constant read by an element-wise node that moves pad: the same value
  // everywhere, padding included (the mask above zeroes the padding), so
  // a broadcast of it, not a padded constant (which would be written out).
  NodeId constant_over(NodeId c, const Node& n, const std::vector<Move>& moves) {
    std::optional<View> v = moved(n.shape(), moves);
    BRAZE_ASSERT(v, "push_views: moves that pushable() took do not compose");
    return out_.broadcast_to(rebuild(g_.base(c), {}), v->shape);
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

  // Note [Recomputing under views is bounded]: whether element-wise node id
  // is read through two or more views and costs more than kMaxRecomputed
  // ops to compute again: then it is computed once and its views read it.
  static constexpr uint32_t kMaxRecomputed = 16;
  bool kept(NodeId id) { return views_[id] >= 2 && cost(id) > kMaxRecomputed; }

  // views_[id]: the distinct ways id is read, each chain of movement ops
  // over it that a non-movement node or an output reads being one, and
  // reading it directly another.
  void count_views() {
    const size_t n = g_.size();
    std::vector<std::vector<NodeId>> movers(n);  // per node, the movement nodes over it
    std::vector<bool> read(n, false);            // read by a non-movement node, or an output
    for (NodeId id = 0; id < n; ++id)
      for (NodeId i : g_[id].inputs) (is_movement(g_[id].op) ? movers[i].push_back(id) : void(read[i] = true));
    for (NodeId o : g_.outputs) read[o] = true;
    std::vector<uint32_t> ends(n, 0);  // chain ends at and over a movement node
    for (NodeId id = static_cast<NodeId>(n); id-- > 0;) {  // readers come after what they read
      uint32_t e = read[id] ? 1 : 0;
      for (NodeId m : movers[id]) e += ends[m];
      ends[id] = e;
    }
    views_ = std::move(ends);
  }

  // Element-wise ops computed again per extra view of id: those of its tree
  // down to what ends a kernel (leaves, reductions, library calls), each
  // shared node counted once per path; capped past kMaxRecomputed.
  uint32_t cost(NodeId id) {
    if (auto it = cost_.find(id); it != cost_.end()) return it->second;
    uint32_t c = 0;
    if (is_elementwise(g_[id].op)) {
      c = 1;
      for (NodeId i : g_[id].inputs) c = std::min(kMaxRecomputed + 1, c + cost(g_.base(i)));
    }
    return cost_[id] = c;
  }

  const Graph& g_;
  std::vector<uint32_t> views_;
  std::map<NodeId, uint32_t> cost_;
  std::vector<bool> epilogue_;  // post-op nodes of library calls: views stay above them
  Graph out_;
  std::map<std::pair<NodeId, std::vector<Move>>, NodeId> ids_;
  std::map<NodeId, bool> row_statistic_;
};

}  // namespace

Graph push_views(const Graph& g) { return ViewPusher(g).run(); }

}  // namespace braze
