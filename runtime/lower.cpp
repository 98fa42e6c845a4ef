// lower(): the lazy DAG under some tensors as a Graph, by way of walk(),
// which is all a replayed program needs (Note [Programs]).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include "runtime/lower.h"

namespace braze {

namespace {

template <class T>
void append(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <class T>
void append_all(std::string& key, const std::vector<T>& vs) {
  append(key, static_cast<uint32_t>(vs.size()));
  key.append(reinterpret_cast<const char*>(vs.data()), vs.size() * sizeof(T));
}

bool is_parameter(const TensorNode& n, LowerOptions options) {
  return options.scalars_as_inputs && !n.data && n.op == Op::Const && !is_structural_constant(n.dtype, n.attr);
}

// What the key says of one node, seen as `seen`; its inputs (`operands`,
// their places in the walk) are already in the key.
void append_node(std::string& key, const TensorNode& n, Walk::Seen seen, std::span<const uint32_t> operands) {
  append(key, seen);
  append(key, n.dtype);
  if (seen == Walk::Seen::Parameter) return;
  append_all(key, n.shape);
  if (seen == Walk::Seen::Data) return;
  append(key, n.op);
  append_all(key, n.attr.ints);
  append_all(key, n.attr.reals);  // by bits: -0.0 is not 0.0 (only special values reach here)
  append(key, static_cast<uint32_t>(operands.size()));
  for (uint32_t i : operands) append(key, i);
}

// Note [Element reads are inputs]
// A[i, j] of a realized tensor is a lazy view of one element, at an offset
// that the program would bake in: a loop over the elements of a matrix
// (A[i, j] /= A[j, j] in an LU sweep) compiled a program per (i, j), 110
// us each, until the program cache thrashed: 5.3 s where NumPy takes 9 ms.
// So the walk reads such an element where it is, in host memory (the
// value a kernel would load: stored values never change under a lazy
// tensor, Note [In-place updates]), and hands it to the program as an
// input of its own: the program is keyed by the element's dtype and
// shape, and one program serves every (i, j). A view of a value not in
// host memory, or outside a pad's window, stays a view. Realize's walk
// and explain's read elements (LowerOptions::elements_as_inputs); a graph
// saved or shown by the CLI keeps its views of the tensors it names.
std::optional<Array> element_read(const TensorNode& n) {
  if (!is_movement(n.op) || numel(n.shape) != 1) return std::nullopt;
  std::vector<const TensorNode*> chain;
  const TensorNode* base = &n;
  while (!base->data && is_movement(base->op) && !base->inputs.empty()) {
    chain.push_back(base);
    base = base->inputs[0].get();
  }
  if (!base->data || !base->data->device.is_cpu()) return std::nullopt;
  View v = View::contiguous(base->shape);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    std::optional<View> moved = move_view(v, (*it)->op, (*it)->attr.ints);
    if (!moved) return std::nullopt;
    v = *moved;
  }
  if (v.windowed()) return std::nullopt;
  Array one = allocate_array(n.dtype, n.shape);
  const size_t item = itemsize(n.dtype);
  std::memcpy(one.data.get(), base->data->data.get() + v.offset * static_cast<int64_t>(item), item);
  return one;
}

}  // namespace

bool is_structural_constant(DType dtype, const Attr& value) {
  if (dtype == DType::Bool) return true;
  if (is_float(dtype)) {
    uint64_t bits = std::bit_cast<uint64_t>(value.reals[0]);
    for (double v : {0.0, -0.0, 1.0, -1.0, 2.0})
      if (bits == std::bit_cast<uint64_t>(v)) return true;
    // The coefficients by which fusion/epilogue.cpp recognises gelu after a
    // matmul (compared there at float32 precision).
    const float f = static_cast<float>(value.reals[0]);
    for (double v : {0.5, 1.0 / std::sqrt(2.0), std::sqrt(2.0 / 3.14159265358979323846), 0.044715})
      if (f == static_cast<float>(v)) return true;
    return false;
  }
  int64_t v = value.ints[0];
  return v == 0 || v == 1 || v == -1 || v == 2;
}

void store_scalar(const ScalarParam& p, const Array& into) {
  if (is_float(p.dtype)) store_double(p.dtype, into.data.get(), 0, p.real);
  else store_int(p.dtype, into.data.get(), 0, p.integer);
}

Walk walk(std::span<const Tensor> roots, LowerOptions options, bool with_key) {
  Walk w;
  w.options = options;
  w.index.reserve(64);
  w.first_operand.push_back(0);
  NodeReadLock lock;  // Note [Shared lazy tensors]
  // Iterative post-order: user graphs can be deeper than the stack. The
  // entries point at the roots' and the nodes' own handles, which stay
  // while the lock is held.
  std::vector<std::pair<const std::shared_ptr<TensorNode>*, bool>> stack;
  for (const Tensor& t : roots) stack.emplace_back(&t.node(), false);
  while (!stack.empty()) {
    auto [handle, expanded] = stack.back();
    stack.pop_back();
    const TensorNode* n = handle->get();
    if (w.index.count(n)) continue;
    if (n->value_of && !n->data) {  // Note [Checkpoints]: the value is another node's
      if (const auto v = w.index.find(n->value_of.get()); v != w.index.end()) {
        w.index.emplace(n, v->second);
      } else {
        stack.emplace_back(handle, false);
        stack.emplace_back(&n->value_of, false);
      }
      continue;
    }
    std::optional<Array> element =
        n->data || !options.elements_as_inputs ? std::nullopt : element_read(*n);
    if (!n->data && !element && !expanded) {
      stack.emplace_back(handle, true);
      for (auto it = n->inputs.rbegin(); it != n->inputs.rend(); ++it)
        if (!w.index.count(it->get())) stack.emplace_back(&*it, false);
      continue;
    }
    const bool parameter = is_parameter(*n, options);
    const bool data = n->data || element;
    const Walk::Seen seen = data ? Walk::Seen::Data : parameter ? Walk::Seen::Parameter : Walk::Seen::Recorded;
    if (data) {
      w.inputs.push_back(element ? std::move(*element) : *n->data);
    } else if (parameter) {
      const bool real = is_float(n->dtype);
      ScalarParam p{static_cast<int64_t>(w.inputs.size()), n->dtype, real ? n->attr.reals[0] : 0.0,
                    real ? 0 : n->attr.ints[0]};
      // Equal numbers are one parameter, as a Graph interns equal Consts
      // into one node: the program's kernels are those of the graph that
      // bz.save_graph writes (Note [Scalar parameters]).
      auto same = std::find_if(w.scalars.begin(), w.scalars.end(), [&](const ScalarParam& q) {
        return q.dtype == p.dtype && std::bit_cast<uint64_t>(q.real) == std::bit_cast<uint64_t>(p.real) &&
               q.integer == p.integer;
      });
      if (same != w.scalars.end()) {
        w.index.emplace(n, w.scalar_nodes[same - w.scalars.begin()]);
        continue;
      }
      w.scalars.push_back(p);
      w.scalar_nodes.push_back(static_cast<uint32_t>(w.order.size()));
      w.inputs.emplace_back();
    } else {
      for (const auto& in : n->inputs) w.operands.push_back(w.index.at(in.get()));
    }
    const size_t first = w.first_operand.back();
    if (with_key)
      append_node(w.key, *n, seen, std::span<const uint32_t>(w.operands).subspan(first, w.operands.size() - first));
    w.index.emplace(n, static_cast<uint32_t>(w.order.size()));
    w.order.push_back(*handle);
    w.seen.push_back(seen);
    w.first_operand.push_back(static_cast<uint32_t>(w.operands.size()));
  }
  if (with_key)
    for (const Tensor& t : roots) append(w.key, w.index.at(t.node().get()));
  return w;
}

Lowered lower(const Walk& w, std::span<const Tensor> roots) {
  Lowered out;
  out.inputs = w.inputs;
  out.scalars = w.scalars;
  std::vector<NodeId> ids(w.order.size());
  size_t next_scalar = 0;
  for (size_t k = 0; k < w.order.size(); ++k) {
    const TensorNode& n = *w.order[k];
    if (w.seen[k] == Walk::Seen::Data) {
      ids[k] = out.graph.input(n.dtype, n.shape);
    } else if (w.seen[k] == Walk::Seen::Parameter) {
      BRAZE_ASSERT(w.scalars.at(next_scalar).input == static_cast<int64_t>(out.graph.inputs().size()),
                   "parameter ", next_scalar, " is numbered apart from the walk");
      ids[k] = out.graph.input(n.dtype, {});
      ++next_scalar;
    } else if (info(n.op).kind == FusionKind::Leaf) {
      ids[k] = out.graph.add(Node{n.op, n.dtype, View::contiguous(n.shape), {}, n.attr});
    } else {
      std::vector<NodeId> in;
      for (uint32_t i = w.first_operand[k]; i < w.first_operand[k + 1]; ++i) in.push_back(ids[w.operands[i]]);
      ids[k] = out.graph.apply(n.op, in, n.attr);
    }
  }
  for (const Tensor& t : roots) out.graph.outputs.push_back(ids[w.index.at(t.node().get())]);
  return out;
}

Graph with_scalar_parameters(const Graph& g) {
  Graph out;
  std::vector<NodeId> ids(g.size());
  for (NodeId id = 0; id < g.size(); ++id) {
    Node n = g[id];
    if (n.op == Op::Input) {
      ids[id] = out.input(n.dtype, n.shape());
    } else if (n.op == Op::Const && !is_structural_constant(n.dtype, n.attr)) {
      ids[id] = out.input(n.dtype, {});
    } else {
      for (NodeId& i : n.inputs) i = ids[i];
      ids[id] = out.add(n);
    }
  }
  for (NodeId o : g.outputs) out.outputs.push_back(ids[o]);
  return out;
}

Lowered lower(std::span<const Tensor> roots, LowerOptions options) {
  return lower(walk(roots, options, /*with_key=*/false), roots);
}

}  // namespace braze
