// Note [Exact simplification]
// Rewrites that give the reference's bits for every input: quiet NaNs of
// either sign (the fusion fuzzer compares bits), infinities, both zeros,
// denormals, integer wrap-around. Each keeps the
// node's dtype (a rule whose operand has another dtype does not fire:
// int32 * 1.0 is a float32 conversion, not the int32) and its shape: the
// operands of an element-wise node are already broadcast to its shape
// (Graph::apply makes broadcasts explicit), so x * ones(2, 3) with x of
// shape (3,) becomes the broadcast of x, never x itself. A constant is a
// Const leaf seen through any broadcast; its value is compared bit for bit.
//
// Adopted (x of the node's dtype):
//   x * 1, 1 * x, x / 1 -> x        multiplying by one is exact
//   x + (-0.0), (-0.0) + x -> x     -0.0 is the additive identity
//   x - 0.0 -> x                    x - (+0.0) == x + (-0.0)
//   (integers: x + 0, 0 + x, x - 0 -> x)
//   x ** 1 -> x                     integers only, see below
//   x ** 2 -> square(x)             integers, float16, bfloat16, float32:
//                                   x * x is exact in double, so pow (in
//                                   double, as the reference computes;
//                                   glibc's is within 0.52 ulp) returns it
//                                   exactly, rounded once like Square; a
//                                   NaN comes through both unchanged
//   astype(x, dtype of x) -> x      no conversion
//   copy(y) -> y                    y computed by an op: a kernel writes it
//                                   densely already (a view or leaf stays
//                                   copied: dense_outputs relies on that)
//   where(true, a, b) -> a, where(false, a, b) -> b, where(c, a, a) -> a
//   f(f(x)) -> f(x)                 f in abs, relu, sign, floor, ceil,
//                                   round: each returns its argument on its
//                                   own results (abs(-0.0) is +0.0 first)
//   floor, ceil, round of an integer -> x
//   -(-x) -> x                      integers only, see below
// Rejected:
//   x + 0.0 -> x                    -0.0 + 0.0 is +0.0
//   x - (-0.0) -> x                 the same sum
//   -(-x) -> x for floats           the reference negates as 0 - x, so
//                                   -(-(-0.0)) is +0.0
//   (-0.0) - x -> -x                the NaN keeps its sign through the
//                                   subtraction, not through negation
//   x * 0 -> 0, x - x -> 0, x / x -> 1   wrong for NaN and inf (and -0.0)
//   maximum(x, x) -> x              maximum returns a canonical NaN
//   x ** 1 -> x for floats          glibc's pow(-NaN, 1) is +NaN (the value
//                                   is right, the sign bit is not x's)
//   x ** 2 -> square(x) for float64 pow is not correctly rounded, x * x is
//   x ** 0.5 -> sqrt(x)             pow(-0.0, 0.5) is +0.0, pow(-inf, 0.5)
//                                   is +inf; sqrt gives -0.0 and NaN
//   x ** -1 -> reciprocal(x)        pow's result is not correctly rounded
// Reshape and expand chains are push_views' business, not this pass's.
//
// The rules look at constants' values, so a program whose scalar happens
// to be 1 gets a different (smaller) kernel than one whose scalar is 2. A
// program cache keyed by structure alone (DESIGN.md section 6) must treat
// "this constant is 1, -0.0, 0.0, 2 or true/false" as structure.
#include <bit>

#include "fusion/passes.h"
#include "graph/check.h"

namespace braze {

namespace {

// Whether `id` is a constant (through any view) equal to `v`, bit for bit
// (so -0.0 is not 0.0), reading integers as the reference does, in double.
bool is_constant(const Graph& g, NodeId id, double v) {
  const Node& c = g[g.base(id)];
  if (c.op != Op::Const) return false;
  double x = is_float(c.dtype) ? c.attr.reals[0] : static_cast<double>(c.attr.ints[0]);
  return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(v);
}

class Simplifier {
 public:
  Simplifier(Graph& g, const Node& n) : g_(g), n_(n), in_(n.inputs) {}

  std::optional<NodeId> run() {
    const bool real = is_float(n_.dtype);
    switch (n_.op) {
      case Op::Mul: return either(identity(1, 1.0), identity(0, 1.0));
      case Op::Div: return identity(1, 1.0);
      case Op::Add: return either(identity(1, real ? -0.0 : 0.0), identity(0, real ? -0.0 : 0.0));
      case Op::Sub: return identity(1, 0.0);
      case Op::Pow:
        if (!real && is_constant(g_, in_[1], 1.0)) return same_type(in_[0]);
        if (n_.dtype != DType::Float64 && is_constant(g_, in_[1], 2.0) && g_[in_[0]].dtype == n_.dtype)
          return g_.apply(Op::Square, {in_[0]});
        return std::nullopt;
      case Op::Cast:
      case Op::Copy: {
        const Node& x = g_[in_[0]];
        bool computed = !is_movement(x.op) && info(x.op).kind != FusionKind::Leaf;
        return n_.op == Op::Cast || computed ? same_type(in_[0]) : std::nullopt;
      }
      case Op::Where:
        if (in_[1] == in_[2] || is_constant(g_, in_[0], 1.0)) return same_type(in_[1]);
        if (is_constant(g_, in_[0], 0.0)) return same_type(in_[2]);
        return std::nullopt;
      case Op::Neg:
        if (!real && g_[in_[0]].op == Op::Neg) return g_[in_[0]].inputs[0];
        return std::nullopt;
      case Op::Floor:
      case Op::Ceil:
      case Op::Round:
        if (!real) return in_[0];
        [[fallthrough]];
      case Op::Abs:
      case Op::Relu:
      case Op::Sign:
        if (g_[in_[0]].op == n_.op) return in_[0];
        return std::nullopt;
      default: return std::nullopt;
    }
  }

 private:
  // The other operand of binary node n_ when operand `k` is the constant
  // `v` and the other has n_'s dtype.
  std::optional<NodeId> identity(size_t k, double v) const {
    return is_constant(g_, in_[k], v) ? same_type(in_[1 - k]) : std::nullopt;
  }

  static std::optional<NodeId> either(std::optional<NodeId> a, std::optional<NodeId> b) { return a ? a : b; }

  std::optional<NodeId> same_type(NodeId x) const {
    return g_[x].dtype == n_.dtype ? std::optional<NodeId>(x) : std::nullopt;
  }

  Graph& g_;
  const Node& n_;
  const std::vector<NodeId>& in_;
};

}  // namespace

Graph simplify(const Graph& g) {
  return rewrite_nodes(g, [](Graph& out, const Node& n) {
    std::optional<NodeId> s = Simplifier(out, n).run();
    if (!s) return out.add(n);
    BRAZE_ASSERT(out[*s].dtype == n.dtype && out[*s].shape() == n.shape(), info(n.op).name,
                 ": a simplification changed the type");
    return *s;
  });
}

}  // namespace braze
