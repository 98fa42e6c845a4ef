// lift(): a Graph back into lazy tensors, the inverse of lower().
#include <algorithm>

#include "runtime/lower.h"

namespace braze {

std::vector<Tensor> lift(const Graph& g, std::span<const Array> inputs) {
  BRAZE_CHECK(inputs.size() == g.inputs().size(), "load_graph: the graph reads ", g.inputs().size(),
              " inputs but ", inputs.size(), " arrays were given (save it with its data, or pass inputs)");
  // The tensors live where the input arrays do (Note [Device arrays]).
  const Device device = inputs.empty() ? Device{} : inputs[0].device;
  for (const Array& a : inputs)
    BRAZE_CHECK(a.device == device, "lift: inputs on ", device.str(), " and ", a.device.str(), "; a graph runs on one device");
  std::vector<std::shared_ptr<TensorNode>> nodes(g.size());
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g[id];
    auto t = std::make_shared<TensorNode>(TensorNode{n.op, n.dtype, n.shape(), n.attr, device, {}, {}, 0});
    for (NodeId i : n.inputs) {
      t->inputs.push_back(nodes[i]);
      t->depth = std::max(t->depth, nodes[i]->depth + 1);
    }
    if (n.op == Op::Input) {
      const Array& a = inputs[n.attr.ints[0]];
      BRAZE_CHECK(a.dtype == n.dtype && a.shape == n.shape(), "load_graph: input ", n.attr.ints[0], " is ",
                  name(a.dtype), to_string(a.shape), " but the graph expects ", name(n.dtype), to_string(n.shape()));
      t->data = a;
    }
    nodes[id] = std::move(t);
  }
  std::vector<Tensor> out;
  for (NodeId id : g.outputs) out.emplace_back(nodes[id]);
  return out;
}

}  // namespace braze
