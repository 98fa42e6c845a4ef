// The graph: interned nodes in topological order, built by validating
// builders. Plain data: passes copy and rewrite it, backends read it.
#pragma once

#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "graph/node.h"

namespace braze {

// The view of movement op `op` (attr ints `a`) applied to a node viewed as
// `in`; nullopt when it is a reshape that strides cannot express.
std::optional<View> move_view(const View& in, Op op, const std::vector<int64_t>& a);

class Graph {
 public:
  // Leaves.
  NodeId input(DType dtype, Shape shape);  // the next input number
  NodeId constant(DType dtype, double value);
  NodeId constant_int(DType dtype, int64_t value);
  NodeId arange(DType dtype, int64_t n, double start, double step);

  // Any non-leaf op: validated by infer() (user errors are thrown here),
  // its view derived from its input's (Note [Views]), then interned so an
  // identical node is the same id. A reshape whose input's layout cannot be
  // expressed with strides gets a Copy first.
  NodeId apply(Op op, std::span<const NodeId> inputs, Attr attr = {});
  NodeId apply(Op op, std::initializer_list<NodeId> inputs, Attr attr = {}) {
    return apply(op, std::span<const NodeId>(inputs.begin(), inputs.size()), std::move(attr));
  }

  // Adds a node as it is, after checking that it is well formed: what the
  // JSON loader and passes use. Leaves keep their attrs and types.
  NodeId add(const Node& node);

  const Node& operator[](NodeId id) const { return nodes_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }
  // Input nodes in input-number order.
  const std::vector<NodeId>& inputs() const { return inputs_; }

  std::vector<NodeId> outputs;  // what realize returns, in order

  // NumPy broadcasting of `id` to `shape` as Reshape (leading 1s) + Expand.
  NodeId broadcast_to(NodeId id, Shape shape);

  // The node whose storage `id` reads: itself unless it is a movement op.
  NodeId base(NodeId id) const;

 private:
  NodeId intern(Node node);

  std::vector<Node> nodes_;
  std::vector<NodeId> inputs_;
  std::unordered_map<Node, NodeId, NodeHash> index_;
};

}  // namespace braze
