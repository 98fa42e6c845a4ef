// Note [Convolutions as matmuls] (fusion/library_rules.h).
#include <vector>

#include "fusion/library_rules.h"
#include "fusion/passes.h"

namespace braze {

namespace {

NodeId cast_to(Graph& out, NodeId x, DType t) {
  return out[x].dtype == t ? x : out.apply(Op::Cast, {x}, Attr{{static_cast<int64_t>(t)}, {}});
}

// conv2d(x, w) as the sum over the kernel's taps (kh, kw) of w[:, :, kh,
// kw] @ the input those taps read: the strided slice of the padded input
// that starts at (kh, kw) dilated, one row of it per output position. The
// groups are a batch axis of the matmuls: [G, O/G, C/G] @ [N, G, C/G,
// OH * OW] -> [N, G, O/G, OH * OW].
NodeId taps_as_matmuls(Graph& out, const Node& n) {
  const Shape in = out[n.inputs[0]].shape(), weight = out[n.inputs[1]].shape();  // [N, C, H, W], [O, C/G, KH, KW]
  const std::vector<int64_t>& p = n.attr.ints;  // stride, padding, dilation (2 each), groups
  const int64_t batch = in[0], groups = p[6], per_group = weight[1], outs = weight[0];
  const int64_t rows = n.shape()[2], cols = n.shape()[3];
  NodeId x = cast_to(out, n.inputs[0], n.dtype), w = cast_to(out, n.inputs[1], n.dtype);
  if (p[2] || p[3]) x = out.apply(Op::Pad, {x}, Attr{{0, 0, p[2], p[3], 0, 0, p[2], p[3]}, {}});
  std::vector<NodeId> products;
  for (int64_t kh = 0; kh < weight[2]; ++kh)
    for (int64_t kw = 0; kw < weight[3]; ++kw) {
      NodeId taps = out.apply(Op::Slice, {x}, Attr{{0, 0, kh * p[4], kw * p[5], 1, 1, p[0], p[1], batch, in[1], rows, cols}, {}});
      taps = out.apply(Op::Reshape, {taps}, Attr{{batch, groups, per_group, rows * cols}, {}});
      NodeId tap = out.apply(Op::Slice, {w}, Attr{{0, 0, kh, kw, 1, 1, 1, 1, outs, per_group, 1, 1}, {}});
      tap = out.apply(Op::Reshape, {tap}, Attr{{groups, outs / groups, per_group}, {}});
      products.push_back(out.apply(Op::MatMul, {tap, taps}));
    }
  NodeId total = products[0];  // the weight is not empty: at least one tap
  for (size_t i = 1; i < products.size(); ++i) total = out.apply(Op::Add, {total, products[i]});
  return out.apply(Op::Reshape, {total}, Attr{n.shape(), {}});
}

}  // namespace

Graph convolutions_as_matmuls(const Graph& g, bool (*convolves)(const Graph& g, const Node& conv)) {
  bool changed = false;
  Graph out = rewrite_nodes(g, [&](Graph& o, const Node& n, NodeId) {
    // An empty one computes nothing, wherever it runs.
    if (n.op != Op::Conv2d || n.attr.ints.size() != kConv2dAttrs || convolves(o, n) || numel(n.shape()) == 0 ||
        numel(o[n.inputs[1]].shape()) == 0)
      return o.add(n);
    changed = true;
    return taps_as_matmuls(o, n);
  });
  return changed ? eliminate_dead(out) : g;
}

}  // namespace braze
