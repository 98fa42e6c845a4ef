// Note [Movement chains]
// A chain of movement ops (reshape, expand, permute, slice) over a node
// reads that node's storage through one view (Note [Views]): a shape,
// strides and an offset. The ops in between are bookkeeping, and the
// builders leave plenty of them: broadcast_to is a reshape that adds
// leading 1s and an expand, so a broadcast of a broadcast is four ops;
// keepdims=False and back is a reshape of a reshape. simplify replaces a
// chain by the shortest of these that reads the same elements, when it is
// shorter:
//   nothing                  the chain is the identity (a reshape to the
//                            same shape, an expand to it, permute(0, 1, ...))
//   one reshape              reshape of reshape
//   one expand               expand of expand
//   one permute              permute of permute
//   reshape, then expand     broadcast of broadcast: the reshape puts 1s
//                            where the result broadcasts
// Exact by construction: the new chain is accepted only when its view reads
// the same storage element at every index as the old one (same_elements),
// so every consumer loads the very same values; nothing is computed. The
// chain is shortened from the deepest node that allows it, usually the base.
// Slices are never composed, only kept as the start of a chain; empty views
// are left alone. Only chains over a leaf, a reduction, a library call or a
// copy: a chain over another element-wise node is push_views' to sink, and
// push_views computes that node once per distinct view of it (Note [Views
// sink to the leaves]), which an identity view removed here would merge
// with the node itself, sharing it between kernels that cannot both hold
// it.
#include "fusion/simplify_views.h"

#include "graph/check.h"

namespace braze {

namespace {

// Whether `a` and `b` read the same storage element at every index: the
// stride of an axis of extent 1 is never used.
bool same_elements(const View& a, const View& b) {
  if (a.shape != b.shape || a.offset != b.offset || a.window != b.window) return false;
  for (size_t i = 0; i < a.shape.size(); ++i)
    if (a.shape[i] != 1 && a.strides[i] != b.strides[i]) return false;
  return true;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  return true;
}

struct Move {
  Op op;
  std::vector<int64_t> ints;
};

// A permutation taking `from` to `want`, matching axes by extent and
// stride; nullopt when there is none (or the greedy match misses it).
std::optional<std::vector<int64_t>> permutation(const View& from, const View& want) {
  if (from.shape.size() != want.shape.size()) return std::nullopt;
  std::vector<int64_t> perm;
  std::vector<bool> used(from.shape.size(), false);
  for (size_t i = 0; i < want.shape.size(); ++i) {
    size_t j = 0;
    while (j < from.shape.size() && (used[j] || from.shape[j] != want.shape[i] ||
                                     (want.shape[i] != 1 && from.strides[j] != want.strides[i])))
      ++j;
    if (j == from.shape.size()) return std::nullopt;
    used[j] = true;
    perm.push_back(static_cast<int64_t>(j));
  }
  return perm;
}

// The shortest list of moves (at most two) that takes view `from` to the
// elements of `want`; nullopt when none of the candidates does.
std::optional<std::vector<Move>> short_path(const View& from, const View& want) {
  using Moves = std::vector<Move>;
  if (same_elements(from, want)) return Moves{};
  const Shape& to = want.shape;
  if (numel(from.shape) == numel(to))
    if (std::optional<View> v = from.reshape(to); v && same_elements(*v, want)) return Moves{{Op::Reshape, to}};
  if (broadcasts_to(from.shape, to) && same_elements(from.expand(to), want)) return Moves{{Op::Expand, to}};
  if (std::optional<std::vector<int64_t>> p = permutation(from, want); p && same_elements(from.permute(*p), want))
    return Moves{{Op::Permute, *p}};
  Shape unbroadcast = to;  // `want` with its broadcast axes as 1s
  for (size_t i = 0; i < to.size(); ++i)
    if (want.strides[i] == 0) unbroadcast[i] = 1;
  if (unbroadcast != to && numel(unbroadcast) == numel(from.shape))
    if (std::optional<View> v = from.reshape(unbroadcast); v && same_elements(v->expand(to), want))
      return Moves{{Op::Reshape, unbroadcast}, {Op::Expand, to}};
  return std::nullopt;
}

}  // namespace

std::optional<NodeId> simplify_movement(Graph& g, const Node& n) {
  if (!is_movement(n.op)) return std::nullopt;
  // `n` as it reads in `g`: its inputs were rewritten, so its recorded view
  // may describe an older base.
  std::optional<View> view = move_view(g[n.inputs[0]].view, n.op, n.attr.ints);
  if (!view) return std::nullopt;  // a reshape that needs a copy: Graph::add inserts it
  // An empty view reads nothing, so any chain "reads the same elements";
  // turning a broadcast into a reshape there gains nothing and hides from
  // the partition which axes broadcast.
  if (view->numel() == 0) return std::nullopt;
  std::vector<NodeId> chain;        // n's input, its input, ..., the base
  for (NodeId p = n.inputs[0];; p = g[p].inputs[0]) {
    chain.push_back(p);
    if (!is_movement(g[p].op)) break;
  }
  const Op base = g[chain.back()].op;
  if (is_elementwise(base) && base != Op::Copy) return std::nullopt;  // push_views' business
  for (size_t k = chain.size(); k-- > 0;) {  // deepest first
    std::optional<std::vector<Move>> path = short_path(g[chain[k]].view, *view);
    if (!path || path->size() >= k + 1) continue;  // k + 1: the ops above chain[k], n included
    NodeId id = chain[k];
    for (const Move& m : *path) id = g.apply(m.op, {id}, Attr{m.ints, {}});
    BRAZE_ASSERT(same_elements(g[id].view, *view), info(n.op).name, ": a shorter chain reads other elements");
    return id;
  }
  return std::nullopt;
}

}  // namespace braze
