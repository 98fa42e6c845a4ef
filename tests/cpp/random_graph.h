// A generator of random graphs of element-wise, view and reduction ops
// over a few float32 inputs (some elements NaN, +-inf, +-0.0) and special
// constants (so that constant folding and simplification fire): the
// fuzzers of fusion and of the CPU JIT.
#pragma once

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "graph/array.h"
#include "graph/graph.h"

namespace braze::testing {

class RandomGraph {
 public:
  explicit RandomGraph(uint32_t seed) : rng_(seed) {}

  Graph build(std::vector<Array>& inputs) {
    Graph g;
    Shape base = {pick(1, 4), pick(1, 5), pick(2, 6)};
    for (int i = 0; i < 3; ++i) {
      Shape s = base;
      if (coin(0.3)) s[pick(0, 2)] = 1;  // broadcastable
      NodeId id = g.input(DType::Float32, s);
      inputs.push_back(random_array(s));
      pool_.push_back(id);
    }
    int steps = pick(4, 14);
    for (int k = 0; k < steps; ++k) {
      try {
        pool_.push_back(random_op(g));
      } catch (const std::exception&) {  // an invalid combination: the builder said why; try another
      }
    }
    g.outputs = {pool_.back()};
    if (coin(0.5)) g.outputs.push_back(pool_[pick(3, static_cast<int>(pool_.size()) - 1)]);
    return g;
  }

 private:
  NodeId random_op(Graph& g) {
    NodeId a = pool_[pick(0, static_cast<int>(pool_.size()) - 1)];
    NodeId b = pool_[pick(0, static_cast<int>(pool_.size()) - 1)];
    int64_t rank = g[a].rank();
    switch (pick(0, 8)) {
      case 0: {
        static constexpr Op unary[] = {Op::Exp, Op::Neg, Op::Tanh, Op::Abs, Op::Sigmoid, Op::Sqrt, Op::Square};
        return g.apply(unary[pick(0, 6)], {a});
      }
      case 1:
      case 2: {
        static constexpr Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Maximum};
        Shape s = broadcast_shapes(g[a].shape(), g[b].shape(), "fuzz");
        return g.apply(binary[pick(0, 4)], {g.broadcast_to(a, s), g.broadcast_to(b, s)});
      }
      case 3: {  // reduction over one or two axes, sometimes dropping them
        if (rank == 0) return g.apply(Op::Exp, {a});
        std::vector<int64_t> axes{pick(0, static_cast<int>(rank) - 1)};
        if (rank > 1 && coin(0.3)) axes = {0, rank - 1};
        static constexpr Op reduce[] = {Op::Sum, Op::Max, Op::Min};
        NodeId r = g.apply(reduce[pick(0, 2)], {a}, Attr{axes, {}});
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
      case 5: {  // a reversed or strided slice of the last axis
        if (rank == 0) return g.apply(Op::Neg, {a});
        std::vector<int64_t> starts(rank, 0), steps(rank, 1), lengths = g[a].shape();
        int64_t n = lengths.back();
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
      case 7: return g.apply(Op::Mul, {a, g.broadcast_to(g.constant(DType::Float32, 0.5), g[a].shape())});
      default: {  // a with a constant: often the op's identity, sometimes an expression of constants
        static constexpr Op with[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Pow, Op::Pow, Op::Minimum};
        static constexpr double identity[] = {-0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.0};
        int k = pick(0, 6);
        NodeId c = coin(0.5) ? g.constant(DType::Float32, identity[k]) : special_constant(g);
        static constexpr Op folds[] = {Op::Add, Op::Mul, Op::Sub, Op::Maximum, Op::Div};
        if (coin(0.3)) c = g.apply(folds[pick(0, 4)], {c, special_constant(g)});
        Shape shape = g[a].shape();
        c = g.broadcast_to(c, shape);
        return with[k] == Op::Pow || coin(0.7) ? g.apply(with[k], {a, c}) : g.apply(with[k], {c, a});
      }
    }
  }

  // 1, +-0.0, 2 and friends: the values simplification looks for.
  NodeId special_constant(Graph& g) {
    static constexpr double values[] = {1.0, -0.0, 0.0, 2.0, 0.5, -1.0,
                                        std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN()};
    return g.constant(DType::Float32, values[pick(0, 7)]);
  }

  Array random_array(const Shape& s) {
    Array a = allocate_array(DType::Float32, s);
    std::normal_distribution<float> d(0.0f, 1.5f);
    auto* p = reinterpret_cast<float*>(a.data.get());
    static constexpr float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                        -std::numeric_limits<float>::infinity(),
                                        std::numeric_limits<float>::quiet_NaN()};
    for (int64_t i = 0; i < a.numel(); ++i) p[i] = coin(0.1) ? special[pick(0, 4)] : d(rng_);
    return a;
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng_); }

  std::mt19937 rng_;
  std::vector<NodeId> pool_;
};

}  // namespace braze::testing
