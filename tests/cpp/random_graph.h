// A generator of random graphs of element-wise, view and reduction ops
// over a few float32 inputs (or, with `float64_too`, float64 ones in a
// third of the graphs, some mixed with float32, and more transcendentals;
// with `int64_too`, int64 ones in a quarter, some mixed with int32, int8,
// bool and float32, with integer ops, casts and aranges): the fuzzers of
// fusion and of the CPU JIT.
// Graphs have 1-30 ops over shapes with odd extents (1, 7, 17, 1023; with
// `square_too`, [256, 256] now and then), sometimes zero-size, and inputs
// sprinkled with NaN, +-Inf and -0.0; some ops take special constants (1,
// +-0.0, 2, -1, inf, NaN, or an expression of them), so that constant
// folding and simplification have work to do.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "graph/array.h"
#include "graph/graph.h"

namespace braze::testing {

struct RandomGraphOptions {
  // Divisors and pow's bases are kept at least 0.5 away from zero, pow's
  // constant exponents finite, log1p's argument away from -1 (|a|) and
  // sin's and cos's within [-64, 64]. A fuzzer that compares against
  // results computed with other rounding (the CPU JIT's vector exp,
  // sigmoid, ... are a few ulp from the interpreter's) needs it:
  // x / (sigmoid(x) - y) turns a one-ulp difference into a finite number
  // against an infinity, erf(x) ** inf one below 1 into 0 against 1.
  bool well_conditioned = false;
  // The JIT fuzzer's: float64 graphs, and expm1, log1p, sin, cos, erf and
  // pow of two values; int64 graphs. Other users keep their streams.
  bool float64_too = false;
  bool int64_too = false;
  // The JIT fuzzer's: a sixteenth of the graphs over [256, 256], where an
  // input read reversed and straight makes tile pairs (Note [Tile pairs]
  // in jit_cpu/row_plan.h).
  bool square_too = false;
};

class RandomGraph {
 public:
  explicit RandomGraph(uint32_t seed, RandomGraphOptions options = {})
      : rng_(seed), well_conditioned_(options.well_conditioned), more_math_(options.float64_too) {
    // Drawn by generators of their own, so that every other seed draws the
    // graph it always drew.
    square_ = options.square_too && std::mt19937(seed ^ 0x5a5a5a5au)() % 16 == 0;
    // A quarter of int64 graphs (NumPy's default integer).
    if (options.int64_too && std::mt19937(~seed)() % 4 == 0) dtype_ = DType::Int64;
    else if (options.float64_too && coin(1.0 / 3)) dtype_ = DType::Float64;  // NumPy's default
  }

  // The dtype of most of its inputs: float32, float64 or int64.
  DType dtype() const { return dtype_; }

  Graph build(std::vector<Array>& inputs) {
    Graph g;
    static constexpr int64_t kExtents[] = {1, 2, 3, 4, 7, 17};
    Shape base = {kExtents[pick(0, 5)], kExtents[pick(0, 5)], kExtents[pick(0, 5)]};
    if (coin(0.1)) base = {kExtents[pick(0, 2)], 1023};  // a long row: every block and tail
    if (coin(0.05)) base[pick(0, static_cast<int>(base.size()) - 1)] = 0;  // zero-size
    if (square_) base = {256, 256};
    for (int i = 0; i < 3; ++i) {
      Shape s = base;
      if (coin(0.3)) s[pick(0, static_cast<int>(s.size()) - 1)] = 1;  // broadcastable
      // A float64 graph reads a float32 input now and then: widened in the
      // kernel; an int64 graph narrower integers, bools and float32.
      DType t = dtype_ == DType::Float64 && coin(0.2) ? DType::Float32 : dtype_;
      static constexpr DType kBeside[] = {DType::Int32, DType::Int8,   DType::Bool,  DType::Float32,
                                          DType::Int16, DType::UInt16, DType::UInt32};
      if (integral() && coin(0.3)) t = kBeside[pick(0, 6)];
      NodeId id = g.input(t, s);
      inputs.push_back(random_array(s, t));
      pool_.push_back(id);
    }
    if (integral() && coin(0.3)) {  // an arange along the last axis
      NodeId a = g.arange(dtype_, base.back(), pick(-1000, 1000), pick(-7, 7));
      pool_.push_back(g.broadcast_to(a, base));
    }
    int steps = pick(1, 30);
    for (int k = 0; k < steps; ++k) {
      try {
        pool_.push_back(random_op(g));
      } catch (const std::exception&) {  // an invalid combination: the builder said why; try another
      }
    }
    g.outputs = {pool_.back()};
    if (pool_.size() > 3 && coin(0.5)) g.outputs.push_back(pool_[pick(3, static_cast<int>(pool_.size()) - 1)]);
    return g;
  }

 private:
  NodeId random_op(Graph& g) {
    NodeId a = pool_[pick(0, static_cast<int>(pool_.size()) - 1)];
    NodeId b = pool_[pick(0, static_cast<int>(pool_.size()) - 1)];
    int64_t rank = g[a].rank();
    switch (pick(0, 8)) {
      case 0: {
        if (integral()) {  // see kIntegerUnary
          if (coin(0.4)) return integer_op(g, a, b);
          return g.apply(kIntegerUnary[pick(0, 5)], {a});
        }
        static constexpr Op unary[] = {Op::Exp, Op::Neg, Op::Tanh, Op::Abs, Op::Sigmoid, Op::Sqrt, Op::Square};
        static constexpr Op math[] = {Op::Expm1, Op::Log1p, Op::Sin, Op::Cos, Op::Erf};
        if (more_math_ && coin(0.5)) {
          Op m = math[pick(0, 4)];
          // log1p near -1 turns an ulp of its argument into any number,
          // and sin and cos of a large one (pow's 10^4) into any of [-1, 1].
          if (m == Op::Log1p && well_conditioned_) a = g.apply(Op::Abs, {a});
          if ((m == Op::Sin || m == Op::Cos) && well_conditioned_) {
            NodeId bound = g.broadcast_to(g.constant(g[a].dtype, 64.0), g[a].shape());
            a = g.apply(Op::Maximum, {g.apply(Op::Minimum, {a, bound}), g.apply(Op::Neg, {bound})});
          }
          return g.apply(m, {a});
        }
        return g.apply(unary[pick(0, 6)], {a});
      }
      case 1:
      case 2: {
        if (more_math_ && !integral() && coin(0.15)) {  // |a| ** b, b kept to [-4, 4] so that results stay finite
          Shape s = broadcast_shapes(g[a].shape(), g[b].shape(), "fuzz");
          NodeId four = g.broadcast_to(g.constant(dtype_, 4.0), g[b].shape());
          NodeId y = g.apply(Op::Maximum, {g.apply(Op::Minimum, {b, four}), g.apply(Op::Neg, {four})});
          NodeId base = g.apply(Op::Abs, {a});
          if (well_conditioned_)  // |a| + 0.5: 0 ** -y is a pole, as a division by 0
            base = g.apply(Op::Add, {base, g.broadcast_to(g.constant(g[a].dtype, 0.5), g[a].shape())});
          return g.apply(Op::Pow, {g.broadcast_to(base, s), g.broadcast_to(y, s)});
        }
        static constexpr Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Maximum};
        Op op = binary[pick(0, 4)];
        Shape s = broadcast_shapes(g[a].shape(), g[b].shape(), "fuzz");
        if (op == Op::Div && well_conditioned_) {  // |b| + 0.5
          NodeId half = g.broadcast_to(g.constant(float_dtype(), 0.5), g[b].shape());
          b = g.apply(Op::Add, {g.apply(Op::Abs, {b}), half});
        }
        return g.apply(op, {g.broadcast_to(a, s), g.broadcast_to(b, s)});
      }
      case 3: {  // reduction over one or two axes, sometimes dropping them
        if (rank == 0) return g.apply(Op::Exp, {a});
        std::vector<int64_t> axes{pick(0, static_cast<int>(rank) - 1)};
        if (rank > 1 && coin(0.3)) axes = {0, rank - 1};
        // Int64 graphs: products and indices of integers too (exact, so
        // that an ulp never moves an index, and float32 products, which
        // overflow where the reference's double does not, stay out).
        static constexpr Op reduce[] = {Op::Sum, Op::Max, Op::Min, Op::Prod, Op::ArgMax, Op::ArgMin};
        const int kinds = integral() && !is_float(g[a].dtype) ? 6 : 3;
        NodeId r = g.apply(reduce[pick(0, kinds - 1)], {a}, Attr{axes, {}});
        if (coin(0.5)) return r;
        Shape kept;
        for (int64_t d = 0; d < rank; ++d)
          if (!std::count(axes.begin(), axes.end(), d)) kept.push_back(g[r].shape()[d]);
        return g.apply(Op::Reshape, {r}, Attr{kept, {}});
      }
      case 4: {  // reversed axes
        std::vector<int64_t> perm(rank);
        for (int64_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
        return g.apply(Op::Permute, {a}, Attr{perm, {}});
      }
      case 5: {  // a reversed or strided slice of the last axis, or zeros padded around it
        if (rank == 0) return g.apply(Op::Neg, {a});
        std::vector<int64_t> starts(rank, 0), steps(rank, 1), lengths = g[a].shape();
        int64_t n = lengths.back();
        if (coin(0.3)) {  // padded (Note [Windows]), then often cut back to its shape at a shift: a stencil's read
          std::vector<int64_t> pads(2 * rank, 0);
          pads[rank - 1] = pick(0, 3), pads[2 * rank - 1] = pick(0, 20);
          if (coin(0.5)) pads[0] = pick(0, 2), pads[rank] = pick(0, 2);
          NodeId p = g.apply(Op::Pad, {a}, Attr{pads, {}});
          if (coin(0.4)) return p;
          for (int64_t d = 0; d < rank; ++d) starts[d] = pick(0, static_cast<int>(pads[d] + pads[rank + d]));
          std::vector<int64_t> ints = starts;
          ints.insert(ints.end(), steps.begin(), steps.end());
          ints.insert(ints.end(), lengths.begin(), lengths.end());
          return g.apply(Op::Slice, {p}, Attr{ints, {}});
        }
        if (coin(0.5)) {
          starts.back() = n - 1;
          steps.back() = -1;
        } else {
          steps.back() = 2;
          lengths.back() = (n + 1) / 2;
        }
        std::vector<int64_t> ints = starts;
        ints.insert(ints.end(), steps.begin(), steps.end());
        ints.insert(ints.end(), lengths.begin(), lengths.end());
        return g.apply(Op::Slice, {a}, Attr{ints, {}});
      }
      case 6: {  // binary with a row statistic: the softmax pattern
        if (rank == 0) return g.apply(Op::Exp, {a});
        NodeId m = g.apply(Op::Max, {a}, Attr{{rank - 1}, {}});
        return g.apply(Op::Sub, {a, g.broadcast_to(m, g[a].shape())});
      }
      case 7: return g.apply(Op::Mul, {a, g.broadcast_to(g.constant(dtype_, integral() ? 3.0 : 0.5), g[a].shape())});
      default: return with_constant(g, a);
    }
  }

  // `a` op c or c op `a`, c often the op's identity (x + -0.0, x ** 1) or a
  // value a rule must not take for one (x + 0.0), sometimes an expression
  // of constants that folds into one.
  NodeId with_constant(Graph& g, NodeId a) {
    static constexpr Op kOps[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Pow, Op::Pow, Op::Minimum};
    static constexpr double kIdentity[] = {-0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.0};
    int k = pick(0, 6);
    Op op = kOps[k];
    if (integral() && is_float(g[a].dtype) && op == Op::Pow) op = Op::Mul;  // (kIntegerUnary)
    bool constant_first = op != Op::Pow && coin(0.3);
    NodeId c = coin(0.5) ? g.constant(dtype_, kIdentity[k]) : special_constant(g);
    static constexpr Op kFolds[] = {Op::Add, Op::Mul, Op::Sub, Op::Maximum, Op::Div};
    if (coin(0.3)) c = g.apply(kFolds[pick(0, 4)], {c, special_constant(g)});
    // x ** inf and x ** nan jump at |x| = 1, where one ulp decides.
    if (well_conditioned_ && op == Op::Pow) c = g.constant(dtype_, kIdentity[k]);
    if (well_conditioned_ && op == Op::Div) {
      if (constant_first) a = g.apply(Op::Add, {g.apply(Op::Abs, {a}), g.broadcast_to(g.constant(float_dtype(), 0.5), g[a].shape())});
      else c = g.constant(dtype_, 2.0);
    }
    c = g.broadcast_to(c, g[a].shape());
    return constant_first ? g.apply(op, {c, a}) : g.apply(op, {a, c});
  }

  NodeId special_constant(Graph& g) {
    static constexpr double kValues[] = {1.0, -0.0, 0.0, 2.0, 0.5, -1.0, INFINITY, NAN};
    static constexpr int64_t kIntegers[] = {1, 0, 2, -1, 7, INT64_MIN, INT64_MAX, (int64_t{1} << 53) + 1};
    if (integral()) return g.constant_int(dtype_, kIntegers[pick(0, 7)]);
    return g.constant(dtype_, kValues[pick(0, 7)]);
  }

  // Int64 graphs: what only integers have (remainder, power, exact
  // compares), and casts between integers and floats.
  NodeId integer_op(Graph& g, NodeId a, NodeId b) {
    Shape s = broadcast_shapes(g[a].shape(), g[b].shape(), "fuzz");
    a = g.broadcast_to(a, s);
    b = g.broadcast_to(b, s);
    // Remainders and compares of integers only: a float remainder is
    // interpreted, and a compare would turn an ulp into a wrong bool.
    const bool ints = !is_float(g[a].dtype) && !is_float(g[b].dtype);
    switch (pick(0, 5)) {
      case 0: return g.apply(ints ? Op::Mod : Op::Minimum, {a, b});
      case 1: {  // bitwise ops (integers only); shift counts on both sides of 64, some negative
        if (!ints) return g.apply(Op::Minimum, {a, b});
        static constexpr Op kBitwise[] = {Op::BitwiseAnd, Op::BitwiseOr, Op::BitwiseXor,
                                          Op::LeftShift,  Op::RightShift, Op::BitwiseInvert};
        Op op = kBitwise[pick(0, 5)];
        if (op == Op::BitwiseInvert) return g.apply(op, {a});
        if ((op == Op::LeftShift || op == Op::RightShift) && g[b].dtype != DType::Bool)
          b = g.apply(Op::Mod, {b, g.broadcast_to(g.constant_int(g[b].dtype, 70), s)});
        return g.apply(op, {a, b});
      }
      case 2: {
        if (!ints) return g.apply(Op::Maximum, {a, b});
        static constexpr Op kCompares[] = {Op::Lt, Op::Le, Op::Eq, Op::Ne, Op::Gt, Op::Ge};
        NodeId c = g.apply(kCompares[pick(0, 5)], {a, b});
        return coin(0.5) ? c : g.apply(Op::Where, {c, a, b});
      }
      case 3: {  // small exponents, a few negative
        if (!ints) return g.apply(Op::Maximum, {a, b});
        NodeId seven = g.broadcast_to(g.constant_int(DType::Int64, 7), s);
        NodeId one = g.broadcast_to(g.constant_int(DType::Int64, 1), s);
        return g.apply(Op::Pow, {a, g.apply(Op::Sub, {g.apply(Op::Mod, {b, seven}), one})});
      }
      default: {  // floats only to floats: trunc(tanh(9)) is 0 or -1 by an ulp
        static constexpr DType kTo[] = {DType::Float32, DType::Float64, DType::Int64, DType::Int8,  DType::UInt8,
                                        DType::Int16,   DType::UInt16,  DType::UInt32, DType::Bool};
        DType to = kTo[pick(0, is_float(g[a].dtype) ? 1 : 8)];
        return g.apply(Op::Cast, {a}, Attr{{static_cast<int64_t>(to)}, {}});
      }
    }
  }

  // Int64 graphs compute floats only by ops that round once, as the
  // reference does (division, sqrt, casts, + - *): their kernels are
  // compared against results fed from the reference, and a kernel that
  // recomputes exp(20) and subtracts the reference's turns the vector
  // exp's ulp into more than any tolerance (the float graphs keep their
  // values near 1, where an ulp stays small).
  static constexpr Op kIntegerUnary[] = {Op::Neg, Op::Abs, Op::Square, Op::Sign, Op::Relu, Op::Sqrt};

  bool integral() const { return !is_float(dtype_); }
  DType float_dtype() const { return integral() ? DType::Float32 : dtype_; }

  Array random_array(const Shape& s, DType t) {
    if (!is_float(t)) return random_integers(s, t);
    Array a = allocate_array(t, s);
    std::normal_distribution<float> d(0.0f, 1.5f);
    static constexpr float kSpecial[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
    for (int64_t i = 0; i < a.numel(); ++i) {
      float v = coin(0.03) ? kSpecial[pick(0, 4)] : d(rng_);
      if (t == DType::Float64) reinterpret_cast<double*>(a.data.get())[i] = v + d(rng_) * 1e-9;  // past float32's bits
      else reinterpret_cast<float*>(a.data.get())[i] = v;
    }
    return a;
  }

  // Small integers mostly, then every integer of the dtype, and its edges.
  // int32 ones stay within 2^24: 32-bit kernels add an int32 to a float32
  // in float32 lanes, which round it past 2^24 where the reference's
  // double does not (jit_cpu/README.md), so the fuzzer makes no int32
  // beyond that, nor casts to int32.
  Array random_integers(const Shape& s, DType t) {
    Array a = allocate_array(t, s);
    static constexpr int64_t kEdges[] = {INT64_MIN, INT64_MAX, 0, -1, (int64_t{1} << 53) + 1, -(1 << 24), 127, -128};
    const int64_t most = t == DType::Int32 ? int64_t{1} << 24 : INT64_MAX;
    std::uniform_int_distribution<int64_t> small(-20, 20), any(-most, most);
    for (int64_t i = 0; i < a.numel(); ++i) {
      int64_t v = coin(0.05) ? kEdges[pick(0, 7)] : coin(0.15) ? any(rng_) : small(rng_);
      if (t == DType::Int32 && (v < -most || v > most)) v = small(rng_);
      store_int(t, a.data.get(), i, v);
    }
    return a;
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng_); }

  std::mt19937 rng_;
  bool square_ = false;
  bool well_conditioned_;
  bool more_math_;
  DType dtype_ = DType::Float32;
  std::vector<NodeId> pool_;
};

// How many graphs a fuzzer runs: BRAZE_FUZZ_GRAPHS, else `fallback` (the
// CI count), from seed BRAZE_FUZZ_FIRST (default 0). A long run, or one
// failing seed again, is one command away:
//   BRAZE_FUZZ_GRAPHS=100000 build/tests/cpp/braze_tests --gtest_filter='*RandomGraphs*'
//   BRAZE_FUZZ_FIRST=825 BRAZE_FUZZ_GRAPHS=1 build/tests/cpp/braze_tests --gtest_filter='*RandomGraphs*'
inline uint32_t env_count(const char* name, uint32_t fallback) {
  const char* env = std::getenv(name);
  return env ? static_cast<uint32_t>(std::stoul(env)) : fallback;
}
inline uint32_t fuzz_graphs(uint32_t fallback) { return env_count("BRAZE_FUZZ_GRAPHS", fallback); }
inline uint32_t fuzz_first() { return env_count("BRAZE_FUZZ_FIRST", 0); }

}  // namespace braze::testing
