// Note [Exact simplification]
// Rewrites after which the reference interpreter gives the same result for
// every input: the same bits, with one allowance, that a NaN may come out
// as another NaN (sign and payload are not values: no op reads them, a
// NaN converts to an integer the same whatever its sign, and the
// differential tests compare NaN as equal to NaN). Infinities, both zeros,
// denormals and integer wrap-around are kept exactly. Each rule keeps the
// node's dtype (a rule whose operand has another dtype does not fire:
// int32 * 1.0 is a float32 conversion, not the int32) and its shape: the
// operands of an element-wise node are already broadcast to its shape
// (Graph::apply makes broadcasts explicit), so x * ones(2, 3) with x of
// shape (3,) becomes the broadcast of x, never x itself. A constant is a
// Const leaf seen through any broadcast; its value is compared bit for bit,
// in the reference's compute type (so -0.0 is not 0.0).
//
// Adopted (x, y of the node's dtype), and why each is exact:
//   x * 1, 1 * x, x / 1 -> x        IEEE: multiplying or dividing by one
//                                   returns x (the one rounding is of an
//                                   exact value); integers: identity
//   x + (-0.0), (-0.0) + x -> x     -0.0 is the additive identity: x + -0.0
//                                   is x for x = +0.0 and -0.0 alike
//   x - 0.0 -> x                    x - (+0.0) is x + (-0.0), the line above
//   x + 0, 0 + x, x - 0 -> x        integers only: 0 is their identity
//   x * -1, -1 * x, x / -1 -> -x    the product is exact and only the sign
//                                   changes, zeros included; integers wrap
//                                   alike (MIN * -1 == -MIN == MIN)
//   (-0.0) - x -> -x                -0.0 - x == -0.0 + (-x) == -x, zeros
//                                   included; integers: 0 - x is Neg's formula
//   x - (-y) -> x + y               IEEE defines x - z as x + (-z), and -y
//   x + (-y), (-y) + x -> x - y     only flips y's sign; integers wrap alike
//   -(-x) -> x                      negation flips the sign bit (twice);
//                                   integers: -(-MIN) wraps back to MIN
//   x ** 1 -> x                     pow(x, 1) is x exactly (glibc's pow is
//                                   within 1 ulp and x is representable;
//                                   pow(+-0, 1) = +-0, pow(+-inf, 1) =
//                                   +-inf); integers: one multiplication by 1
//   x ** 2 -> square(x)             (a Python int 2 to 4 is recorded as
//                                   multiplications before any pass: Note
//                                   [Integer powers], runtime/tensor.cpp)
//                                   integers (x * x by squaring), and
//                                   float16, bfloat16, float32: x * x is
//                                   exact in double (at most 48 significant
//                                   bits), so pow, computed in double by
//                                   the reference, returns it exactly, and
//                                   both round it once to the dtype
//   maximum(x, x), minimum(x, x) -> x   the result is one of the two
//   where(true, a, b) -> a, where(false, a, b) -> b, where(c, a, a) -> a
//   astype(x, dtype of x) -> x      no conversion
//   copy(y) -> y                    y computed by an op: a kernel writes it
//                                   densely already (a view or leaf stays
//                                   copied: dense_outputs relies on that)
//   f(f(x)) -> f(x)                 f in abs, relu, sign, floor, ceil,
//                                   round: each returns its argument on its
//                                   own results (abs(-0.0) is +0.0 first)
//   abs(-x) -> abs(x)               |-x| == |x|; integers: abs(-MIN) == MIN
//   floor, ceil, round of an integer -> x
//   isnan(x), isinf(x) of an integer or bool x -> false   no integer is
//                                   either (NumPy, too, returns False
//                                   without reading x)
//   chains of movement ops -> a shorter chain (Note [Movement chains],
//                                   fusion/simplify_views.cpp)
// Rejected, and why:
//   x + 0.0 -> x                    -0.0 + 0.0 is +0.0
//   x - (-0.0) -> x                 the same sum
//   0.0 - x -> -x                   0.0 - 0.0 is +0.0, -(0.0) is -0.0
//   x * 0 -> 0, x - x -> 0, x / x -> 1   wrong for NaN and inf (and -0.0)
//   x ** 2 -> square(x) for float64 glibc's pow(x, 2) differs from the
//                                   correctly rounded x * x in the last bit
//                                   for about 1 double in 2000
//   x ** 0.5 -> sqrt(x)             pow(-0.0, 0.5) is +0.0, pow(-inf, 0.5)
//                                   is +inf; sqrt gives -0.0 and NaN
//   x ** -1 -> reciprocal(x)        pow's result is not correctly rounded
//   x ** 0 -> 1                     fine for floats (pow(NaN, 0) is 1), but
//                                   it trades an op for a constant only
//                                   where the exponent is literally 0
//
// Exact is not enough: a rewrite must not cost a kernel. The partition
// fuses along edges, so a node that several readers share (directly or
// through views) ties them into one kernel; replacing it by an input, a
// constant or a view would cut them apart (x * 1 read by a reduction and
// by an exp: one kernel before, two after). Such a node stays, and so does a
// negation that other nodes read (x + (-y) -> x - y would save nothing
// and lose the edge). The differential test in fusion_passes_test.cpp
// checks on random graphs that the pipeline never adds a kernel.
//
// The rules look at constants' values, so a program whose scalar happens
// to be 1 gets a different (smaller) kernel than one whose scalar is 2. A
// program cache keyed by structure alone (DESIGN.md section 6) must treat
// "this constant is 1, -1, -0.0, 0.0, 2 or true/false" as structure.
#include <bit>

#include "fusion/passes.h"
#include "fusion/simplify_views.h"
#include "graph/check.h"

namespace braze {

namespace {

// Whether `id` is a constant (through any view) equal to `v`, bit for bit
// (so -0.0 is not 0.0), read as the reference reads it, in double.
bool is_constant(const Graph& g, NodeId id, double v) {
  const Node& c = g[g.base(id)];
  if (c.op != Op::Const) return false;
  double x = is_float(c.dtype) ? c.attr.reals[0] : static_cast<double>(c.attr.ints[0]);
  return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(v);
}

class Simplifier {
 public:
  // `readers`: per node of `g`, how many nodes read it (count_readers, of
  // the nodes it stands for).
  Simplifier(Graph& g, const Node& n, const std::vector<uint32_t>& readers)
      : g_(g), n_(n), in_(n.inputs), real_(is_float(n.dtype)), readers_(readers) {}

  std::optional<NodeId> run() {
    switch (n_.op) {
      case Op::Mul:
        for (size_t k : {1, 0}) {
          if (std::optional<NodeId> x = other_if(k, 1.0)) return x;
          if (std::optional<NodeId> x = other_if(k, -1.0)) return neg(*x);
        }
        return std::nullopt;
      case Op::Div:
        if (std::optional<NodeId> x = other_if(1, 1.0)) return x;
        if (std::optional<NodeId> x = other_if(1, -1.0)) return neg(*x);
        return std::nullopt;
      case Op::Add:
        for (size_t k : {1, 0}) {
          if (std::optional<NodeId> x = other_if(k, zero())) return x;
          std::optional<NodeId> y = negated(k);
          if (y && same_type(in_[1 - k])) return g_.apply(Op::Sub, {in_[1 - k], *y});
        }
        return std::nullopt;
      case Op::Sub:
        if (std::optional<NodeId> x = other_if(1, 0.0)) return x;
        if (std::optional<NodeId> x = other_if(0, zero())) return neg(*x);
        if (std::optional<NodeId> y = negated(1); y && same_type(in_[0])) return g_.apply(Op::Add, {in_[0], *y});
        return std::nullopt;
      case Op::Pow:
        if (is_constant(g_, in_[1], 1.0)) return same_type(in_[0]);
        if (n_.dtype != DType::Float64 && is_constant(g_, in_[1], 2.0) && same_type(in_[0]))
          return g_.apply(Op::Square, {in_[0]});
        return std::nullopt;
      case Op::Maximum:
      case Op::Minimum: return in_[0] == in_[1] ? same_type(in_[0]) : std::nullopt;
      case Op::Cast:
      case Op::Copy: {
        const Node& x = g_[in_[0]];
        bool computed = !is_movement(x.op) && info(x.op).kind != FusionKind::Leaf;
        return n_.op == Op::Cast || computed ? same_type(in_[0]) : std::nullopt;
      }
      case Op::StopGradient: return in_[0];  // a mark for autodiff only: the value is its input
      case Op::Where:
        if (in_[1] == in_[2] || is_constant(g_, in_[0], 1.0)) return same_type(in_[1]);
        if (is_constant(g_, in_[0], 0.0)) return same_type(in_[2]);
        return std::nullopt;
      case Op::Neg: return negated(0);
      case Op::Floor:
      case Op::Ceil:
      case Op::Round:
        if (!real_) return in_[0];
        return idempotent();
      case Op::Abs:
        if (std::optional<NodeId> y = negated(0)) return g_.apply(Op::Abs, {*y});
        return idempotent();
      case Op::Relu:
      case Op::Sign: return idempotent();
      case Op::IsNan:
      case Op::IsInf:
        if (is_float(g_[in_[0]].dtype)) return std::nullopt;
        return g_.broadcast_to(g_.constant(DType::Bool, 0.0), n_.shape());
      case Op::SignBit:  // never set in a bool or an unsigned integer
        if (is_signed(g_[in_[0]].dtype)) return std::nullopt;
        return g_.broadcast_to(g_.constant(DType::Bool, 0.0), n_.shape());
      default: return simplify_movement(g_, n_);
    }
  }

 private:
  // The additive identity of n_'s dtype: -0.0 for floats, 0 for integers.
  double zero() const { return real_ ? -0.0 : 0.0; }

  // The other operand of binary node n_ when operand `k` is the constant
  // `v` and the other has n_'s dtype.
  std::optional<NodeId> other_if(size_t k, double v) const {
    return is_constant(g_, in_[k], v) ? same_type(in_[1 - k]) : std::nullopt;
  }

  // -x; bool has no negation (a bool constant may still read as -1).
  std::optional<NodeId> neg(NodeId x) const {
    if (n_.dtype == DType::Bool) return std::nullopt;
    return g_.apply(Op::Neg, {x});
  }

  // y when operand `k` is -y with y of n_'s dtype, read by n_ alone. A
  // negation that other nodes read stays for them: rewriting around it
  // would save no op, and would cut the edge that keeps n_ in the kernel
  // of those nodes (the partition fuses along edges).
  std::optional<NodeId> negated(size_t k) const {
    const Node& m = g_[in_[k]];
    if (m.op != Op::Neg || m.dtype != n_.dtype || readers_[in_[k]] != 1) return std::nullopt;
    return same_type(m.inputs[0]);
  }

  // f(x) for f(f(x)).
  std::optional<NodeId> idempotent() const {
    return g_[in_[0]].op == n_.op ? std::optional<NodeId>(in_[0]) : std::nullopt;
  }

  std::optional<NodeId> same_type(NodeId x) const {
    return g_[x].dtype == n_.dtype ? std::optional<NodeId>(x) : std::nullopt;
  }

  Graph& g_;
  const Node& n_;
  const std::vector<NodeId>& in_;
  const bool real_;
  const std::vector<uint32_t>& readers_;
};

}  // namespace

Graph simplify(const Graph& g) {
  const std::vector<uint32_t> readers = count_readers(g);
  std::vector<uint32_t> readers_out;  // per node of the new graph: the readers of the nodes it stands for
  return rewrite_nodes(g, [&](Graph& out, const Node& n, NodeId id) {
    readers_out.resize(out.size());
    std::optional<NodeId> s = Simplifier(out, n, readers_out).run();
    // A node read several times stays when it would become a leaf or a
    // view: it is the producer that ties its readers into one kernel, as
    // the partition fuses along edges (and not through every view), and
    // what a kernel saves without it (an op per element) is far less than
    // a second kernel costs.
    if (s && readers[id] > 1 && (is_movement(out[*s].op) || info(out[*s].op).kind == FusionKind::Leaf)) s.reset();
    // A stop_gradient that stays so is the Copy it equals: it marks the
    // autodiff walk only, and the code generators know Copy, not it.
    if (!s && n.op == Op::StopGradient) s = out.apply(Op::Copy, {n.inputs[0]});
    NodeId r = s ? *s : out.add(n);
    BRAZE_ASSERT(out[r].dtype == n.dtype && out[r].shape() == n.shape(), info(n.op).name,
                 ": a simplification changed the type");
    readers_out.resize(out.size());
    readers_out[r] += readers[id];
    return r;
  });
}

}  // namespace braze
