#include "graph/graph.h"

#include <bit>
#include <functional>

#include "graph/check.h"
#include "graph/infer.h"

namespace braze {

namespace {

void hash_combine(size_t& seed, size_t v) { seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }

template <class T>
void hash_range(size_t& seed, const std::vector<T>& xs) {
  hash_combine(seed, xs.size());
  for (const T& x : xs) hash_combine(seed, std::hash<T>{}(x));
}

// Reals hash by bit pattern, matching Attr's equality (-0.0 != 0.0).
void hash_reals(size_t& seed, const std::vector<double>& xs) {
  hash_combine(seed, xs.size());
  for (double x : xs) hash_combine(seed, std::hash<uint64_t>{}(std::bit_cast<uint64_t>(x)));
}

}  // namespace

size_t NodeHash::operator()(const Node& n) const {
  size_t h = static_cast<size_t>(n.op) * 131 + static_cast<size_t>(n.dtype);
  hash_range(h, n.view.shape);
  hash_range(h, n.view.strides);
  hash_combine(h, std::hash<int64_t>{}(n.view.offset));
  for (const Window& w : n.view.window) hash_combine(h, std::hash<int64_t>{}(w.lo * 31 + w.hi));
  hash_range(h, n.inputs);
  hash_range(h, n.attr.ints);
  hash_reals(h, n.attr.reals);
  return h;
}

std::optional<View> move_view(const View& in, Op op, const std::vector<int64_t>& a) {
  switch (op) {
    case Op::Expand: return in.expand(a);
    case Op::Permute: return in.permute(a);
    case Op::Reshape: return in.reshape(a);
    case Op::Slice: {
      size_t r = in.shape.size();
      std::span<const int64_t> s(a);
      return in.slice(s.subspan(0, r), s.subspan(r, r), s.subspan(2 * r, r));
    }
    case Op::Pad: {
      std::span<const int64_t> s(a);
      return in.pad(s.subspan(0, in.shape.size()), s.subspan(in.shape.size()));
    }
    default: break;
  }
  BRAZE_ASSERT(false, info(op).name, " is not a movement op");
  return std::nullopt;
}

NodeId Graph::intern(Node node) {
  if (auto it = index_.find(node); it != index_.end()) return it->second;
  auto id = static_cast<NodeId>(nodes_.size());
  index_.emplace(node, id);
  nodes_.push_back(std::move(node));
  return id;
}

NodeId Graph::input(DType dtype, Shape shape) {
  auto number = static_cast<int64_t>(inputs_.size());
  NodeId id = intern(Node{Op::Input, dtype, View::contiguous(std::move(shape)), {}, Attr{{number}, {}}});
  inputs_.push_back(id);
  return id;
}

NodeId Graph::constant(DType dtype, double value) {
  if (is_integral(dtype)) return constant_int(dtype, static_cast<int64_t>(value));
  return intern(Node{Op::Const, dtype, View::contiguous({}), {}, Attr{{}, {value}}});
}

NodeId Graph::constant_int(DType dtype, int64_t value) {
  if (is_float(dtype)) return constant(dtype, static_cast<double>(value));
  return intern(Node{Op::Const, dtype, View::contiguous({}), {}, Attr{{value}, {}}});
}

NodeId Graph::arange(DType dtype, int64_t n, double start, double step) {
  BRAZE_CHECK(n >= 0, "arange: negative length ", n);
  Attr attr;
  if (is_float(dtype)) attr.reals = {start, step};
  else attr.ints = {static_cast<int64_t>(start), static_cast<int64_t>(step)};
  return intern(Node{Op::Arange, dtype, View::contiguous({n}), {}, std::move(attr)});
}

NodeId Graph::broadcast_to(NodeId id, Shape shape) {
  // `shape` is taken by value: callers pass another node's shape, which the
  // apply() below may move when the node storage grows.
  const Shape from = nodes_[id].shape();
  if (from == shape) return id;
  if (from.size() < shape.size()) {
    Shape padded(shape.size() - from.size(), 1);
    padded.insert(padded.end(), from.begin(), from.end());
    id = apply(Op::Reshape, {id}, Attr{padded, {}});
  }
  return apply(Op::Expand, {id}, Attr{std::move(shape), {}});
}

NodeId Graph::base(NodeId id) const {
  while (is_movement(nodes_[id].op)) id = nodes_[id].inputs[0];
  return id;
}

NodeId Graph::apply(Op op, std::span<const NodeId> inputs, Attr attr) {
  BRAZE_CHECK(info(op).kind != FusionKind::Leaf, info(op).api,
              ": leaves are made by input(), constant() and arange()");
  std::vector<TypeShape> types;
  for (NodeId i : inputs) {
    BRAZE_ASSERT(i < nodes_.size(), "input id ", i, " not in the graph");
    types.push_back({nodes_[i].dtype, nodes_[i].shape()});
  }
  TypeShape t = infer(op, types, attr);
  // NumPy's invert of a bool is its logical not. Kernels and the reference
  // compute integer ops on bools as the integers 0 and 1, where ~1 is -2
  // (true): the op is recorded as what it means.
  if (op == Op::BitwiseInvert && t.dtype == DType::Bool) return apply(Op::LogicalNot, inputs, std::move(attr));
  Node n{op, t.dtype, View::contiguous(t.shape), {inputs.begin(), inputs.end()}, std::move(attr)};
  if (is_elementwise(op)) {
    // Element-wise inputs all have the result's shape: implicit broadcasting
    // becomes explicit Reshape + Expand nodes, which cost no copy.
    for (NodeId& in : n.inputs) in = broadcast_to(in, t.shape);
  }
  if (op == Op::Pad && nodes_[base(inputs[0])].op != Op::Input && info(nodes_[base(inputs[0])].op).kind == FusionKind::Leaf) {
    // A constant or an arange has no memory for a masked load to read
    // (Note [Windows]): padded, it is written out first.
    n.inputs[0] = apply(Op::Copy, {inputs[0]});
    return apply(op, std::span<const NodeId>(n.inputs), n.attr);
  }
  if (is_movement(op)) {
    std::optional<View> v = move_view(nodes_[inputs[0]].view, op, n.attr.ints);
    if (!v) {
      n.inputs[0] = apply(Op::Copy, {inputs[0]});  // Note [Views]: the one copying reshape
      return apply(op, std::span<const NodeId>(n.inputs), n.attr);
    }
    n.view = std::move(*v);
  }
  return intern(std::move(n));
}

NodeId Graph::add(const Node& node) {
  switch (node.op) {
    case Op::Input: {
      BRAZE_CHECK(node.attr.ints.size() == 1 && node.attr.ints[0] == static_cast<int64_t>(inputs_.size()),
                  "input: inputs must be numbered 0, 1, ... in order");
      return input(node.dtype, node.shape());
    }
    case Op::Const:
      BRAZE_CHECK(node.shape().empty(), "full: a constant node is a scalar");
      return is_float(node.dtype) ? constant(node.dtype, node.attr.reals.at(0))
                                  : constant_int(node.dtype, node.attr.ints.at(0));
    case Op::Arange: {
      BRAZE_CHECK(node.rank() == 1, "arange: a 1-d node");
      const Attr& a = node.attr;
      if (is_float(node.dtype)) return arange(node.dtype, node.shape()[0], a.reals.at(0), a.reals.at(1));
      BRAZE_CHECK(a.ints.size() == 2, "arange: attr needs start and step");
      return intern(Node{Op::Arange, node.dtype, View::contiguous(node.shape()), {}, a});
    }
    default: break;
  }
  for (NodeId i : node.inputs) BRAZE_CHECK(i < nodes_.size(), info(node.op).api, ": input ", i, " is not an earlier node");
  NodeId id = apply(node.op, node.inputs, node.attr);
  BRAZE_CHECK(nodes_[id].dtype == node.dtype && nodes_[id].shape() == node.shape(), info(node.op).api,
              ": recorded type ", name(node.dtype), to_string(node.shape()), " differs from the inferred ",
              name(nodes_[id].dtype), to_string(nodes_[id].shape()));
  return id;
}

}  // namespace braze
