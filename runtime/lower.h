// Lowering lazy tensors to a Graph: what realize() runs, and what
// bz.save_graph and bz.explain show.
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/array.h"
#include "fusion/schedule.h"
#include "graph/graph.h"
#include "runtime/tensor.h"

namespace braze::cuda {
class DeviceExecutor;
}  // namespace braze::cuda

namespace braze {

// Note [Scalar parameters]
// A number from user code (`x * lr`) is recorded as a Const leaf. If the
// program cache keyed on its value, a learning rate that changes every
// iteration would compile a program every iteration; if it ignored the
// value, the passes that read values (constant folding, and the rewrites of
// Note [Exact simplification]: x * 1 -> x, x ** 2 -> square(x), ...) would
// bake one iteration's value into the next one's program. So realize
// lowers each Const whose value no pass treats specially to a 0-d graph
// input, a parameter, whose value is bound at every run: the program's
// structure (and key) never depends on it. The special values stay Consts
// and are part of the key: 0, -0.0, 1, -1 and 2 in any numeric dtype,
// every bool, and the float coefficients by which fusion/epilogue.cpp
// recognises gelu after a matmul (0.5, 1/sqrt(2), sqrt(2/pi), 0.044715)
// (is_structural_constant: a new pass that reads values adds them there). A kernel reads a 0-d input as a
// scalar argument (runtime/program.cpp), so the code is the same as for a
// Const. Equal numbers of one dtype are one parameter, as equal Consts are
// one interned node, so a program's kernels are those of the graph
// bz.save_graph writes with its non-special Consts read as parameters
// (with_scalar_parameters, what `braze kernels` shows); that two numbers
// are equal is structure. What is lost: two parameters are never folded
// into one constant (`full(s, 2.5) + 1.5` is one kernel with two scalars,
// not a fill).
struct ScalarParam {
  int64_t input;  // its input number in the graph
  DType dtype;
  double real;       // float dtypes
  int64_t integer;   // the others
};

struct Lowered {
  Graph graph;               // outputs = the roots, in order
  std::vector<Array> inputs;  // data of the realized tensors the graph reads, by input number
  // With scalars_as_inputs: the parameters; their entries of `inputs` are
  // empty, the program that runs the graph binds them.
  std::vector<ScalarParam> scalars;
};

struct LowerOptions {
  bool scalars_as_inputs = false;   // Note [Scalar parameters]
  bool elements_as_inputs = false;  // Note [Element reads are inputs] (lower.cpp): realize's and explain's walks
};

Lowered lower(std::span<const Tensor> roots, LowerOptions options = {});

// The lazy DAG under some roots in post-order with the arrays and scalars a
// program run binds, and a key of its structure, without building a Graph:
// what a replay costs (Note [Programs]). lower() builds the Graph from it;
// equal keys give identical graphs (the same nodes, numbered alike). It
// holds the nodes and what it saw of them (Note [Shared lazy tensors]), so
// lower() reads no node's data or inputs again.
struct Walk {
  enum class Seen : uint8_t { Data, Parameter, Recorded };
  std::vector<std::shared_ptr<const TensorNode>> order;
  std::vector<Seen> seen;                 // per node in order
  // Per node in order, its inputs' places in order:
  // operands[first_operand[k]] up to operands[first_operand[k + 1]].
  std::vector<uint32_t> operands, first_operand;
  std::unordered_map<const TensorNode*, uint32_t> index;  // into order
  std::vector<Array> inputs;          // by input number; parameters' entries empty
  std::vector<ScalarParam> scalars;   // with scalars_as_inputs
  std::vector<uint32_t> scalar_nodes; // per scalar: its place in order
  std::string key;                    // with a key asked for
  LowerOptions options;
};
Walk walk(std::span<const Tensor> roots, LowerOptions options, bool with_key);

// Note [Held values are kept]
// A lazy tensor that something else still holds (a user's variable,
// another lazy DAG) and that a realize computes on the way to what was
// asked for is stored too, as a lazy-tensor runtime materializes the live
// tensors of a step. Otherwise a loop that reads a scalar of its state
// every step, `u = tanh(S @ u); float(u.sum())`, recomputes the whole
// history of u at each read: 300 steps took 0.89 s and 17,802 kernel
// launches, where NumPy takes 7 ms. A node is held elsewhere when more
// handles point at it than the DAG's own edges and the walk's. Keeping
// a value costs a write of it and its memory, so a value is kept only
// where a later read would cost more than one fused pass over realized
// data: it is, or stands on, a reduction or a library call, or it is a
// chain of at least kKeepDepth ops. A short element-wise chain held in a
// variable (Black-Scholes' d1 while the price is realized) stays fused,
// in registers, and a later read of it is one fused pass. Views and
// leaves are never kept: they cost nothing to redo. The roots gain the
// kept values, so the program's key and outputs include them: the loop
// above is one program, replayed. (The reference backend, a checking
// mode, keeps only what it was asked for.)
// Off by default: a C++ full-expression keeps its temporaries alive until
// it ends, so in `realize({f(g(x))})` every intermediate looks held.
// Python's references are exact (a temporary dies once the call that
// takes it returns), and its module turns it on (set_keep_held_values).
inline constexpr uint32_t kKeepDepth = 16;
std::vector<Tensor> held_values(const Walk& w, std::span<const Tensor> roots);
// The roots and the values a realize of them would keep beside them (where
// keep_held_values()): explain's roots, so that it shows the kernels a
// realize compiles.
std::vector<Tensor> with_held_values(std::vector<Tensor> roots);
bool keep_held_values();
void set_keep_held_values(bool on);
Lowered lower(const Walk& w, std::span<const Tensor> roots);

// Whether a Const with this dtype and value is structure rather than a
// parameter (Note [Scalar parameters]).
bool is_structural_constant(DType dtype, const Attr& value);

// `g` with each Const that is not structural replaced by a 0-d input (a
// parameter), node for node: the graph realize would run for the DAG that
// `g` was lowered from.
Graph with_scalar_parameters(const Graph& g);

// The schedule a Program runs for a graph with parameters: make_schedule,
// then each 0-d input a kernel reads passed by value (as a Const is), and
// each library call's workspace sized (Note [Step workspaces]). On a CUDA
// device (`device`), library calls take the post-ops its libraries apply
// and their workspaces are theirs (Note [Device programs]).
Schedule program_schedule(const Graph& g, cuda::DeviceExecutor* device = nullptr);

// Note [One schedule]
// What realize runs for a graph of constants (lowered without parameters,
// or read from a file): program_schedule of with_scalar_parameters(g). The
// one recipe behind bz.explain, `braze fuse`, `braze kernels` and `braze
// plan`, so what they show is the schedule realize runs, kernel for kernel
// and key for key (a constant that is not structure is a parameter there,
// so a library call scales by it at run time rather than by a baked
// constant; tests/python/test_dump.py checks the keys agree).
Schedule realize_schedule(const Graph& g, cuda::DeviceExecutor* device = nullptr);

// A 0-d array holding a parameter's value.
void store_scalar(const ScalarParam& p, const Array& into);

}  // namespace braze

namespace braze {

// Tensors for the graph's outputs, reading `inputs` (one per input node).
std::vector<Tensor> lift(const Graph& graph, std::span<const Array> inputs);

}  // namespace braze
