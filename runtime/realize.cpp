// realize(): lower the lazy DAG to a Graph, fuse it and run it (Note [Lazy tensors]).
#include <bit>
#include <cstring>
#include <unordered_map>

#include "graph/reference.h"
#include "runtime/context.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace braze {

bool is_structural_constant(DType dtype, const Attr& value) {
  if (dtype == DType::Bool) return true;
  if (is_float(dtype)) {
    uint64_t bits = std::bit_cast<uint64_t>(value.reals[0]);
    for (double v : {0.0, -0.0, 1.0, -1.0, 2.0})
      if (bits == std::bit_cast<uint64_t>(v)) return true;
    return false;
  }
  int64_t v = value.ints[0];
  return v == 0 || v == 1 || v == -1 || v == 2;
}

void store_scalar(const ScalarParam& p, const Array& into) {
  if (is_float(p.dtype)) store_double(p.dtype, into.data.get(), 0, p.value.reals[0]);
  else store_int(p.dtype, into.data.get(), 0, p.value.ints[0]);
}

Lowered lower(std::span<const Tensor> roots, LowerOptions options) {
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
    } else if (options.scalars_as_inputs && n->op == Op::Const && !is_structural_constant(n->dtype, n->attr)) {
      id = out.graph.input(n->dtype, {});
      out.scalars.push_back({static_cast<int64_t>(out.inputs.size()), n->dtype, n->attr});
      out.inputs.emplace_back();
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

namespace {

ArrayAllocator counted_allocator() {
  return [](DType dtype, Shape shape) {
    Array a = allocate_array(dtype, std::move(shape));
    Stats& stats = Runtime::get().stats();
    stats.allocations.fetch_add(1, std::memory_order_relaxed);
    stats.bytes_allocated.fetch_add(static_cast<int64_t>(a.bytes()), std::memory_order_relaxed);
    return a;
  };
}

// Evaluates `roots` (none realized) into new arrays or into `out`.
std::vector<Array> evaluate(std::span<const Tensor> roots, std::span<const Array> out) {
  Runtime& rt = Runtime::get();
  ArrayAllocator counted = counted_allocator();
  std::vector<Array> results;
  if (rt.backend() == BackendKind::Reference) {
    Lowered lowered = lower(roots);
    results = reference::evaluate(lowered.graph, lowered.inputs, lowered.graph.outputs, counted);
    rt.stats().reference_evaluations.fetch_add(1, std::memory_order_relaxed);
    for (size_t i = 0; i < out.size(); ++i) std::memcpy(out[i].data.get(), results[i].data.get(), results[i].bytes());
  } else {
    Lowered lowered = lower(roots, {.scalars_as_inputs = true});
    MemoryOptions memory{.arena = rt.arena(), .poison = rt.poison()};
    ProgramCache::Found found = rt.programs().find_or_make(program_key(lowered.graph, memory), [&] {
      return std::make_shared<Program>(lowered, KernelMode::Generated, memory, counted);
    });
    (found.compiled ? rt.stats().programs_compiled : rt.stats().programs_replayed)
        .fetch_add(1, std::memory_order_relaxed);
    results = found.program->run(lowered, counted, out);
  }
  rt.stats().realizations.fetch_add(1, std::memory_order_relaxed);
  return results;
}

}  // namespace

void realize(std::span<const Tensor> tensors) {
  std::vector<Tensor> todo;
  for (const Tensor& t : tensors) {
    BRAZE_CHECK(t.defined(), "realize: an empty Tensor handle");
    if (!t.is_realized()) todo.push_back(t);
  }
  if (todo.empty()) return;
  std::vector<Array> results = evaluate(todo, {});
  for (size_t i = 0; i < todo.size(); ++i) {
    TensorNode& n = *todo[i].node();
    n.data = std::move(results[i]);
    n.inputs.clear();  // a realized tensor is a leaf from now on
    n.depth = 0;
  }
}

void assign(std::span<const Tensor> out, std::span<const Tensor> values) {
  BRAZE_CHECK(out.size() == values.size(), "assign: ", out.size(), " targets but ", values.size(), " values");
  std::vector<Tensor> todo;
  std::vector<Array> targets;
  for (size_t i = 0; i < out.size(); ++i) {
    BRAZE_CHECK(out[i].defined() && values[i].defined(), "assign: an empty Tensor handle");
    BRAZE_CHECK(out[i].is_realized(), "assign: target ", i, " is lazy; only a realized tensor has storage to write into");
    BRAZE_CHECK(out[i].dtype() == values[i].dtype() && out[i].shape() == values[i].shape(), "assign: target ", i,
                " is ", name(out[i].dtype()), to_string(out[i].shape()), " but the value is ", name(values[i].dtype()),
                to_string(values[i].shape()));
    for (size_t j = 0; j < i; ++j)
      BRAZE_CHECK(out[j].node()->data->data != out[i].node()->data->data, "assign: targets ", j, " and ", i,
                  " are the same storage");
    const Array& target = *out[i].node()->data;
    if (values[i].is_realized()) {
      const Array& v = *values[i].node()->data;
      if (v.data != target.data) std::memmove(target.data.get(), v.data.get(), v.bytes());
      continue;
    }
    todo.push_back(values[i]);
    targets.push_back(target);
  }
  if (!todo.empty()) evaluate(todo, targets);
}

}  // namespace braze
