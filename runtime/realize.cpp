// realize(): lower the lazy DAG to a Graph, fuse it and run it (Note [Lazy tensors]).
#include <unordered_map>

#include "graph/reference.h"
#include "runtime/context.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "runtime/tensor.h"

namespace braze {

Lowered lower(std::span<const Tensor> roots) {
  Lowered out;
  std::unordered_map<const TensorNode*, NodeId> ids;
  // Iterative post-order walk: user graphs can be deeper than the stack.
  std::vector<std::pair<const TensorNode*, bool>> stack;
  for (const Tensor& t : roots) stack.emplace_back(t.node().get(), false);
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    if (ids.count(n)) continue;
    if (!n->data && !expanded) {
      stack.emplace_back(n, true);
      for (auto it = n->inputs.rbegin(); it != n->inputs.rend(); ++it)
        if (!ids.count(it->get())) stack.emplace_back(it->get(), false);
      continue;
    }
    NodeId id;
    if (n->data) {
      id = out.graph.input(n->dtype, n->shape);
      out.inputs.push_back(*n->data);
    } else if (info(n->op).kind == FusionKind::Leaf) {
      id = out.graph.add(Node{n->op, n->dtype, View::contiguous(n->shape), {}, n->attr});
    } else {
      std::vector<NodeId> in;
      for (const auto& x : n->inputs) in.push_back(ids.at(x.get()));
      id = out.graph.apply(n->op, in, n->attr);
    }
    ids.emplace(n, id);
  }
  for (const Tensor& t : roots) out.graph.outputs.push_back(ids.at(t.node().get()));
  return out;
}

void realize(std::span<const Tensor> tensors) {
  std::vector<Tensor> todo;
  for (const Tensor& t : tensors) {
    BRAZE_CHECK(t.defined(), "realize: an empty Tensor handle");
    if (!t.is_realized()) todo.push_back(t);
  }
  if (todo.empty()) return;
  Runtime& rt = Runtime::get();
  Lowered lowered = lower(todo);
  ArrayAllocator counted = [&rt](DType dtype, Shape shape) {
    Array a = allocate_array(dtype, std::move(shape));
    rt.stats().allocations.fetch_add(1, std::memory_order_relaxed);
    rt.stats().bytes_allocated.fetch_add(static_cast<int64_t>(a.bytes()), std::memory_order_relaxed);
    return a;
  };
  std::vector<Array> results;
  if (rt.backend() == BackendKind::Reference) {
    results = reference::evaluate(lowered.graph, lowered.inputs, lowered.graph.outputs, counted);
    rt.stats().reference_evaluations.fetch_add(1, std::memory_order_relaxed);
  } else {
    results = execute(make_schedule(lowered.graph), lowered.inputs, counted, KernelMode::Generated,
                      MemoryOptions{.arena = rt.arena(), .poison = rt.poison()});
  }
  rt.stats().realizations.fetch_add(1, std::memory_order_relaxed);
  for (size_t i = 0; i < todo.size(); ++i) {
    TensorNode& n = *todo[i].node();
    n.data = std::move(results[i]);
    n.inputs.clear();  // a realized tensor is a leaf from now on
  }
}

}  // namespace braze
