// Reverse-mode automatic differentiation over lazy tensors.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "runtime/ops.h"
#include "runtime/tensor.h"

namespace braze {

// Note [Reverse mode]
// A gradient is recorded as more lazy tensors, not computed: vjp() walks
// the DAG under the outputs backwards, from the last op to the first, and
// at each op records its rule (one per row of graph/ops.def, in
// runtime/gradients.def) on the cotangent that reached it. So the loss,
// the gradients and whatever user code builds from them (an optimizer's
// update) are realized together: one graph, in which the backward shares
// the forward's nodes, one fusion pass, one memory plan, one cached
// program replayed every step.
//
// Which nodes take part: a node `requires_grad` when it was made from an
// input that does, while recording with gradients is on (grad_enabled()),
// and its result is a float (integers and booleans have no gradient). The
// walk follows only such nodes. A node that requires a gradient keeps its
// inputs when realized (realize.cpp), so printing a loss or the lazy depth
// limit (Note [Lazy depth limit]) cutting a long forward does not cut the
// backward's path; all other nodes drop theirs as before, so code that
// never asks for a gradient holds nothing more.
//
// Where gradients start: a variable, a node marked by requires_grad()
// (PyTorch's requires_grad_()) or made by variable() (bz.grad's fresh
// copy of an argument: a node of its own, so a use of the same value that
// the function closed over is a constant, as in JAX, while a gradient
// still flows through it to an outer bz.grad). stop_gradient() is an op
// (graph/ops.def) whose value is its input and whose gradient is zero;
// fusion drops it.
//
// Broadcasting is undone once, after every rule: the gradient of an input
// that was broadcast is summed back to the input's shape (unbroadcast), so
// the rules themselves never mention shapes. Gradients take each input's
// dtype. An input that a rule gives no gradient (the condition of where,
// the exponent when it is a constant) gets none recorded.

// Whether ops recorded now on this thread carry gradients (bz.no_grad()
// turns it off; default on).
bool grad_enabled();
// Sets it for this thread; returns what it was.
bool set_grad_enabled(bool on);
class GradModeScope {
 public:
  explicit GradModeScope(bool on) : was_(set_grad_enabled(on)) {}
  ~GradModeScope() { set_grad_enabled(was_); }
  GradModeScope(const GradModeScope&) = delete;
  GradModeScope& operator=(const GradModeScope&) = delete;

 private:
  bool was_;
};

// Note [Traced functions add no depth]
// The lazy depth limit (Note [Lazy depth limit]) cuts what a loop grows;
// a function being differentiated is not such a loop, and its backward
// doubles its depth: a two-block transformer's training step is about 500
// ops deep. Cut, it ran as four programs with 197 values kept and
// allocated per step instead of one. So while bz.grad, bz.vjp (or vjp and
// backward here) record, new nodes take their inputs' depth without
// adding one and cut nothing: the graph is bounded by the function. A
// loop over steps still grows one level per step outside the trace (the
// update), and is cut as before.
bool tracing();
void enter_trace();
void exit_trace();
class TraceScope {
 public:
  TraceScope() { enter_trace(); }
  ~TraceScope() { exit_trace(); }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
};

// Whether a node of `op` with this result dtype, made now from `inputs`,
// requires a gradient (record() asks).
bool carries_gradient(Op op, DType result, std::span<const std::shared_ptr<TensorNode>> inputs);

// Marks x (its node) a variable; x must be a float tensor. Returns x.
Tensor requires_grad(const Tensor& x, bool on = true);
// A new node with x's value that requires a gradient (Note [Reverse mode]).
Tensor variable(const Tensor& x);
// x's value, with no gradient flowing back through it.
inline Tensor detach(const Tensor& x) { return stop_gradient(x); }

// The vector-Jacobian product: the gradient of sum_i <cotangents[i],
// outputs[i]> with respect to each of `wrt`, as lazy tensors (zeros where
// no path leads). Recorded with gradients on if grad_enabled(), so the
// result can be differentiated again.
std::vector<Tensor> vjp(std::span<const Tensor> outputs, std::span<const Tensor> cotangents,
                        std::span<const Tensor> wrt);

// Note [Checkpoints]
// checkpoint(f, args) is f(args), but the backward does not keep what f
// computed inside: it computes it again from f's arguments and
// differentiates that (JAX's jax.checkpoint, PyTorch's
// torch.utils.checkpoint). In one program this is a schedule, not a cache
// policy, so the recomputation has to be kept apart from the forward
// twice over:
// - it must not be the forward's nodes again: a graph interns identical
//   nodes (Note [Lazy tensors]), and the same ops on the same arguments
//   are the same graph. So it starts from depend(arg, token), an op whose
//   value is arg's: a new node for each argument;
// - it must run in the backward, once the forward's activations are dead:
//   the token is an element of the cotangent that reached f's outputs, so
//   the recomputation starts only when the backward has got there.
// The recomputation is a copy of the nodes f recorded (those that depend
// on an argument), made on the depend nodes: f itself is called once, so
// the backward holds no Python function and f need not be pure in Python.
// f's outputs are marked (a node of their own per output, whose value is
// f's) with the call; vjp() walks from them to f's arguments and to the
// variables f closed over (its frontier), not into f's nodes, and on
// reaching the last of a call's outputs records the backward of the
// copy, with all their cotangents at once, as partial derivatives: its
// walk stops at the depend nodes (a closed-over variable that an
// argument also depends on is not counted twice), which still lead back
// to the arguments, so a gradient of that gradient is right. The memory
// plan then keeps f's arguments from the forward to the backward and f's
// activations only while each is needed: an N-block model checkpointed
// per block keeps N block inputs and one block's activations.
//
// A policy may keep some of f's values after all (JAX's checkpoint
// policies). The copy of such a node is still made, on copied inputs, so
// that its gradient rule reads recomputed values, but its value is the
// forward's (TensorNode::value_of: lowering reads the forward's node in
// its place), so it is not computed again. Keeping the library calls'
// results (matmul, conv2d) and the reductions' leaves the cheap
// element-wise work to the backward's kernels, which recompute it where
// they read it: the memory of the element-wise values between library
// calls is saved, and no library call runs twice.
using CheckpointFn = std::function<std::vector<Tensor>(std::vector<Tensor>)>;
enum class CheckpointPolicy : uint8_t {
  NothingSaveable,             // recompute everything from the arguments (the default)
  DotsSaveable,                // keep matmul and conv2d results
  DotsAndReductionsSaveable,   // keep those and the reductions' results
};
struct Checkpoint {
  std::vector<Tensor> args;      // f's tensor arguments
  std::vector<Tensor> outputs;   // what f returned
  std::vector<Tensor> frontier;  // where its gradient goes: arguments, then variables f closed over
  CheckpointPolicy policy = CheckpointPolicy::NothingSaveable;
};
struct CheckpointOutput {
  std::shared_ptr<const Checkpoint> call;
  size_t index;  // which of f's outputs
};
std::vector<Tensor> checkpoint(const CheckpointFn& f, std::vector<Tensor> args,
                               CheckpointPolicy policy = CheckpointPolicy::NothingSaveable);

// PyTorch's loss.backward(): adds the gradient of `output` (a one-element
// tensor, or `cotangent` given) to the .grad of every variable under it.
// The gradients are recorded without gradients of their own unless
// create_graph.
void backward(const Tensor& output, const std::optional<Tensor>& cotangent = std::nullopt, bool create_graph = false);
// What backward() accumulated for x (an undefined Tensor if nothing), and setting it (clear: undefined).
Tensor grad(const Tensor& x);
void set_grad(const Tensor& x, const Tensor& g);

}  // namespace braze
