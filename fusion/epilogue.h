// Epilogues of library calls: the element-wise ops after a matmul or conv2d
// that the library applies to its result before writing it (oneDNN post-ops),
// so the result is written once instead of written, read and written again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace braze {

// Note [Library epilogues]
// A library group is the matmul/conv2d node followed by a chain of post-ops;
// each post-op reads the value of the previous one (or of the library node):
//   - Binary: value op operand, op one of add, sub, mul, div (sub and div
//     with the value on the left), where the operand is a tensor in memory
//     of the result's shape or broadcast to it (a bias along rows or
//     channels, a residual, a 0-d scalar parameter such as attention's
//     scale: Note [Scalar parameters]); it becomes a oneDNN binary
//     post-op, which reads the operand's memory at every run, so a new
//     value of a parameter needs no new primitive;
//   - Linear: value * c or value + c for a constant c of the graph (a
//     special value, part of the program's structure, or any constant
//     outside programs), several in a row folded into one alpha * value +
//     beta: oneDNN's eltwise_linear with the constants baked in, and in
//     the primitive's key;
//   - an activation, recognised from the ops braze's composites build it
//     from (relu and maximum(x, 0), sigmoid, tanh, silu = x * sigmoid(x),
//     gelu with erf or tanh); it becomes a oneDNN eltwise post-op.
// The chain stops at the first node that is none of these, that reads the
// value through a view, that changes dtype or shape, or where the value is
// also read elsewhere or returned: the library writes only the chain's last
// value. The partition records the reason at that edge (explain() shows it).
// The group's nodes are the library node, then every node of the chain in
// order; its one output is the chain's last node. The reference evaluation
// of a group (evaluate_library_group) runs those nodes one by one, so a
// fused epilogue and the reference agree by construction.
enum class Activation : uint8_t { Relu, Gelu, GeluTanh, Silu, Sigmoid, Tanh };
std::string_view name(Activation a);

struct PostOp {
  enum class Kind : uint8_t { Binary, Linear, Activation };
  Kind kind = Kind::Binary;
  Op op = Op::Add;                           // Binary: Add, Sub, Mul or Div, the value on the left
  Activation activation = Activation::Relu;  // Kind::Activation
  NodeId addend = 0;                         // Kind::Binary: the operand read (a view or a computed node)
  double alpha = 1, beta = 0;                // Kind::Linear: alpha * value + beta
  NodeId result = 0;                         // the node whose value this post-op computes
};

// Past this many post-ops a chain stops: each is a pass over the output
// tile inside the library's kernel, and oneDNN's own limit is not far above.
inline constexpr size_t kMaxPostOps = 8;

struct LibraryRules;  // what a target's library takes (fusion/library_rules.h)
const LibraryRules& cpu_library_rules();

struct EpilogueMatch {
  std::vector<PostOp> post_ops;
  std::vector<NodeId> nodes;  // every node the chain absorbs, in topological order
  NodeId last;                // the value the library call writes
  // Why the chain stopped, per consumer of `last` (explain()'s reason).
  std::vector<std::pair<NodeId, std::string>> stopped;
};

// Who reads each node of a graph, as match_epilogue needs it.
struct Readers {
  std::vector<std::vector<NodeId>> users;  // per node: the computed nodes reading it (directly or through a view), once each
  std::vector<bool> is_output;             // per node: a graph output
};
Readers readers_of(const Graph& g);

EpilogueMatch match_epilogue(const Graph& g, NodeId library, const std::vector<std::vector<NodeId>>& users,
                             const std::vector<bool>& is_output, const LibraryRules& rules = cpu_library_rules());

// Per node of `g`: whether it is a post-op node of some library call's
// epilogue. push_views leaves views above these (Note [Views sink to the
// leaves]), so that heads(x @ w + b) keeps its bias add on the matmul.
std::vector<bool> epilogue_members(const Graph& g);

// A post-op in words for explain(): "add Input#3 [1, 64]", "gelu".
std::string describe(const Graph& g, const PostOp& p);

}  // namespace braze
