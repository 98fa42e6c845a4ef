// Note [Integer matmul] (fusion/passes.h).
#include <vector>

#include "fusion/passes.h"

namespace braze {

namespace {

bool narrow(DType t) { return t == DType::Int8 || t == DType::UInt8; }

// Whether `id` is a cast of an 8-bit tensor to int32, seen through
// movement ops.
bool narrow_cast(const Graph& g, NodeId id) {
  const Node& n = g[id];
  if (n.op == Op::Cast) return n.dtype == DType::Int32 && narrow(g[n.inputs[0]].dtype);
  return is_movement(n.op) && narrow_cast(g, n.inputs[0]);
}

// The 8-bit tensor of narrow_cast's `id`, seen through the same movement
// ops (rebuilt over it in `out`).
NodeId uncast(Graph& out, NodeId id) {
  const Node n = out[id];  // a copy: apply() below adds nodes
  if (n.op == Op::Cast) return n.inputs[0];
  return out.apply(n.op, {uncast(out, n.inputs[0])}, n.attr);
}

// a @ b of integers as NumPy computes it, from element-wise ops and a sum:
// the products a[..., m, k, 1] * b[..., 1, k, n] in the result's dtype
// (wrapping, as NumPy's), summed over k in int64 and cast back (wrapping
// the total, as NumPy's running sum in the result's dtype does).
NodeId summed_products(Graph& out, const Node& n) {
  const Shape& a = out[n.inputs[0]].shape();
  const Shape& b = out[n.inputs[1]].shape();
  auto operand = [&](int i) {
    NodeId x = n.inputs[i];
    return out[x].dtype == n.dtype ? x : out.apply(Op::Cast, {x}, Attr{{static_cast<int64_t>(n.dtype)}, {}});
  };
  Shape with_k = n.shape();  // batch, m, n
  with_k.insert(with_k.end() - 1, a.back());
  Shape a3 = a, b3 = b;
  a3.push_back(1);                   // [..., m, k, 1]
  b3.insert(b3.end() - 2, 1);        // [..., 1, k, n]
  NodeId x = out.broadcast_to(out.apply(Op::Reshape, {operand(0)}, Attr{a3, {}}), with_k);
  NodeId y = out.broadcast_to(out.apply(Op::Reshape, {operand(1)}, Attr{b3, {}}), with_k);
  const auto k = static_cast<int64_t>(with_k.size()) - 2;
  NodeId total = out.apply(Op::Sum, {out.apply(Op::Mul, {x, y})}, Attr{{k}, {}});
  total = out.apply(Op::Reshape, {total}, Attr{n.shape(), {}});
  return out[total].dtype == n.dtype ? total : out.apply(Op::Cast, {total}, Attr{{static_cast<int64_t>(n.dtype)}, {}});
}

}  // namespace

bool accumulates_bytes(const Graph& g, const Node& n) {
  const size_t own = n.op == Op::Conv2d ? kConv2dAttrs : 0;
  return (n.op == Op::MatMul || n.op == Op::Conv2d) && n.dtype == DType::Int32 && n.attr.ints.size() == own &&
         narrow_cast(g, n.inputs[0]) && narrow_cast(g, n.inputs[1]);
}

Graph sum_integer_matmuls(const Graph& g) {
  bool changed = false;
  Graph out = rewrite_nodes(g, [&](Graph& o, const Node& n, NodeId) {
    if (n.op != Op::MatMul || is_float(n.dtype) || n.dtype == DType::Bool || n.attr.ints.size() != 0 ||
        accumulates_bytes(o, n))
      return o.add(n);
    changed = true;
    return summed_products(o, n);
  });
  return changed ? eliminate_dead(out) : g;
}

Graph integer_matmul(const Graph& g) {
  bool changed = false;
  Graph out = rewrite_nodes(g, [&](Graph& o, const Node& n, NodeId) {
    // The attr ints of the op itself; one more marks an accumulating product.
    if (!accumulates_bytes(o, n)) return o.add(n);
    changed = true;
    Attr attr = n.attr;
    attr.ints.push_back(static_cast<int64_t>(DType::Int32));
    NodeId a = uncast(o, n.inputs[0]);
    return o.apply(n.op, {a, uncast(o, n.inputs[1])}, attr);
  });
  return changed ? eliminate_dead(out) : g;
}

}  // namespace braze
