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
    // The attr ints of the op itself; one more marks an accumulating product.
    const size_t own = n.op == Op::Conv2d ? kConv2dAttrs : 0;
    if ((n.op != Op::MatMul && n.op != Op::Conv2d) || n.dtype != DType::Int32 || n.attr.ints.size() != own)
      return o.add(n);
    std::optional<NodeId> a = uncast(o, n.inputs[0]);
    std::optional<NodeId> b = a ? uncast(o, n.inputs[1]) : std::nullopt;
    if (!b) return o.add(n);
    changed = true;
    Attr attr = n.attr;
    attr.ints.push_back(static_cast<int64_t>(DType::Int32));
    return o.apply(n.op, {*a, *b}, attr);
  });
  return changed ? eliminate_dead(out) : g;
}

}  // namespace braze
