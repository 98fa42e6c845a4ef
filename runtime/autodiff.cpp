// Reverse mode (Note [Reverse mode], autodiff.h): the walk, and the rules
// of gradients.def turned into one function per op.
#include "runtime/autodiff.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <numbers>
#include <unordered_map>
#include <unordered_set>

#include "runtime/ops.h"

namespace braze {

namespace {

thread_local bool t_grad_enabled = true;
thread_local int t_tracing = 0;  // Note [Traced functions add no depth]

using Grads = std::vector<Tensor>;

std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& p) {
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

// A slice's gradient: g put back where the slice read, zeros elsewhere.
// Per axis (start b, step s, length m): a negative step reads g reversed
// from the lowest index read; a step past 1 puts s - 1 zeros between its
// elements (spread); then padding fills the rest of the axis. All views
// but the spread, which is one kernel.
Tensor slice_gradient(Tensor g, const Shape& shape, const std::vector<int64_t>& a) {
  const size_t rank = shape.size();
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = a[d], s = a[rank + d], m = a[2 * rank + d];
    if (m == 0) {  // nothing read: zeros along the whole axis
      after[d] = shape[d];
      continue;
    }
    int64_t first = b;
    if (s < 0) {
      std::vector<Index> items(rank, Slice{});
      items[d] = Slice{std::nullopt, std::nullopt, -1};
      g = index(g, items);
      first = b + (m - 1) * s;
    }
    g = spread(g, static_cast<int64_t>(d), s < 0 ? -s : s);
    before[d] = first;
    after[d] = shape[d] - first - g.shape()[d];
  }
  return pad(g, before, after);
}

// Pad's gradient: the slice of g its input became.
std::vector<Index> pad_gradient_items(const Shape& shape, const std::vector<int64_t>& a) {
  std::vector<Index> items;
  for (size_t d = 0; d < shape.size(); ++d) items.push_back(Slice{a[d], a[d] + shape[d], 1});
  return items;
}

// max/min: the elements equal to the result share its gradient evenly.
Tensor extremum_gradient(const Tensor& g, const Tensor& y, const Tensor& x, const std::vector<int64_t>& axes) {
  Tensor hit = astype(equal(x, y), g.dtype());
  return hit * (g / sum(hit, axes, /*keepdims=*/true));
}

// prod: the product of the other elements, exact where there are zeros:
// with no zero it is y / x; with one zero, the zero's is the product of
// the rest and the others' are 0; with two or more, all are 0.
Tensor prod_gradient(const Tensor& g, const Tensor& y, const Tensor& x, const std::vector<int64_t>& axes) {
  Tensor zero = equal(x, 0);
  Tensor zeros = sum(astype(zero, DType::Int32), axes, /*keepdims=*/true);
  Tensor rest = prod(where(zero, 1, x), axes, /*keepdims=*/true);  // the product of the nonzero elements
  Tensor others = where(equal(zeros, 0), y / where(zero, 1, x), where(zero & equal(zeros, 1), rest, 0));
  return g * others;
}

// Note [Convolution gradients]
// Both gradients of conv2d are convolutions themselves, recorded as conv2d
// library calls (oneDNN's or cuDNN's forward primitive) on views:
// - the input's, with stride 1: the convolution of g with the weight
//   flipped in space and with its channel axes swapped (per group), padded
//   by (effective kernel - 1 - padding);
// - the weight's: the convolution of x with g as its weight, the batch
//   axis taking the place of the channels (x and g with their first two
//   axes swapped; per group), stride and dilation exchanging roles, cut to
//   the kernel's size.
// With stride > 1, g is first spread out with stride - 1 zeros between its
// elements (interior padding) and padded at the end with the rows and
// columns the forward pass's stride skipped, so the stride-1 convolution
// gives x's shape.
Tensor conv2d_input_gradient(Tensor g, const Tensor& x, const Tensor& w, const std::vector<int64_t>& a) {
  const int64_t groups = a[6];
  const Shape& ws = w.shape();  // [O, C / groups, kh, kw]
  std::array<int64_t, 2> pad{};
  std::vector<int64_t> zeros(4, 0), tail(4, 0);
  for (int i = 0; i < 2; ++i) {
    pad[i] = a[4 + i] * (ws[2 + i] - 1) - a[2 + i];
    BRAZE_CHECK(pad[i] >= 0, "gradient of conv2d: not supported yet: padding ", a[2 + i],
                " wider than the dilated kernel less one");
    g = spread(g, 2 + i, a[i]);
    // x's extent the forward windows covered is (out - 1) * stride + span; the rest had no gradient.
    tail[2 + i] = x.shape()[2 + i] + 2 * a[2 + i] - a[4 + i] * (ws[2 + i] - 1) - g.shape()[2 + i];
  }
  g = braze::pad(g, zeros, tail);
  Index all = Slice{}, reversed = Slice{std::nullopt, std::nullopt, -1};
  Index flip_items[] = {all, all, reversed, reversed};
  Tensor flipped = index(w, flip_items);
  // [O, C/g, kh, kw] -> per group [C/g, O/g]: [g, O/g, C/g, ...] -> [g, C/g, O/g, ...] -> [C, O/g, ...].
  Tensor swapped = reshape(
      permute(reshape(flipped, {groups, ws[0] / groups, ws[1], ws[2], ws[3]}), {0, 2, 1, 3, 4}),
      {groups * ws[1], ws[0] / groups, ws[2], ws[3]});
  Tensor dx = conv2d(g, swapped, std::nullopt, Conv2dOptions{{1, 1}, pad, {a[4], a[5]}, groups});
  BRAZE_ASSERT(dx.shape() == x.shape(), "conv2d input gradient of shape ", to_string(dx.shape()));
  return dx;
}

Tensor conv2d_weight_gradient(const Tensor& g, const Tensor& x, const Tensor& w, const std::vector<int64_t>& a) {
  const int64_t groups = a[6];
  const Shape& xs = x.shape();  // [N, C, H, W]
  // x as [C/g, g * N, H, W]: a batch of the channels within a group, whose
  // channels are (group, sample), so group k of the convolution pairs the
  // samples of x's group k with the output channels of g's group k.
  Tensor xt = reshape(permute(reshape(x, {xs[0], groups, xs[1] / groups, xs[2], xs[3]}), {2, 1, 0, 3, 4}),
                      {xs[1] / groups, groups * xs[0], xs[2], xs[3]});
  Tensor gt = permute(g, {1, 0, 2, 3});  // [O, N, Ho, Wo]
  Tensor full = conv2d(xt, gt, std::nullopt, Conv2dOptions{{a[4], a[5]}, {a[2], a[3]}, {a[0], a[1]}, groups});
  Index all = Slice{}, rows = Slice{0, w.shape()[2], 1}, cols = Slice{0, w.shape()[3], 1};
  Index cut[] = {all, all, rows, cols};
  return permute(index(full, cut), {1, 0, 2, 3});
}

// The gradient of an input of `shape` that a rule gave in the (broadcast)
// shape of the result: summed over the axes the broadcast added or widened.
Tensor unbroadcast(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const size_t lead = g.shape().size() - shape.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < g.shape().size(); ++i)
    if (i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1)) axes.push_back(static_cast<int64_t>(i));
  return reshape(sum(g, axes, /*keepdims=*/true), shape);
}

[[noreturn, maybe_unused]] void no_gradient(Op op, const char* why) {  // for BRAZE_GRAD_MISSING rows (none today)
  BRAZE_CHECK(false, "gradient of ", info(op).api, ": not supported yet: ", why);
  std::abort();
}

#define BRAZE_RULE_ARGS                                                                                    \
  [[maybe_unused]] const Tensor &g, [[maybe_unused]] const Tensor &y, [[maybe_unused]] const Grads &x, \
      [[maybe_unused]] const std::vector<bool> &need, [[maybe_unused]] const TensorNode &n
#define BRAZE_GRAD(name, ...) \
  Grads grad_##name(BRAZE_RULE_ARGS) { __VA_ARGS__ }
#define BRAZE_NONDIFF(name)                                                                          \
  Grads grad_##name(BRAZE_RULE_ARGS) {                                                               \
    BRAZE_ASSERT(false, "a gradient reached ", info(Op::name).api, ", whose result is never a float"); \
    return {};                                                                                       \
  }
#define BRAZE_GRAD_MISSING(name, why) \
  Grads grad_##name(BRAZE_RULE_ARGS) { no_gradient(Op::name, why); }
#include "runtime/gradients.def"
#undef BRAZE_GRAD
#undef BRAZE_NONDIFF
#undef BRAZE_GRAD_MISSING
#undef BRAZE_RULE_ARGS

Grads apply_rule(const TensorNode& n, const Tensor& g, const Tensor& y, const Grads& x, const std::vector<bool>& need) {
  switch (n.op) {
#define BRAZE_OP(name, api, arity, kind, rule, numpy, flags, builder) \
  case Op::name: return grad_##name(g, y, x, need, n);
#include "graph/ops.def"
  }
  BRAZE_ASSERT(false, "unknown op");
  return {};
}

// The inputs of a node that requires a gradient: kept even once realized
// (Note [Reverse mode]); read under the node lock all the same.
std::vector<std::shared_ptr<TensorNode>> inputs_of(const TensorNode& n) {
  NodeReadLock lock;
  return n.inputs;
}

// Where a node's gradient goes: its inputs, or for an output of
// checkpoint() the call's frontier (Note [Checkpoints]).
std::vector<std::shared_ptr<TensorNode>> gradient_inputs(const TensorNode& n) {
  if (!n.checkpoint) return inputs_of(n);
  std::vector<std::shared_ptr<TensorNode>> to;
  for (const Tensor& t : n.checkpoint->call->frontier) to.push_back(t.node());
  return to;
}

// The nodes between `outputs` and `wrt`, in topological order (inputs first):
// those that require a gradient and lead to one of wrt.
// With `partial`, the walk stops at wrt: the gradients are partial
// derivatives, each of wrt held apart from the others.
std::vector<std::shared_ptr<TensorNode>> between(std::span<const Tensor> outputs,
                                                 const std::unordered_set<const TensorNode*>& wrt, bool partial) {
  std::unordered_map<const TensorNode*, bool> leads;  // visited: whether it leads to wrt
  std::vector<std::shared_ptr<TensorNode>> order;
  struct Frame {
    std::shared_ptr<TensorNode> node;
    std::vector<std::shared_ptr<TensorNode>> inputs;
    size_t next = 0;
  };
  for (const Tensor& out : outputs) {
    if (!out.node()->requires_grad || leads.count(out.node().get())) continue;
    std::vector<Frame> stack;
    stack.push_back({out.node(), gradient_inputs(*out.node())});
    leads[out.node().get()] = false;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.inputs.size() && !(partial && wrt.count(f.node.get()))) {
        std::shared_ptr<TensorNode> in = f.inputs[f.next++];
        if (in->requires_grad && !leads.count(in.get())) {
          leads[in.get()] = false;
          std::vector<std::shared_ptr<TensorNode>> ins = gradient_inputs(*in);
          stack.push_back({std::move(in), std::move(ins)});
        }
        continue;
      }
      bool lead = wrt.count(f.node.get()) > 0;
      for (const auto& in : f.inputs) lead |= in->requires_grad && leads[in.get()];
      leads[f.node.get()] = lead;
      if (lead) order.push_back(f.node);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<Tensor> gradients(std::span<const Tensor> outputs, std::span<const Tensor> cotangents,
                              std::span<const Tensor> wrt, bool partial);

// The variables under `todo`: the nodes that require a gradient and whose
// gradient inputs do not (where gradients start), reached through nodes
// that require one, not through those `seen` already.
std::vector<Tensor> variables_under(std::vector<std::shared_ptr<TensorNode>> todo,
                                    std::unordered_set<const TensorNode*> seen) {
  std::vector<Tensor> variables;
  while (!todo.empty()) {
    std::shared_ptr<TensorNode> n = todo.back();
    todo.pop_back();
    if (!seen.insert(n.get()).second) continue;
    bool start = true;
    for (const auto& in : gradient_inputs(*n))
      if (in->requires_grad) {
        start = false;
        todo.push_back(in);
      }
    if (start) variables.emplace_back(n);
  }
  return variables;
}

// One element of a cotangent, as a 0-d view (a whole sum if it has none):
// what a recomputation waits for (Note [Checkpoints]).
Tensor token_of(const Tensor& g) {
  if (g.numel() == 0) return sum(g);
  Index first[] = {int64_t{0}};
  return index(reshape(g, {-1}), first);
}

// Whether the policy keeps the forward's value of a node of `op`.
bool saveable(CheckpointPolicy policy, Op op) {
  switch (policy) {
    case CheckpointPolicy::NothingSaveable: return false;
    case CheckpointPolicy::DotsSaveable: return info(op).kind == FusionKind::Opaque;
    case CheckpointPolicy::DotsAndReductionsSaveable: return info(op).kind == FusionKind::Opaque || is_reduce(op);
  }
  return false;
}

// f's nodes again, on depend(arg, token) for each argument: every node
// between the outputs and an argument copied, the rest (what f closed
// over, constants) shared. A realized node is its value. `copies` starts
// with the arguments' depend nodes.
std::vector<Tensor> recompute(const Checkpoint& call, std::unordered_map<const TensorNode*, Tensor>& copies) {
  std::unordered_map<const TensorNode*, Tensor> kept;  // nodes that need no copy, by themselves
  std::unordered_set<const TensorNode*> arguments;
  for (const Tensor& a : call.args) arguments.insert(a.node().get());
  std::vector<std::pair<std::shared_ptr<TensorNode>, std::vector<std::shared_ptr<TensorNode>>>> stack;
  auto copy_of = [&](const std::shared_ptr<TensorNode>& n) -> const Tensor* {
    if (auto c = copies.find(n.get()); c != copies.end()) return &c->second;
    if (auto k = kept.find(n.get()); k != kept.end()) return &k->second;
    return nullptr;
  };
  std::vector<Tensor> result;
  for (const Tensor& out : call.outputs) {
    if (const Tensor* c = copy_of(out.node())) {  // an argument returned as it is
      result.push_back(*c);
      continue;
    }
    stack.push_back({out.node(), inputs_of(*out.node())});
    while (!stack.empty()) {
      auto& [n, ins] = stack.back();
      auto pending = std::find_if(ins.begin(), ins.end(), [&](const auto& in) { return !copy_of(in); });
      if (pending != ins.end()) {
        std::shared_ptr<TensorNode> next = *pending;
        stack.push_back({next, inputs_of(*next)});
        continue;
      }
      // A node the policy keeps reads an argument itself, not its depend
      // node: its copy computes nothing, and its gradient (a library call
      // reading the argument, say) then needs no copy of the argument.
      const bool keeps = saveable(call.policy, n->op);
      std::vector<Operand> operands;
      bool changed = false;
      for (const auto& in : ins) {
        const bool argument = keeps && arguments.count(in.get());
        const Tensor* c = copy_of(in);
        changed |= argument || c->node() != in;
        operands.emplace_back(argument ? Tensor(in) : *c);
      }
      if (changed) {
        Tensor c = record(n->op, operands, n->attr);
        if (keeps) c.node()->value_of = n;  // the forward's value, this copy's gradient
        copies.try_emplace(n.get(), std::move(c));
      } else {
        kept.try_emplace(n.get(), Tensor(n));
      }
      stack.pop_back();
    }
    result.push_back(*copy_of(out.node()));
  }
  return result;
}

// The gradients for a checkpoint's frontier, given the cotangents of its
// outputs (undefined where none reached one).
std::vector<Tensor> checkpoint_gradient(const Checkpoint& call, const std::vector<Tensor>& cotangents) {
  Tensor token;
  std::vector<Tensor> outs, cots;
  for (size_t i = 0; i < cotangents.size(); ++i)
    if (cotangents[i].defined()) {
      if (!token.defined()) token = token_of(cotangents[i]);
      cots.push_back(cotangents[i]);
    }
  std::unordered_map<const TensorNode*, Tensor> copies;
  std::vector<Tensor> again;
  {
    GradModeScope recording(true);  // the copy's gradient is taken next
    for (const Tensor& a : call.args) copies.try_emplace(a.node().get(), depend(a, astype(token, a.dtype())));
    again = recompute(call, copies);
  }
  for (size_t i = 0; i < cotangents.size(); ++i)
    if (cotangents[i].defined()) outs.push_back(again[i]);
  // An argument's gradient comes through its depend node and, where a
  // kept node reads it directly, through itself; the variables f closed
  // over are read by the copy as they are.
  std::vector<Tensor> wrt;
  std::vector<size_t> frontier_of;
  for (size_t i = 0; i < call.frontier.size(); ++i) {
    const Tensor& f = call.frontier[i];
    auto c = copies.find(f.node().get());
    if (c != copies.end()) {
      wrt.push_back(c->second);
      frontier_of.push_back(i);
    }
    if (c == copies.end() || call.policy != CheckpointPolicy::NothingSaveable) {
      wrt.push_back(f);
      frontier_of.push_back(i);
    }
  }
  std::vector<Tensor> g = gradients(outs, cots, wrt, /*partial=*/true);
  std::vector<Tensor> result(call.frontier.size());
  for (size_t k = 0; k < g.size(); ++k) {
    Tensor& r = result[frontier_of[k]];
    r = r.defined() ? r + g[k] : g[k];
  }
  return result;
}

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFn& f, std::vector<Tensor> args, CheckpointPolicy policy) {
  for (const Tensor& a : args) BRAZE_CHECK(a.defined(), "checkpoint: an empty Tensor handle");
  std::vector<Tensor> outs;
  {
    TraceScope traced;  // Note [Traced functions add no depth]
    outs = f(args);
  }
  bool any = false;
  for (const Tensor& o : outs) {
    BRAZE_CHECK(o.defined(), "checkpoint: the function returned an empty Tensor handle");
    any |= o.node()->requires_grad;
  }
  if (!any) return outs;  // no gradient will ask for a recomputation
  // The frontier: the arguments that require a gradient, then the
  // variables the outputs reach without passing an argument.
  auto call = std::make_shared<Checkpoint>();
  call->args = args;
  call->outputs = outs;
  call->policy = policy;
  std::unordered_set<const TensorNode*> seen;
  for (const Tensor& a : args)
    if (a.node()->requires_grad && seen.insert(a.node().get()).second) call->frontier.push_back(a);
  std::vector<std::shared_ptr<TensorNode>> todo;
  for (const Tensor& o : outs)
    if (o.node()->requires_grad) todo.push_back(o.node());
  for (Tensor& v : variables_under(std::move(todo), std::move(seen))) call->frontier.push_back(std::move(v));
  std::vector<Tensor> marked;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].node()->requires_grad) {
      marked.push_back(outs[i]);
      continue;
    }
    // A node of its own (a reshape to its own shape, which fusion sees
    // through) that carries the call.
    Tensor m = record(Op::Reshape, {outs[i]}, Attr{outs[i].shape(), {}});
    m.node()->checkpoint = std::make_shared<CheckpointOutput>(CheckpointOutput{call, i});
    marked.push_back(m);
  }
  return marked;
}

bool grad_enabled() { return t_grad_enabled; }

bool tracing() { return t_tracing > 0; }
void enter_trace() { ++t_tracing; }
void exit_trace() { --t_tracing; }

bool set_grad_enabled(bool on) {
  bool was = t_grad_enabled;
  t_grad_enabled = on;
  return was;
}

bool carries_gradient(Op op, DType result, std::span<const std::shared_ptr<TensorNode>> inputs) {
  if (!t_grad_enabled || !is_float(result) || op == Op::StopGradient) return false;
  for (const auto& in : inputs)
    if (in->requires_grad) return true;
  return false;
}

Tensor requires_grad(const Tensor& x, bool on) {
  BRAZE_CHECK(x.defined(), "requires_grad: an empty Tensor handle");
  BRAZE_CHECK(!on || is_float(x.dtype()), "requires_grad: only float tensors have gradients, not ",
              name(x.dtype()));
  x.node()->requires_grad = on;
  return x;
}

Tensor variable(const Tensor& x) {
  BRAZE_CHECK(x.defined(), "grad: an empty Tensor handle");
  BRAZE_CHECK(is_float(x.dtype()), "grad: only float tensors have gradients, not ", name(x.dtype()), " (shape ",
              to_string(x.shape()), ")");
  // A reshape to its own shape: a node of its own that fusion sees through.
  Tensor v = record(Op::Reshape, {x}, Attr{x.shape(), {}});
  return requires_grad(v);
}

namespace {

std::vector<Tensor> gradients(std::span<const Tensor> outputs, std::span<const Tensor> cotangents,
                              std::span<const Tensor> wrt, bool partial) {
  BRAZE_CHECK(outputs.size() == cotangents.size(), "vjp: ", outputs.size(), " outputs but ", cotangents.size(),
              " cotangents");
  TraceScope traced;  // Note [Traced functions add no depth]
  std::unordered_set<const TensorNode*> targets;
  for (const Tensor& w : wrt) {
    BRAZE_CHECK(w.defined(), "vjp: an empty Tensor handle");
    targets.insert(w.node().get());
  }
  std::unordered_map<const TensorNode*, Tensor> grads;
  auto accumulate = [&](const TensorNode* n, Tensor g) {
    auto [it, fresh] = grads.try_emplace(n, g);
    if (!fresh) it->second = it->second + g;
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor &out = outputs[i], &c = cotangents[i];
    BRAZE_CHECK(c.shape() == out.shape(), "vjp: cotangent ", i, " has shape ", to_string(c.shape()),
                " but its output has shape ", to_string(out.shape()));
    if (out.node()->requires_grad) accumulate(out.node().get(), astype(c, out.dtype()));
  }
  std::vector<std::shared_ptr<TensorNode>> order = between(outputs, targets, partial);
  // Note [Checkpoints]: a call's backward is recorded once, on reaching
  // the last of its outputs the walk meets, with all their cotangents.
  struct Pending {
    int left = 0;
    std::vector<Tensor> cotangents;
  };
  std::unordered_map<const Checkpoint*, Pending> calls;
  // With `partial` the walk ends at wrt: no rule, no checkpoint, runs there.
  auto ends = [&](const TensorNode& n) { return partial && targets.count(&n) > 0; };
  for (const auto& n : order)
    if (n->checkpoint && !ends(*n)) {
      Pending& p = calls[n->checkpoint->call.get()];
      ++p.left;
      p.cotangents.resize(n->checkpoint->call->outputs.size());
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const TensorNode& n = **it;
    if (ends(n)) continue;
    auto g = grads.find(&n);
    if (n.checkpoint) {
      const Checkpoint& call = *n.checkpoint->call;
      Pending& p = calls[&call];
      if (g != grads.end()) p.cotangents[n.checkpoint->index] = g->second;
      if (--p.left > 0 || std::none_of(p.cotangents.begin(), p.cotangents.end(),
                                       [](const Tensor& c) { return c.defined(); }))
        continue;
      std::vector<Tensor> dx = checkpoint_gradient(call, p.cotangents);
      for (size_t i = 0; i < dx.size(); ++i)
        if (dx[i].defined()) accumulate(call.frontier[i].node().get(), astype(dx[i], call.frontier[i].dtype()));
      continue;
    }
    if (g == grads.end()) continue;
    std::vector<std::shared_ptr<TensorNode>> ins = inputs_of(n);
    Grads x;
    std::vector<bool> need;
    for (const auto& in : ins) {
      x.emplace_back(in);
      need.push_back(in->requires_grad);
    }
    if (std::none_of(need.begin(), need.end(), [](bool b) { return b; })) continue;
    Grads dx = apply_rule(n, g->second, Tensor(*it), x, need);
    for (size_t i = 0; i < dx.size(); ++i) {
      if (!need[i] || !dx[i].defined()) continue;
      Tensor gi = astype(unbroadcast(dx[i], x[i].shape()), x[i].dtype());
      accumulate(ins[i].get(), gi);
    }
  }
  std::vector<Tensor> result;
  for (const Tensor& w : wrt) {
    auto g = grads.find(w.node().get());
    result.push_back(g != grads.end() ? g->second : zeros_like(w));
  }
  return result;
}

}  // namespace

std::vector<Tensor> vjp(std::span<const Tensor> outputs, std::span<const Tensor> cotangents,
                        std::span<const Tensor> wrt) {
  return gradients(outputs, cotangents, wrt, /*partial=*/false);
}

void backward(const Tensor& output, const std::optional<Tensor>& cotangent, bool create_graph) {
  BRAZE_CHECK(output.defined(), "backward: an empty Tensor handle");
  BRAZE_CHECK(output.node()->requires_grad, "backward: the tensor (shape ", to_string(output.shape()),
              ") does not require a gradient: nothing it was computed from is a variable (requires_grad_())");
  BRAZE_CHECK(cotangent || output.numel() == 1, "backward: the output has shape ", to_string(output.shape()),
              "; give the gradient of a tensor of more than one element");
  // The variables under the output: nodes that require a gradient and
  // whose inputs do not (where gradients start).
  std::vector<Tensor> variables = variables_under({output.node()}, {});
  GradModeScope mode(create_graph);
  Tensor c = cotangent ? *cotangent : ones_like(output);
  std::vector<Tensor> gs = vjp(std::span<const Tensor>(&output, 1), std::span<const Tensor>(&c, 1), variables);
  for (size_t i = 0; i < variables.size(); ++i) {
    Tensor before = grad(variables[i]);
    set_grad(variables[i], before.defined() ? before + gs[i] : gs[i]);
  }
}

Tensor grad(const Tensor& x) {
  NodeReadLock lock;
  return x.node()->grad ? Tensor(x.node()->grad) : Tensor();
}

void set_grad(const Tensor& x, const Tensor& g) {
  BRAZE_CHECK(!g.defined() || (g.shape() == x.shape() && g.dtype() == x.dtype()), "grad: a gradient of ",
              name(g.dtype()), to_string(g.shape()), " for a tensor of ", name(x.dtype()), to_string(x.shape()));
  std::unique_lock lock(tensor_nodes_mutex());
  x.node()->grad = g.defined() ? g.node() : nullptr;
}

}  // namespace braze
