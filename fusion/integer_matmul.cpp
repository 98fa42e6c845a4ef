// Note [Integer matmul] (fusion/passes.h).
#include <optional>
#include <vector>

#include "fusion/passes.h"

namespace braze {

namespace {

bool narrow(DType t) { return t == DType::Int8 || t == DType::UInt8; }

// The 8-bit tensor `id` is a cast of to int32, seen through the same
// movement ops (rebuilt over it in `out`); nullopt when it is not one.
std::optional<NodeId> uncast(Graph& out, NodeId id) {
  const Node n = out[id];  // a copy: apply() below adds nodes
  if (n.op == Op::Cast && n.dtype == DType::Int32 && narrow(out[n.inputs[0]].dtype)) return n.inputs[0];
  if (!is_movement(n.op)) return std::nullopt;
  std::optional<NodeId> inner = uncast(out, n.inputs[0]);
  if (!inner) return std::nullopt;
  return out.apply(n.op, {*inner}, n.attr);
}

}  // namespace

Graph integer_matmul(const Graph& g) {
  bool changed = false;
  Graph out = rewrite_nodes(g, [&](Graph& o, const Node& n, NodeId) {
    if (n.op != Op::MatMul || n.dtype != DType::Int32 || !n.attr.ints.empty()) return o.add(n);
    std::optional<NodeId> a = uncast(o, n.inputs[0]);
    std::optional<NodeId> b = a ? uncast(o, n.inputs[1]) : std::nullopt;
    if (!b) return o.add(n);
    changed = true;
    return o.apply(Op::MatMul, {*a, *b}, Attr{{static_cast<int64_t>(DType::Int32)}, {}});
  });
  return changed ? eliminate_dead(out) : g;
}

}  // namespace braze
