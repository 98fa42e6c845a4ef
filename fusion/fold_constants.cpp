// Note [Constant folding]
// An element-wise node whose inputs are all constants (Const leaves, seen
// through any broadcast or other view: a Python scalar, bz.full) is one
// value everywhere: it becomes a Const of that value broadcast to the
// node's shape. The value is computed by the reference interpreter's own
// code for the node (reference::evaluate_node, the scalar math of
// graph/scalar_math.h: no second implementation of any op), on the
// constants as the reference stores them, so it is stored exactly as the
// reference stores the node: computed in double or int64, rounded or
// wrapped once to the node's dtype. The reference result of the graph is
// therefore unchanged bit for bit.
//
// A backend must also get the value it would have computed, so only ops
// whose result does not depend on how it is computed fold (fold_class):
//   Exact     the result is one of the inputs, a sign flip of one, or a
//             fixed value (neg, abs, relu, min/max, floor/round,
//             comparisons, where, exact casts, ...): no rounding anywhere.
//   Rounded   one IEEE rounding (+ - * / sqrt, square, reciprocal; mod is
//             an exact fmod and one addition).
//             Exact for integers (they wrap alike in every width). For
//             float32 and float64 results the double computation rounded
//             to the dtype equals the float32 computation: double has more
//             than 2p + 2 bits, so the double rounding is innocuous. Not for
//             float16 and bfloat16, which a fused kernel keeps in float32
//             registers without rounding; not when the inputs have another
//             dtype than the result (an int32 turned into float32 rounds).
//   Never     transcendentals (exp, log, tanh, sigmoid, erf, sin, cos, pow
//             of floats) and rsqrt (two roundings): kernels use polynomial
//             approximations within a few ulp, so the reference's value
//             would differ from what the kernel computes. Not folded.
// A Cast folds only when it is exact: its result casts back to the input
// bit for bit, so no rounding, truncation or overflow rule is involved.
// The one value-dependent decision; the others look at which inputs are
// constants and at dtypes, never at values.
// Reductions: max and min of a constant are the constant, argmax and
// argmin are 0 (every element ties, the first wins); sum and prod are not
// folded (a kernel's summation order rounds differently).
// Between the reference and a kernel, NaN results agree as NaN (the
// kernel's maximum returns the input NaN, the reference a canonical one);
// the reference's bits are kept.
#include "fusion/passes.h"
#include "graph/check.h"
#include "graph/reference.h"

#include <cstring>

namespace braze {

namespace {

enum class FoldClass { Exact, Rounded, Never };

FoldClass fold_class(Op op, DType t) {
  switch (op) {
    case Op::Neg:
    case Op::Abs:
    case Op::Sign:
    case Op::Relu:
    case Op::Floor:
    case Op::Ceil:
    case Op::Round:
    case Op::IsNan:
    case Op::IsInf:
    case Op::SignBit:
    case Op::LogicalNot:
    case Op::Copy:
    case Op::StopGradient:
    case Op::Depend:
    case Op::Cast:  // when it casts back exactly (fold_node)
    case Op::Maximum:
    case Op::Minimum:
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
    case Op::LogicalAnd:
    case Op::LogicalOr:
    case Op::BitwiseInvert:
    case Op::BitwiseAnd:
    case Op::BitwiseOr:
    case Op::BitwiseXor:
    case Op::LeftShift:
    case Op::RightShift:
    case Op::Where: return FoldClass::Exact;
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Mod:
    case Op::Sqrt:
    case Op::Square:
    case Op::Reciprocal: return FoldClass::Rounded;
    case Op::Pow: return is_float(t) ? FoldClass::Never : FoldClass::Rounded;
    case Op::Exp:
    case Op::Exp2:
    case Op::Expm1:
    case Op::Log:
    case Op::Log2:
    case Op::Log1p:
    case Op::Rsqrt:
    case Op::Sin:
    case Op::Cos:
    case Op::Tan:
    case Op::Tanh:
    case Op::Sigmoid:
    case Op::Erf: return FoldClass::Never;  // approximated by kernels
    case Op::Input:
    case Op::Const:
    case Op::Arange:
    case Op::Expand:
    case Op::Reshape:
    case Op::Permute:
    case Op::Slice:
    case Op::Pad:
    case Op::Sum:
    case Op::Prod:
    case Op::Max:
    case Op::Min:
    case Op::ArgMax:
    case Op::ArgMin:
    case Op::MatMul:
    case Op::Conv2d: break;  // not element-wise
  }
  return FoldClass::Never;
}

// Whether every backend computes `n` (its inputs constants in `g`) to the
// value the reference stores (Note [Constant folding]).
bool folds_exactly(const Graph& g, const Node& n) {
  std::span<const NodeId> values(n.inputs);
  if (n.op == Op::Where) values = values.subspan(1);  // the condition is bool
  DType t = g[values[0]].dtype;
  for (NodeId v : values)
    if (g[v].dtype != t) return false;
  switch (fold_class(n.op, t)) {
    case FoldClass::Exact: return true;
    case FoldClass::Rounded:
      return t == n.dtype && (n.dtype == DType::Float32 || n.dtype == DType::Float64 ||
                              (!is_float(n.dtype) && n.dtype != DType::Bool));
    case FoldClass::Never: break;
  }
  return false;
}

// A scalar node like `n`, evaluated on scalar inputs.
reference::StridedArray scalar(const Array& a) { return {&a, View::contiguous({})}; }

Array evaluate_scalar(Node n, std::span<const reference::StridedArray> in) {
  n.view = View::contiguous({});
  return reference::evaluate_node(n, in);
}

// Max, Min, ArgMax, ArgMin of a constant over axes that are not empty.
std::optional<NodeId> fold_reduction(Graph& g, const Node& n) {
  if (n.op != Op::Max && n.op != Op::Min && n.op != Op::ArgMax && n.op != Op::ArgMin) return std::nullopt;
  NodeId c = g.base(n.inputs[0]);
  if (g[c].op != Op::Const) return std::nullopt;
  for (int64_t axis : n.attr.ints)
    if (g[n.inputs[0]].shape()[axis] == 0) return std::nullopt;
  if (n.op == Op::ArgMax || n.op == Op::ArgMin) c = g.constant_int(n.dtype, 0);
  BRAZE_ASSERT(g[c].dtype == n.dtype, info(n.op).name, ": a reduction of a constant changed its dtype");
  return g.broadcast_to(c, n.shape());
}

std::optional<NodeId> fold_node(Graph& g, const Node& n) {
  if (is_reduce(n.op)) return fold_reduction(g, n);
  if (!is_elementwise(n.op)) return std::nullopt;
  for (NodeId i : n.inputs)
    if (g[g.base(i)].op != Op::Const) return std::nullopt;
  if (!folds_exactly(g, n)) return std::nullopt;
  std::vector<Array> values;
  for (NodeId i : n.inputs) values.push_back(reference::evaluate_node(g[g.base(i)], {}));
  std::vector<reference::StridedArray> in;
  for (const Array& v : values) in.push_back(scalar(v));
  Array r = evaluate_scalar(n, in);
  if (n.op == Op::Cast) {
    DType from = values[0].dtype;
    Array back = evaluate_scalar(Node{Op::Cast, from, {}, {}, Attr{{static_cast<int64_t>(from)}, {}}}, {{scalar(r)}});
    if (std::memcmp(back.data.get(), values[0].data.get(), itemsize(from)) != 0) return std::nullopt;
  }
  NodeId c = is_float(n.dtype) ? g.constant(n.dtype, load_double(n.dtype, r.data.get(), 0))
                               : g.constant_int(n.dtype, load_int(n.dtype, r.data.get(), 0));
  return g.broadcast_to(c, n.shape());
}

}  // namespace

Graph fold_constants(const Graph& g) {
  return rewrite_nodes(g, [](Graph& out, const Node& n, NodeId) {
    std::optional<NodeId> c = fold_node(out, n);
    return c ? *c : out.add(n);
  });
}

}  // namespace braze
