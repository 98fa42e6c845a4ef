// The graph passes before partition: constant folding, exact algebraic
// simplification and dead-code elimination. Each rule shows the graph
// before and after, and that values on NaN, +-inf, +-0.0 and denormals are
// the same bits (any NaN equal to any NaN) under the reference
// interpreter, the fused schedule and the generated kernels; the rules
// that must not fire are tested as well. A differential fuzzer runs the
// whole pipeline on random graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <random>

#include "fusion/library_rules.h"
#include "fusion/partition.h"
#include "fusion/passes.h"
#include "fusion/schedule.h"
#include "graph/reference.h"
#include "runtime/braze.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "tests/cpp/random_graph.h"
#include "tests/cpp/test_util.h"

namespace braze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// NaN of both signs, both infinities, both zeros, a denormal of float32,
// huge, ordinary.
const std::vector<double> kSpecial = {kNaN, -kInf, kInf, 0.0, -0.0, 1.0, -1.5, 2.5, 1e-40, 3e38, -kNaN, 0.5};

Array special(DType dtype) { return testing::make_array(dtype, {12}, kSpecial); }

size_t count(const Graph& g, Op op) {
  size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

size_t computed(const Graph& g) {
  size_t n = 0;
  for (const Node& node : g.nodes()) n += info(node.op).kind != FusionKind::Leaf && !is_movement(node.op);
  return n;
}

using testing::same_bits;

// Kernels in the partition of a graph the pipeline has run on.
size_t kernels(const Graph& g) {
  size_t n = 0;
  for (const FusedGroup& grp : partition(g).groups) n += grp.kind == FusedGroup::Kind::Kernel;
  return n;
}


// `after` gives the reference's result of `before`, and so does the fused
// schedule of `before` (the whole pipeline) through the spec interpreter
// and through the generated kernels (`generated`: when the graph's ops are
// ones the CPU kernel computes exactly, no transcendentals).
void expect_same(const Graph& before, const Graph& after, std::span<const Array> inputs, bool generated = true) {
  std::vector<Array> want = reference::evaluate(before, inputs, before.outputs);
  std::vector<Array> got = reference::evaluate(after, inputs, after.outputs);
  Schedule s = make_schedule(before);
  std::vector<Array> fused = execute(s, inputs, allocate_array, KernelMode::Interpreted);
  std::vector<Array> jit = execute(s, inputs, allocate_array, KernelMode::Generated);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(same_bits(got[i], want[i])) << "output " << i;
    EXPECT_TRUE(same_bits(fused[i], want[i])) << "output " << i << "\n" << explain(s);
    if (generated) {
      EXPECT_TRUE(same_bits(jit[i], want[i])) << "output " << i << "\n" << explain(s);
    }
  }
}

Graph folded(const Graph& g) { return eliminate_dead(fold_constants(g)); }
Graph simplified(const Graph& g) { return eliminate_dead(simplify(g)); }

NodeId cast(Graph& g, NodeId x, DType to) { return g.apply(Op::Cast, {x}, Attr{{static_cast<int64_t>(to)}, {}}); }

// ---- Constant folding -------------------------------------------------------

// A graph computing `op` on constants, broadcast to [2, 3].
Graph on_constants(Op op, DType dtype, std::vector<double> values, DType result_cast = DType::Bool) {
  Graph g;
  std::vector<NodeId> in;
  for (double v : values) in.push_back(g.broadcast_to(g.constant(dtype, v), {2, 3}));
  if (op == Op::Where) in[0] = cast(g, in[0], DType::Bool);
  NodeId y = op == Op::Cast ? cast(g, in[0], result_cast) : g.apply(op, in);
  g.outputs = {y};
  return g;
}

TEST(FoldConstants, ExactAndCorrectlyRoundedOpsFold) {
  struct Case {
    Op op;
    DType dtype;
    std::vector<double> values;
    DType to = DType::Bool;  // Cast's target
  };
  const std::vector<Case> cases = {
      {Op::Add, DType::Float32, {0.1, 0.2}},       {Op::Sub, DType::Float64, {1e300, -1e300}},
      {Op::Mul, DType::Float32, {3e38, 10.0}},     {Op::Div, DType::Float32, {1.0, 3.0}},
      {Op::Div, DType::Float32, {-0.0, kInf}},     {Op::Sqrt, DType::Float32, {2.0}},
      {Op::Mod, DType::Float32, {-4.0, 2.0}},      {Op::Reciprocal, DType::Float64, {-0.0}},
      {Op::Add, DType::Int8, {127, 1}},            {Op::Mul, DType::Int32, {65536, 65536}},
      {Op::Pow, DType::Int64, {3, 41}},            {Op::Neg, DType::Int8, {-128}},
      {Op::Neg, DType::Float32, {0.0}},            {Op::Neg, DType::Float16, {-kInf}},
      {Op::Maximum, DType::Float32, {kNaN, 1.0}},  {Op::Minimum, DType::Float16, {-0.0, 0.0}},
      {Op::Lt, DType::Float32, {kNaN, 1.0}},       {Op::Eq, DType::Float64, {-0.0, 0.0}},
      {Op::Where, DType::Float32, {0.0, 1.5, kInf}}, {Op::Abs, DType::Float16, {-0.0}},
      {Op::Floor, DType::BFloat16, {-2.5}},        {Op::Round, DType::Float32, {2.5}},
      {Op::IsInf, DType::Float32, {-kInf}},        {Op::LogicalAnd, DType::Float32, {kNaN, 2.0}},
      {Op::Cast, DType::Float32, {0.1}, DType::Float64},  // widening: exact
      {Op::Cast, DType::Int32, {100}, DType::Int8},       // fits
      {Op::Cast, DType::Float64, {-0.0}, DType::BFloat16},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(info(c.op).name) + " " + std::string(name(c.dtype)));
    Graph g = on_constants(c.op, c.dtype, c.values, c.to);
    Graph f = folded(g);
    EXPECT_EQ(computed(f), 0u);
    EXPECT_EQ(count(f, Op::Const), 1u);
    EXPECT_EQ(f[f.outputs[0]].shape(), (Shape{2, 3}));
    EXPECT_EQ(f[f.outputs[0]].dtype, g[g.outputs[0]].dtype);
    expect_same(g, f, {});
  }
}

TEST(FoldConstants, OpsWhoseKernelsComputeDifferentlyDoNotFold) {
  struct Case {
    Op op;
    DType dtype;
    std::vector<double> values;
    DType to = DType::Bool;
    const char* why;
  };
  const std::vector<Case> cases = {
      {Op::Exp, DType::Float32, {1.0}, {}, "the kernel's exp is a polynomial"},
      {Op::Tanh, DType::Float32, {0.5}, {}, "likewise"},
      {Op::Rsqrt, DType::Float32, {3.0}, {}, "two roundings in float32"},
      {Op::Pow, DType::Float32, {2.0, 0.5}, {}, "pow is not correctly rounded"},
      {Op::Add, DType::Float16, {0.1, 0.2}, {}, "a kernel keeps float16 sums in float32"},
      {Op::Div, DType::Int32, {1, 3}, {}, "int32 inputs, float32 result"},
      {Op::Add, DType::Bool, {1, 1}, {}, "bool arithmetic"},
      {Op::Cast, DType::Float64, {0.1}, DType::Float32, "rounds"},
      {Op::Cast, DType::Float32, {kNaN}, DType::Int32, "NaN to int is implementation-defined"},
      {Op::Cast, DType::Float32, {-0.0}, DType::Int32, "loses the sign"},
      {Op::Cast, DType::Int32, {300}, DType::UInt8, "wraps"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(info(c.op).name) + " " + std::string(name(c.dtype)) + ": " + c.why);
    Graph g = on_constants(c.op, c.dtype, c.values, c.to);
    EXPECT_EQ(count(folded(g), c.op), 1u);
  }
  // Mixed input dtypes: an int32 converted to float32 may round in a kernel.
  Graph g;
  NodeId a = g.broadcast_to(g.constant_int(DType::Int32, 16777217), {3});
  NodeId b = g.broadcast_to(g.constant(DType::Float32, 1.0), {3});
  g.outputs = {g.apply(Op::Add, {a, b})};
  EXPECT_EQ(count(folded(g), Op::Add), 1u);
}

TEST(FoldConstants, MaxMinAndArgMaxOfAConstantFold) {
  for (Op op : {Op::Max, Op::Min, Op::ArgMax, Op::ArgMin}) {
    for (double v : {-0.0, kNaN, 2.5}) {
      SCOPED_TRACE(std::string(info(op).name) + " of " + std::to_string(v));
      Graph g;
      g.outputs = {g.apply(op, {g.broadcast_to(g.constant(DType::Float32, v), {3, 4})}, Attr{{1}, {}})};
      Graph f = folded(g);
      EXPECT_EQ(computed(f), 0u);
      expect_same(g, f, {}, /*generated=*/op == Op::Max || op == Op::Min);
    }
  }
  // Sums round differently in a kernel (its summation order).
  Graph g;
  NodeId c = g.constant(DType::Float32, 0.1);
  g.outputs = {g.apply(Op::Sum, {g.broadcast_to(c, {3, 4})}, Attr{{1}, {}})};
  EXPECT_EQ(count(folded(g), Op::Sum), 1u);
}

TEST(FoldConstants, FoldsChainsAndLeavesTensorsAlone) {
  Graph g;
  NodeId x = g.input(DType::Float32, {12});
  NodeId c = g.apply(Op::Mul, {g.constant(DType::Float32, 1.5), g.constant(DType::Float32, -4.0)});  // -6
  c = g.apply(Op::Maximum, {c, g.constant(DType::Float32, -7.0)});                                   // -6
  NodeId y = g.apply(Op::Add, {x, g.broadcast_to(c, {12})});
  g.outputs = {y};
  Graph f = folded(g);
  EXPECT_EQ(count(f, Op::Mul) + count(f, Op::Maximum), 0u);
  EXPECT_EQ(count(f, Op::Add), 1u);
  expect_same(g, f, std::vector<Array>{special(DType::Float32)});
}

TEST(FoldConstants, PythonConstantsFold) {
  // bz.full((2, 3), 2.0) + 1.0 is a constant; x * (c + 1.0) keeps x's Mul.
  Tensor c = full({2, 3}, 2.0) + 1.0;
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Lowered l = lower(std::vector<Tensor>{x * c});
  Graph f = folded(l.graph);
  EXPECT_EQ(count(l.graph, Op::Add), 1u);
  EXPECT_EQ(count(f, Op::Add), 0u);
  EXPECT_EQ(count(f, Op::Mul), 1u);
  expect_same(l.graph, f, l.inputs);
}

// ---- Simplification ---------------------------------------------------------

struct Rule {
  std::string name;
  DType dtype;
  std::function<NodeId(Graph&, NodeId)> build;  // from input x of `dtype`, shape [12]
  Op left;                                      // what remains of the rewritten op
  size_t count;                                 // how many of it remain
};

void check_rules(const std::vector<Rule>& rules, bool generated = true) {
  for (const Rule& r : rules) {
    SCOPED_TRACE(r.name + " on " + std::string(name(r.dtype)));
    Graph g;
    NodeId x = g.input(r.dtype, {12});
    g.outputs = {r.build(g, x)};
    Graph s = simplified(g);
    EXPECT_EQ(count(s, r.left), r.count);
    EXPECT_EQ(s[s.outputs[0]].shape(), g[g.outputs[0]].shape());
    EXPECT_EQ(s[s.outputs[0]].dtype, g[g.outputs[0]].dtype);
    Array in = is_float(r.dtype) ? special(r.dtype)
                                 : testing::make_int_array(r.dtype, {12}, {0, 1, -1, 2, -128, 127, 5, -7, 64, 3, 0, 9});
    expect_same(g, s, std::vector<Array>{in}, generated && is_float(r.dtype));
  }
}

NodeId k(Graph& g, DType t, double v) { return g.constant(t, v); }
NodeId bin(Graph& g, Op op, NodeId a, NodeId b) { return g.apply(op, {a, b}); }

// x op v and v op x, the constant of x's dtype unless told otherwise.
auto rhs(Op op, double v, std::optional<DType> t = std::nullopt) {
  return [=](Graph& g, NodeId x) { return bin(g, op, x, k(g, t.value_or(g[x].dtype), v)); };
}
auto lhs(Op op, double v, std::optional<DType> t = std::nullopt) {
  return [=](Graph& g, NodeId x) { return bin(g, op, k(g, t.value_or(g[x].dtype), v), x); };
}
auto twice(Op op) {
  return [=](Graph& g, NodeId x) { return g.apply(op, {g.apply(op, {x})}); };
}

TEST(Simplify, IdentityOperandsVanish) {
  using F = DType;
  check_rules({
      {"x * 1", F::Float32, rhs(Op::Mul, 1), Op::Mul, 0},
      {"1 * x", F::Float16, lhs(Op::Mul, 1), Op::Mul, 0},
      {"x / 1", F::Float64, rhs(Op::Div, 1), Op::Div, 0},
      {"x + -0.0", F::Float32, rhs(Op::Add, -0.0), Op::Add, 0},
      {"-0.0 + x", F::BFloat16, lhs(Op::Add, -0.0), Op::Add, 0},
      {"x - 0.0", F::Float32, rhs(Op::Sub, 0.0), Op::Sub, 0},
      {"x - int 0 in float", F::Float32, rhs(Op::Sub, 0, F::Int32), Op::Sub, 0},
      {"x + 0 (int)", F::Int32, rhs(Op::Add, 0), Op::Add, 0},
      {"0 + x (int)", F::UInt8, lhs(Op::Add, 0), Op::Add, 0},
      {"x - 0 (int)", F::Int8, rhs(Op::Sub, 0), Op::Sub, 0},
      {"x * true", F::Float32, rhs(Op::Mul, 1, F::Bool), Op::Mul, 0},
      {"x ** 1", F::Float32, rhs(Op::Pow, 1), Op::Pow, 0},
      {"x ** 1", F::Float64, rhs(Op::Pow, 1), Op::Pow, 0},
      {"x ** 1", F::BFloat16, rhs(Op::Pow, 1), Op::Pow, 0},
      {"x ** 1 (int)", F::Int64, rhs(Op::Pow, 1), Op::Pow, 0},
      {"astype same", F::Float16, [](Graph& g, NodeId x) { return cast(g, x, F::Float16); }, Op::Cast, 0},
      {"max(x, x)", F::Float32, [](Graph& g, NodeId x) { return bin(g, Op::Maximum, x, x); }, Op::Maximum, 0},
      {"min(x, x)", F::Int32, [](Graph& g, NodeId x) { return bin(g, Op::Minimum, x, x); }, Op::Minimum, 0},
  });
}

TEST(Simplify, SignChangesBecomeNegations) {
  using F = DType;
  auto minus = [](Graph& g, NodeId x) { return g.apply(Op::Neg, {x}); };
  check_rules({
      {"x * -1", F::Float32, rhs(Op::Mul, -1), Op::Mul, 0},
      {"x * -1", F::Float32, rhs(Op::Mul, -1), Op::Neg, 1},
      {"-1 * x (int, MIN wraps)", F::Int8, lhs(Op::Mul, -1), Op::Neg, 1},
      {"x / -1", F::Float16, rhs(Op::Div, -1), Op::Div, 0},
      {"-0.0 - x", F::Float32, lhs(Op::Sub, -0.0), Op::Sub, 0},
      {"0 - x (int)", F::Int32, lhs(Op::Sub, 0), Op::Neg, 1},
      {"-(-x)", F::Float32, twice(Op::Neg), Op::Neg, 0},
      {"-(-x) (int)", F::Int8, twice(Op::Neg), Op::Neg, 0},
      {"x - (-x)", F::Float32, [&](Graph& g, NodeId x) { return bin(g, Op::Sub, x, minus(g, x)); }, Op::Sub, 0},
      {"x + (-x)", F::Float32, [&](Graph& g, NodeId x) { return bin(g, Op::Add, x, minus(g, x)); }, Op::Add, 0},
      {"(-x) + x", F::Int32, [&](Graph& g, NodeId x) { return bin(g, Op::Add, minus(g, x), x); }, Op::Neg, 0},
      {"abs(-x)", F::Float32, [&](Graph& g, NodeId x) { return g.apply(Op::Abs, {minus(g, x)}); }, Op::Neg, 0},
      {"abs(-x) (int)", F::Int8, [&](Graph& g, NodeId x) { return g.apply(Op::Abs, {minus(g, x)}); }, Op::Neg, 0},
  });
}

// x ** 2 and square(x) on every float16 and bfloat16 and on a million
// float32 bit patterns: the reference's pow returns x * x exactly.
TEST(Simplify, SquareForPowOfTwo) {
  using F = DType;
  auto pow2 = rhs(Op::Pow, 2);
  for (DType t : {F::Float32, F::Float16, F::BFloat16, F::Int32, F::UInt8})
    check_rules({{"x ** 2", t, pow2, Op::Square, 1}, {"x ** 2", t, pow2, Op::Pow, 0}});
  auto every = [&](DType t, int64_t n, auto bits_of) {
    SCOPED_TRACE(name(t));
    Array a = allocate_array(t, {n});
    for (int64_t i = 0; i < n; ++i) bits_of(a.data.get(), i);
    Graph g;
    g.outputs = {pow2(g, g.input(t, {n}))};
    Graph s = simplified(g);
    EXPECT_EQ(count(s, Op::Square), 1u);
    std::vector<Array> in{std::move(a)};
    EXPECT_TRUE(same_bits(reference::evaluate(g, in, g.outputs)[0], reference::evaluate(s, in, s.outputs)[0]));
  };
  auto all16 = [](std::byte* p, int64_t i) { reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(i); };
  every(F::Float16, 65536, all16);
  every(F::BFloat16, 65536, all16);
  std::mt19937 rng(7);
  every(F::Float32, 1 << 20, [&](std::byte* p, int64_t i) { reinterpret_cast<uint32_t*>(p)[i] = rng(); });
}

TEST(Simplify, CopiesCastsAndWheres) {
  using F = DType;
  auto where = [](Graph& g, bool c, NodeId a, NodeId b) {
    Shape shape = g[a].shape();  // a copy: adding the constant may move the nodes
    return g.apply(Op::Where, {g.broadcast_to(k(g, F::Bool, c), shape), a, b});
  };
  check_rules({
      {"copy(exp(x))", F::Float32, [](Graph& g, NodeId x) { return g.apply(Op::Copy, {g.apply(Op::Exp, {x})}); },
       Op::Copy, 0},
      {"copy(x) of an input stays", F::Float32, [](Graph& g, NodeId x) { return g.apply(Op::Copy, {x}); }, Op::Copy, 1},
      {"where(true, x, -x)", F::Float32,
       [&](Graph& g, NodeId x) { return where(g, true, x, g.apply(Op::Neg, {x})); }, Op::Where, 0},
      {"where(false, x, abs(x))", F::Float32,
       [&](Graph& g, NodeId x) { return where(g, false, x, g.apply(Op::Abs, {x})); }, Op::Where, 0},
      {"where(c, x, x)", F::Float32,
       [](Graph& g, NodeId x) { return g.apply(Op::Where, {g.apply(Op::IsNan, {x}), x, x}); }, Op::Where, 0},
  }, /*generated=*/false);  // exp's polynomial differs from the reference, by design
}

TEST(Simplify, IdempotentOpsAndIntegerRounding) {
  using F = DType;
  for (Op op : {Op::Abs, Op::Relu, Op::Sign, Op::Floor, Op::Ceil, Op::Round})
    check_rules({{std::string(info(op).name), F::Float32, twice(op), op, 1}});
  check_rules({
      {"floor(int)", F::Int32, [](Graph& g, NodeId x) { return g.apply(Op::Floor, {x}); }, Op::Floor, 0},
      {"round(int)", F::Int64, [](Graph& g, NodeId x) { return g.apply(Op::Round, {x}); }, Op::Round, 0},
  });
  // No integer is NaN or infinite: a constant false, x never read; a float's stays.
  auto unary = [](Op op) { return [op](Graph& g, NodeId x) { return g.apply(op, {x}); }; };
  for (Op op : {Op::IsNan, Op::IsInf}) {
    for (DType t : {F::Int8, F::UInt32, F::Int64, F::Bool})
      check_rules({{std::string(info(op).name) + "(int)", t, unary(op), op, 0}});
    check_rules({{std::string(info(op).name) + "(float)", F::Float32, unary(op), op, 1}});
  }
  // Nor has an unsigned integer or a bool a sign bit; a signed one's is read.
  for (DType t : {F::UInt8, F::UInt32, F::Bool}) check_rules({{"signbit(unsigned)", t, unary(Op::SignBit), Op::SignBit, 0}});
  for (DType t : {F::Int8, F::Int64, F::Float16}) check_rules({{"signbit(signed)", t, unary(Op::SignBit), Op::SignBit, 1}});
}

TEST(Simplify, RulesThatMustNotFire) {
  using F = DType;
  check_rules({
      {"x + 0.0", F::Float32, rhs(Op::Add, 0.0), Op::Add, 1},
      {"0.0 + x", F::Float32, lhs(Op::Add, 0.0), Op::Add, 1},
      {"x - -0.0", F::Float32, rhs(Op::Sub, -0.0), Op::Sub, 1},
      {"0.0 - x", F::Float32, lhs(Op::Sub, 0.0), Op::Sub, 1},
      {"x + int 0 in float", F::Float32, rhs(Op::Add, 0, F::Int32), Op::Add, 1},
      {"x * 0", F::Float32, rhs(Op::Mul, 0), Op::Mul, 1},
      {"x * -0.0", F::Float32, rhs(Op::Mul, -0.0), Op::Mul, 1},
      {"x - x", F::Float32, [](Graph& g, NodeId x) { return bin(g, Op::Sub, x, x); }, Op::Sub, 1},
      {"x / x", F::Float32, [](Graph& g, NodeId x) { return bin(g, Op::Div, x, x); }, Op::Div, 1},
      {"x ** 2 in float64", F::Float64, rhs(Op::Pow, 2), Op::Pow, 1},
      {"x ** 0.5", F::Float32, rhs(Op::Pow, 0.5), Op::Pow, 1},
      {"x ** -1", F::Float32, rhs(Op::Pow, -1), Op::Pow, 1},
      {"1.0000001 in float16 is not 1", F::Float16, rhs(Op::Mul, 1.0000001, F::Float16), Op::Mul, 1},
      {"x * -1 in bool", F::Bool, rhs(Op::Mul, -1, F::Bool), Op::Mul, 1},
  });
  // Another dtype: int32 * 1.0 converts to float32 and is not x.
  check_rules({{"int * 1.0", F::Int32, rhs(Op::Mul, 1, F::Float32), Op::Mul, 1},
               {"int * -1.0", F::Int32, rhs(Op::Mul, -1, F::Float32), Op::Neg, 0},
               {"astype(int, float32)", F::Int32, [](Graph& g, NodeId x) { return cast(g, x, F::Float32); }, Op::Cast,
                1}});
  // Why each of those is wrong, on the values that break it.
  auto eval = [](Op op, double a, double b) {
    Graph g;
    g.outputs = {g.apply(op, {g.constant(DType::Float64, a), g.constant(DType::Float64, b)})};
    return testing::doubles(reference::evaluate(g, {}, g.outputs)[0])[0];
  };
  EXPECT_FALSE(std::signbit(eval(Op::Add, -0.0, 0.0)));        // x + 0.0 is not x
  EXPECT_FALSE(std::signbit(eval(Op::Sub, 0.0, 0.0)));         // 0.0 - x is not -x
  EXPECT_TRUE(std::isnan(eval(Op::Mul, kInf, 0.0)));           // x * 0 is not 0
  EXPECT_FALSE(std::signbit(eval(Op::Pow, -0.0, 0.5)));        // pow(x, 0.5) is not sqrt(x)
  EXPECT_EQ(eval(Op::Pow, -kInf, 0.5), kInf);
}

// A rewrite that would leave several readers reading an input instead of
// the node they share keeps the node: it is what fuses them into one
// kernel. A negation read elsewhere is not rewritten around either.
TEST(Simplify, SharedNodesStayWhereTheyTieAKernel) {
  Graph g;
  NodeId x = g.input(DType::Float32, {4, 8});
  NodeId h = g.apply(Op::Mul, {x, g.broadcast_to(g.constant(DType::Float32, 1.0), {4, 8})});
  NodeId m = g.apply(Op::Max, {h}, Attr{{1}, {}});
  g.outputs = {g.apply(Op::Sub, {h, g.broadcast_to(m, {4, 8})}), g.apply(Op::Exp, {h})};
  Graph s = simplified(g);
  EXPECT_EQ(count(s, Op::Mul), 1u);
  static constexpr std::string_view kRewrites[] = {"fold_constants", "simplify", "eliminate_dead"};
  EXPECT_EQ(kernels(run_pipeline(g)), 1u);
  EXPECT_EQ(kernels(run_pipeline(g, kRewrites)), 1u);
  expect_same(g, s, std::vector<Array>{testing::make_array(DType::Float32, {4, 8}, std::vector<double>(32, -0.0))},
              /*generated=*/false);

  Graph one;  // read once: x * 1 goes
  NodeId y = one.input(DType::Float32, {4, 8});
  one.outputs = {one.apply(Op::Exp, {one.apply(Op::Mul, {y, one.broadcast_to(one.constant(DType::Float32, 1.0), {4, 8})})})};
  EXPECT_EQ(count(simplified(one), Op::Mul), 0u);

  Graph view;  // nor when it would become a view: a row sum read through a reshape
  NodeId z = view.input(DType::Float32, {4, 8});
  NodeId row = view.apply(Op::Reshape, {view.apply(Op::Sum, {z}, Attr{{1}, {}})}, Attr{{4}, {}});
  NodeId r = view.apply(Op::Mul, {row, view.broadcast_to(view.constant(DType::Float32, 1.0), {4})});
  view.outputs = {view.apply(Op::Exp, {r}), r};
  EXPECT_EQ(count(simplified(view), Op::Mul), 1u);

  Graph neg;  // x + (-y) keeps its Add while -y is an output too
  NodeId a = neg.input(DType::Float32, {8}), b = neg.input(DType::Float32, {8});
  NodeId minus_b = neg.apply(Op::Neg, {b});
  neg.outputs = {neg.apply(Op::Add, {a, minus_b}), minus_b};
  Graph t = simplified(neg);
  EXPECT_EQ(count(t, Op::Add), 1u);
  EXPECT_EQ(count(t, Op::Sub), 0u);
}

// Note [Movement chains]: the builders' chains collapse, reading the same
// elements.
TEST(Simplify, MovementChainsShorten) {
  struct Case {
    std::string name;
    std::function<NodeId(Graph&, NodeId)> build;  // from x of shape [3, 4]
    size_t moves;                                 // movement ops left
  };
  auto reshape = [](Graph& g, NodeId x, Shape s) { return g.apply(Op::Reshape, {x}, Attr{std::move(s), {}}); };
  auto permute = [](Graph& g, NodeId x, Shape p) { return g.apply(Op::Permute, {x}, Attr{std::move(p), {}}); };
  const std::vector<Case> cases = {
      {"reshape of reshape", [&](Graph& g, NodeId x) { return reshape(g, reshape(g, x, {12}), {2, 6}); }, 1},
      {"reshape back", [&](Graph& g, NodeId x) { return reshape(g, reshape(g, x, {4, 3}), {3, 4}); }, 0},
      {"permute of permute", [&](Graph& g, NodeId x) {
         NodeId y = reshape(g, x, {3, 2, 2});
         return permute(g, permute(g, y, {2, 0, 1}), {0, 2, 1});
       }, 2},
      {"permute back", [&](Graph& g, NodeId x) { return permute(g, permute(g, x, {1, 0}), {1, 0}); }, 0},
      {"broadcast of broadcast", [&](Graph& g, NodeId x) {
         return g.broadcast_to(g.broadcast_to(reshape(g, x, {3, 1, 4}), {3, 5, 4}), {2, 3, 5, 4});
       }, 2},  // four ops become reshape to [1, 3, 1, 4], expand to [2, 3, 5, 4]
      {"expand to the same shape", [](Graph& g, NodeId x) { return g.apply(Op::Expand, {x}, Attr{{3, 4}, {}}); }, 0},
      {"keepdims=False and back over a reduction", [&](Graph& g, NodeId x) {
         return reshape(g, reshape(g, g.apply(Op::Sum, {x}, Attr{{1}, {}}), {3}), {3, 1});
       }, 0},
      {"over an element-wise node: push_views' business", [&](Graph& g, NodeId x) {
         return reshape(g, reshape(g, g.apply(Op::Neg, {x}), {12}), {2, 6});
       }, 2},
      {"transposed then reshaped keeps both", [&](Graph& g, NodeId x) { return reshape(g, permute(g, x, {1, 0}), {12}); },
       2},  // not expressible as a view: a copy sits between them
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    NodeId x = g.input(DType::Float32, {3, 4});
    g.outputs = {g.apply(Op::Exp, {c.build(g, x)})};
    Graph s = simplified(g);
    size_t moves = 0;
    for (const Node& n : s.nodes()) moves += is_movement(n.op);
    EXPECT_EQ(moves, c.moves);
    std::vector<double> v(12);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) - 5.5;
    std::vector<Array> in{testing::make_array(DType::Float32, {3, 4}, v)};
    EXPECT_TRUE(same_bits(reference::evaluate(g, in, g.outputs)[0], reference::evaluate(s, in, s.outputs)[0]));
  }
}

TEST(Simplify, BroadcastingByOneKeepsTheShape) {
  Graph g;
  NodeId x = g.input(DType::Float32, {12});
  NodeId ones = g.input(DType::Float32, {1});  // unused: inputs stay
  (void)ones;
  NodeId y = g.apply(Op::Mul, {g.broadcast_to(x, {2, 12}), g.broadcast_to(g.constant(DType::Float32, 1.0), {2, 12})});
  g.outputs = {y};
  Graph s = simplified(g);
  NodeId out = s.outputs[0];
  EXPECT_EQ(count(s, Op::Mul), 0u);
  EXPECT_NE(out, s.inputs()[0]);  // the broadcast of x, not x
  EXPECT_EQ(s[out].op, Op::Expand);
  EXPECT_EQ(s[out].shape(), (Shape{2, 12}));
  expect_same(g, s, std::vector<Array>{special(DType::Float32), testing::make_array(DType::Float32, {1}, {1.0})});
}

TEST(Simplify, PythonScalarsAreConstantsTheRulesSee) {
  Tensor x = from_vector<float>({1, -0.0f, 3, NAN}, {2, 2});
  Lowered l = lower(std::vector<Tensor>{x * 1.0 + (-0.0), x * 2.0, x + 0.0});
  Graph s = simplified(l.graph);
  EXPECT_EQ(s.outputs[0], s.inputs()[0]);
  EXPECT_EQ(count(s, Op::Mul), 1u);  // x * 2.0
  EXPECT_EQ(count(s, Op::Add), 1u);  // x + 0.0
  expect_same(l.graph, s, l.inputs);
}

// ---- Dead nodes and the pipeline ------------------------------------------------

TEST(EliminateDead, DropsWhatNoOutputReadsAndKeepsEveryInput) {
  Graph g;
  NodeId x = g.input(DType::Float32, {12});
  NodeId unused = g.input(DType::Float32, {3});
  NodeId dead = g.apply(Op::Exp, {g.apply(Op::Sum, {x}, Attr{{0}, {}})});
  NodeId y = g.apply(Op::Abs, {x});
  g.outputs = {y};
  (void)dead;
  Graph d = eliminate_dead(g);
  EXPECT_EQ(d.size(), 3u);  // x, unused, abs
  ASSERT_EQ(d.inputs().size(), 2u);
  EXPECT_EQ(d[d.inputs()[1]].attr.ints, std::vector<int64_t>{1});
  EXPECT_EQ(d[unused].shape(), (Shape{3}));
  EXPECT_EQ(count(d, Op::Exp) + count(d, Op::Sum), 0u);
  expect_same(g, d, std::vector<Array>{special(DType::Float32), testing::make_array(DType::Float32, {3}, {1, 2, 3})});
}

TEST(EliminateDead, RewritesLeaveNoDeadNodesAfterThePipeline) {
  Graph g;
  NodeId x = g.input(DType::Float32, {12});
  NodeId c = g.apply(Op::Add, {g.constant(DType::Float32, 0.5), g.constant(DType::Float32, 0.5)});  // 1
  g.apply(Op::Exp, {x});                                                                               // dead
  g.outputs = {g.apply(Op::Relu, {g.apply(Op::Mul, {x, g.broadcast_to(c, {12})})})};
  Graph p = run_pipeline(g);
  // Everything but the inputs is read by an output.
  std::vector<bool> read(p.size(), false);
  for (NodeId o : p.outputs) read[o] = true;
  for (NodeId id = static_cast<NodeId>(p.size()); id-- > 0;)
    if (read[id])
      for (NodeId i : p[id].inputs) read[i] = true;
  for (NodeId id = 0; id < p.size(); ++id)
    EXPECT_TRUE(read[id] || p[id].op == Op::Input) << info(p[id].op).name << "#" << id;
  EXPECT_EQ(count(p, Op::Mul) + count(p, Op::Add) + count(p, Op::Exp) + count(p, Op::Const), 0u);
  expect_same(g, p, std::vector<Array>{special(DType::Float32)});
}

// Unfused edges from an element-wise value to a reduction over other axes
// than the kernel holding the value reduces.
size_t split_for_reductions(const Graph& g) {
  size_t n = 0;
  for (const UnfusedEdge& e : partition(g).unfused) n += is_elementwise(g[e.producer].op) && is_reduce(g[e.consumer].op);
  return n;
}

// The differential check of the pipeline: on random graphs (odd shapes,
// NaN/inf/-0.0 inputs, special constants), the reference interpreter gives
// the same bits (NaN equal to NaN) before and after the passes, and the
// rewriting passes do not add a kernel. One exception, rare (1 graph in
// 60000) and counted: folding can make two computations identical
// (x ** (2 + -0.0) and x ** max(2, -0.0)), the graph interns them into one
// node, and when two reductions over different axes read it, the partition,
// which does not recompute a node in a second kernel, writes it out.
TEST(Pipeline, RandomGraphsKeepTheirValuesAndKernelCounts) {
  const uint32_t graphs = testing::fuzz_graphs(600), first = testing::fuzz_first();
  static constexpr std::string_view kRewrites[] = {"fold_constants", "simplify", "eliminate_dead"};
  int folded_graphs = 0, simplified_graphs = 0, fewer_kernels = 0, shared_nodes = 0;
  for (uint32_t seed = first; seed < first + graphs; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed).build(inputs);
    Graph p = run_pipeline(g);
    std::vector<Array> want = reference::evaluate(g, inputs, g.outputs);
    std::vector<Array> got = reference::evaluate(p, inputs, p.outputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << "output " << i;
    Graph unrewritten = run_pipeline(g, kRewrites);
    size_t with = kernels(p), without = kernels(unrewritten);
    if (with > without && split_for_reductions(p) > split_for_reductions(unrewritten)) {
      ++shared_nodes;
    } else {
      EXPECT_LE(with, without);
    }
    fewer_kernels += with < without;
    Graph live = eliminate_dead(g), f = folded(live);
    folded_graphs += computed(f) < computed(live);
    simplified_graphs += computed(simplified(f)) < computed(f);
  }
  if (graphs >= 100) {  // the generator gives every rewrite something to do (a replay of one seed aside)
    EXPECT_GE(folded_graphs * 20, static_cast<int>(graphs)) << folded_graphs << " of " << graphs << " graphs";
    EXPECT_GE(simplified_graphs * 20, static_cast<int>(graphs)) << simplified_graphs << " of " << graphs << " graphs";
    EXPECT_LE(shared_nodes * 1000, static_cast<int>(graphs)) << shared_nodes << " of " << graphs << " graphs";
  }
  std::cout << "[ pipeline ] " << graphs << " graphs: folding changed " << folded_graphs << ", simplification "
            << simplified_graphs << ", fewer kernels in " << fewer_kernels << ", one more kernel for a node two reductions share in "
            << shared_nodes << "\n";
}

// Note [Reductions in memory order]: x.transpose(1, 2, 0).sum(axis=0) of a
// contiguous [A, B, C] reduces x in its own order and views the [C, A]
// result back; a reduction whose kept axes are in memory order, or a
// single kept axis, is left alone; the values keep their bits.
TEST(ReduceInMemoryOrder, KeptAxesFollowMemory) {
  Graph g;
  NodeId x = g.input(DType::Float32, {4, 5, 6});
  NodeId rotated = g.apply(Op::Permute, {x}, Attr{{1, 2, 0}, {}});           // [5, 6, 4]
  NodeId s = g.apply(Op::Sum, {g.apply(Op::Exp, {rotated})}, Attr{{0}, {}});  // [1, 6, 4]
  NodeId t = g.apply(Op::Max, {g.apply(Op::Permute, {x}, Attr{{2, 1, 0}, {}})}, Attr{{1}, {}});  // [6, 1, 4]
  NodeId alone = g.apply(Op::Sum, {g.apply(Op::Permute, {x}, Attr{{2, 0, 1}, {}})}, Attr{{1, 2}, {}});
  g.outputs = {s, t, alone};
  Graph p = run_pipeline(g);
  size_t reductions = 0;
  for (NodeId id = 0; id < p.size(); ++id) {
    if (!is_reduce(p[id].op)) continue;
    ++reductions;
    const Node& in = p[p[id].inputs[0]];
    if (p[id].attr.ints == std::vector<int64_t>{1, 2}) {  // one kept axis: as it was
      EXPECT_EQ(in.shape(), (Shape{6, 4, 5}));
      continue;
    }
    // Kept axes in memory order: x's own [4, ., 6] or [4, 5, .].
    const Node& leaf = is_movement(in.op) ? in : p[in.inputs[0]];  // x's view, or under the exp
    Strides st = leaf.view.strides;
    std::vector<int64_t> kept;
    for (size_t a = 0; a < st.size(); ++a)
      if (std::find(p[id].attr.ints.begin(), p[id].attr.ints.end(), static_cast<int64_t>(a)) == p[id].attr.ints.end())
        kept.push_back(st[a]);
    EXPECT_TRUE(std::is_sorted(kept.rbegin(), kept.rend())) << to_string(st);
  }
  EXPECT_EQ(reductions, 3u);
  std::vector<double> v(120);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 12 == 0 ? kSpecial[i / 12] : 0.37 * static_cast<double>(i) - 20;
  expect_same(g, p, std::vector<Array>{testing::make_array(DType::Float32, {4, 5, 6}, v)}, /*generated=*/false);
}

// ---- Split reductions -------------------------------------------------------

// Small thresholds, so small graphs split: 8 blocks of at least 4, 16
// threads of at least 4.
const ReductionSplit kSmallSplit{8, 4, 16, 4};

std::vector<const Node*> reductions(const Graph& g) {
  std::vector<const Node*> r;
  for (const Node& n : g.nodes())
    if (is_reduce(n.op)) r.push_back(&n);
  return r;
}

// Small integers: sums in any order are exact, so the split graph gives the
// reference's bits.
Array integers(DType dtype, Shape shape) {
  std::vector<double> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int64_t>(i * 7 % 23) - 11);
  return testing::make_array(dtype, shape, v);
}

TEST(SplitReductions, FewRowsSplitAlongTheAxisWithTheMostParts) {
  Graph g;
  NodeId x = g.input(DType::Float32, {6, 10});
  g.outputs = {g.apply(Op::Sum, {x}, Attr{{0, 1}, {}})};
  Graph p = split_reductions(run_pipeline(g), kSmallSplit);
  std::vector<const Node*> r = reductions(p);
  ASSERT_EQ(r.size(), 2u);
  // At most 8 parts: axis 0 splits into 6 (axis 1 only into 5).
  EXPECT_EQ(p[r[0]->inputs[0]].shape(), (Shape{6, 1, 10}));
  EXPECT_EQ(r[0]->shape(), (Shape{6, 1, 1}));
  EXPECT_EQ(r[1]->shape(), (Shape{1, 1}));
  expect_same(g, p, std::vector<Array>{integers(DType::Float32, {6, 10})});
}

TEST(SplitReductions, ColumnsSplitDownTheColumns) {
  Graph g;
  NodeId x = g.input(DType::Int32, {12, 3});
  g.outputs = {g.apply(Op::Sum, {g.apply(Op::Mul, {x, x})}, Attr{{0}, {}})};
  Graph p = split_reductions(run_pipeline(g), kSmallSplit);
  std::vector<const Node*> r = reductions(p);
  ASSERT_EQ(r.size(), 2u);
  // 3 columns want 16 / 3 -> 6 parts of at least 4: 12 has 3.
  EXPECT_EQ(p[r[0]->inputs[0]].shape(), (Shape{3, 4, 3}));
  EXPECT_EQ(r[1]->dtype, DType::Int64);
  expect_same(g, p, std::vector<Array>{integers(DType::Int32, {12, 3})});
}

TEST(SplitReductions, MaxAndMinKeepNaNsAndInfinities) {
  for (Op op : {Op::Max, Op::Min}) {
    Graph g;
    NodeId x = g.input(DType::Float32, {12});
    g.outputs = {g.apply(op, {x}, Attr{{0}, {}})};
    Graph p = split_reductions(run_pipeline(g), kSmallSplit);
    EXPECT_EQ(reductions(p).size(), 2u);
    expect_same(g, p, std::vector<Array>{special(DType::Float32)});
    std::vector<double> no_nan = kSpecial;
    no_nan[0] = no_nan[10] = 4.0;
    expect_same(g, p, std::vector<Array>{testing::make_array(DType::Float32, {12}, no_nan)});
  }
}

TEST(SplitReductions, WhatMustNotSplit) {
  auto splits = [](const Graph& g) { return reductions(split_reductions(run_pipeline(g), kSmallSplit)).size() > 1; };
  {  // exp(x) is an output too: split, it would be computed twice
    Graph g;
    NodeId e = g.apply(Op::Exp, {g.input(DType::Float32, {64})});
    g.outputs = {e, g.apply(Op::Sum, {e}, Attr{{0}, {}})};
    EXPECT_FALSE(splits(g));
  }
  {  // a float16 partial sum would round
    Graph g;
    g.outputs = {g.apply(Op::Sum, {g.input(DType::Float16, {64})}, Attr{{0}, {}})};
    EXPECT_FALSE(splits(g));
  }
  {  // a position is not a value to combine
    Graph g;
    g.outputs = {g.apply(Op::ArgMax, {g.input(DType::Float32, {64})}, Attr{{0}, {}})};
    EXPECT_FALSE(splits(g));
  }
  {  // a prime length has no parts; too short a row is not worth two kernels
    for (int64_t n : {61, 7}) {
      Graph g;
      g.outputs = {g.apply(Op::Sum, {g.input(DType::Float32, {n})}, Attr{{0}, {}})};
      EXPECT_FALSE(splits(g)) << n;
    }
  }
  {  // enough rows already
    Graph g;
    g.outputs = {g.apply(Op::Sum, {g.input(DType::Float32, {8, 64})}, Attr{{1}, {}})};
    EXPECT_FALSE(splits(g));
  }
  {  // too little to read: one kernel takes about a launch's time
    Graph g;
    g.outputs = {g.apply(Op::Sum, {g.input(DType::Float32, {6, 10})}, Attr{{0, 1}, {}})};
    const ReductionSplit at_least_100{8, 4, 16, 4, 100};
    EXPECT_EQ(reductions(split_reductions(run_pipeline(g), at_least_100)).size(), 1u);
  }
}

TEST(SplitReductions, ATargetThatAsksGetsTwoKernelsAndTheCpuOne) {
  Graph g;
  NodeId x = g.input(DType::Float32, {16, 8});
  NodeId s = g.apply(Op::Sum, {g.apply(Op::Abs, {x})}, Attr{{0, 1}, {}});
  g.outputs = {g.apply(Op::Div, {s, g.constant(DType::Float32, 128.0)})};
  LibraryRules splitting = cpu_library_rules();
  splitting.split = &kSmallSplit;
  Schedule one = make_schedule(g), two = make_schedule(g, splitting);
  EXPECT_EQ(one.steps.size(), 1u);
  ASSERT_EQ(two.steps.size(), 2u);  // the mean's divide fuses into the second
  std::vector<Array> in{integers(DType::Float32, {16, 8})};
  std::vector<Array> want = reference::evaluate(g, in, g.outputs);
  EXPECT_TRUE(same_bits(execute(two, in, allocate_array, KernelMode::Generated)[0], want[0])) << explain(two);
  EXPECT_TRUE(same_bits(execute(two, in, allocate_array, KernelMode::Interpreted)[0], want[0])) << explain(two);
}

// ---- Integer matmul -------------------------------------------------------

// Note [Integer matmul]: the matmul of two int8/uint8 values cast to int32,
// seen through views, multiplies the 8-bit values into int32.
TEST(IntegerMatmul, CastsOfEightBitOperandsAreReadAsThey) {
  for (DType left : {DType::Int8, DType::UInt8}) {
    Graph g;
    NodeId a = g.input(left, {5, 3});
    NodeId b = g.input(DType::Int8, {4, 5});
    NodeId at = g.apply(Op::Permute, {cast(g, a, DType::Int32)}, Attr{{1, 0}, {}});  // [3, 5]
    NodeId bt = g.apply(Op::Permute, {cast(g, b, DType::Int32)}, Attr{{1, 0}, {}});  // [5, 4]
    g.outputs = {g.apply(Op::MatMul, {at, bt})};
    Graph p = run_pipeline(g);
    const Node* mm = nullptr;
    for (const Node& n : p.nodes())
      if (n.op == Op::MatMul) mm = &n;
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->attr.ints, std::vector<int64_t>{static_cast<int64_t>(DType::Int32)});
    EXPECT_EQ(mm->dtype, DType::Int32);
    EXPECT_EQ(p[mm->inputs[0]].dtype, left);
    EXPECT_EQ(p[mm->inputs[1]].dtype, DType::Int8);
    EXPECT_EQ(count(p, Op::Cast), 0u);
    // Values that fill int8's range, the extremes included.
    std::vector<double> va(15), vb(20);
    for (size_t i = 0; i < va.size(); ++i) va[i] = left == DType::Int8 ? (i % 2 ? -128.0 : 127.0) - i : 255.0 - 7 * i;
    for (size_t i = 0; i < vb.size(); ++i) vb[i] = i % 3 ? -128.0 + i : 127.0 - i;
    expect_same(g, p, std::vector<Array>{testing::make_array(left, {5, 3}, va), testing::make_array(DType::Int8, {4, 5}, vb)});
  }
}

// Note [Integer matmul as a sum]: every other integer matmul becomes
// products summed over k, one generated kernel, with NumPy's wrapping.
TEST(IntegerMatmul, OtherMatmulsBecomeSumsOfProducts) {
  auto values = [](DType t, Shape shape) {  // both ends of t's range, and small ones
    std::vector<double> v(static_cast<size_t>(numel(shape)));
    const double hi = t == DType::Int8 ? 127.0 : t == DType::Int16 ? 32767.0 : t == DType::UInt32 ? 4294967295.0 : 2147483647.0;
    for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? hi - i : i % 3 == 1 ? (is_signed(t) ? -hi + i : i) : i % 7;
    return testing::make_array(t, shape, v);
  };
  struct Case {
    const char* what;
    DType a, b;
    Shape sa, sb;
  };
  const Case cases[] = {
      {"int32 operands of their own, one a cast of int8", DType::Int32, DType::Int8, {2, 3}, {3, 2}},
      {"int8 @ int8 wraps in int8, as NumPy's", DType::Int8, DType::Int8, {4, 9}, {9, 5}},
      {"int16, batched and broadcast", DType::Int16, DType::Int16, {3, 1, 4, 6}, {5, 6, 2}},
      {"uint32 past 2^31", DType::UInt32, DType::UInt32, {7, 33}, {33, 3}},
      {"int64, an empty k", DType::Int64, DType::Int64, {2, 0}, {0, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Graph g;
    NodeId a = g.input(c.a, c.sa), b = g.input(c.b, c.sb);
    if (c.b != c.a) b = cast(g, b, c.a);
    g.outputs = {g.apply(Op::MatMul, {a, b})};
    Graph p = run_pipeline(g);
    EXPECT_EQ(count(p, Op::MatMul), 0u);
    // The products and their sum are one kernel; the cast back to the
    // dtype joins it unless the sum runs in another order than the result's
    // (Note [Reductions in memory order]).
    EXPECT_LE(kernels(p), 2u);
    expect_same(g, p, std::vector<Array>{values(c.a, c.sa), values(c.b, c.sb)});
  }
  {  // a cast to int64 (NumPy's default int): no 8-bit product sums in it here
    Graph g;
    NodeId a = cast(g, g.input(DType::Int8, {2, 3}), DType::Int64), b = cast(g, g.input(DType::Int8, {3, 2}), DType::Int64);
    g.outputs = {g.apply(Op::MatMul, {a, b})};
    EXPECT_EQ(count(run_pipeline(g), Op::MatMul), 0u);
  }
  // An accumulating matmul names its operands' types.
  Graph g;
  EXPECT_THROW(g.apply(Op::MatMul, {g.input(DType::Int32, {2, 3}), g.input(DType::Int8, {3, 2})},
                       Attr{{static_cast<int64_t>(DType::Int32)}, {}}),
               std::invalid_argument);
}

// Note [Convolutions as matmuls]: a convolution oneDNN does not run (float64,
// integers) becomes a sum over its taps of matmuls, BLAS calls or sums of
// products: no Conv2d is left for the reference interpreter, and the
// result is the reference's (integers exactly; float64 to rounding, the
// products summed in another order).
TEST(ConvolutionsAsMatmuls, WhatOneDnnDoesNotRunBecomesMatmuls) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> attr;  // stride, padding, dilation (2 each), groups
  };
  const Case cases[] = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 1}},
      {{1, 4, 9, 8}, {6, 2, 3, 2}, {2, 1, 1, 0, 1, 2, 2}},   // strides, one-sided padding, dilation, groups
      {{2, 6, 5, 5}, {6, 1, 1, 1}, {1, 1, 0, 0, 1, 1, 6}},   // depthwise 1x1
      {{1, 2, 4, 4}, {3, 2, 4, 4}, {1, 1, 0, 0, 1, 1, 1}},   // one output position
  };
  for (DType t : {DType::Float64, DType::Int32, DType::Int16, DType::UInt8}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(name(t)) + " " + to_string(c.x) + " x " + to_string(c.w));
      Graph g;
      g.outputs = {g.apply(Op::Conv2d, {g.input(t, c.x), g.input(t, c.w)}, Attr{c.attr, {}})};
      Schedule s = make_schedule(g, cpu_library_rules());
      EXPECT_EQ(count(s.graph, Op::Conv2d), 0u) << explain(s);
      std::vector<Array> in{integers(t, c.x), integers(t, c.w)};
      if (t == DType::UInt8)  // no negative values: 3s and 250s, whose sums wrap
        in = {testing::make_array(t, c.x, std::vector<double>(numel(c.x), 3.0)),
              testing::make_array(t, c.w, std::vector<double>(numel(c.w), 250.0))};
      Array want = reference::evaluate(g, in, g.outputs)[0];
      Array got = execute(s, in, allocate_array, KernelMode::Generated)[0];
      if (is_float(t)) {
        for (int64_t i = 0; i < want.numel(); ++i)
          ASSERT_NEAR(load_double(t, got.data.get(), i), load_double(t, want.data.get(), i), 1e-12) << i;
      } else {
        EXPECT_TRUE(same_bits(got, want)) << explain(s);
      }
    }
  }
  // What oneDNN runs stays a convolution: float32, and int8 values cast to int32.
  Graph g;
  NodeId x = g.input(DType::Float32, {1, 3, 5, 5}), w = g.input(DType::Float32, {2, 3, 3, 3});
  NodeId xi = cast(g, g.input(DType::Int8, {1, 3, 5, 5}), DType::Int32);
  NodeId wi = cast(g, g.input(DType::Int8, {2, 3, 3, 3}), DType::Int32);
  g.outputs = {g.apply(Op::Conv2d, {x, w}, Attr{{1, 1, 0, 0, 1, 1, 1}, {}}),
               g.apply(Op::Conv2d, {xi, wi}, Attr{{1, 1, 0, 0, 1, 1, 1}, {}})};
  EXPECT_EQ(count(make_schedule(g, cpu_library_rules()).graph, Op::Conv2d), 2u);
}

// Note [Half library calls in float32]: a float16 matmul or convolution is
// oneDNN's float32 call between casts, with its epilogue after it, and
// gives the reference's bits where the float32 sums are exact (small
// integers); bfloat16 and float32 calls stay as they are.
TEST(HalfLibraryCalls, Float16CallsRunInFloat32) {
  Graph g;
  const DType h = DType::Float16;
  NodeId a = g.input(h, {2, 5, 7}), b = g.input(h, {7, 3}), bias = g.input(h, {3});
  NodeId x = g.input(h, {1, 4, 6, 6}), w = g.input(h, {6, 2, 3, 3});
  NodeId product = g.apply(Op::MatMul, {a, b});
  g.outputs = {g.apply(Op::Add, {product, g.broadcast_to(bias, {2, 5, 3})}),
               g.apply(Op::Conv2d, {x, w}, Attr{{1, 2, 1, 0, 1, 1, 2}, {}}),
               g.apply(Op::MatMul, {g.apply(Op::Cast, {a}, Attr{{static_cast<int64_t>(DType::BFloat16)}, {}}),
                                    g.apply(Op::Cast, {b}, Attr{{static_cast<int64_t>(DType::BFloat16)}, {}})})};
  Schedule s = make_schedule(g, cpu_library_rules());
  std::vector<DType> calls;
  for (const Node& n : s.graph.nodes())
    if (n.op == Op::MatMul || n.op == Op::Conv2d) calls.push_back(n.dtype);
  EXPECT_EQ(calls, (std::vector<DType>{DType::Float32, DType::Float32, DType::BFloat16})) << explain(s);
  std::vector<Array> in;
  for (NodeId i : g.inputs()) in.push_back(integers(h, g[i].shape()));
  std::vector<Array> want = reference::evaluate(g, in, g.outputs);
  std::vector<Array> got = execute(s, in, allocate_array, KernelMode::Generated);
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(same_bits(got[k], want[k])) << k << explain(s);
}

// A convolution of two such casts the same: its attr is the convolution's
// and int32, its operands the 8-bit values, its sums the reference's (the
// extremes of both ranges, padding, stride and groups), and other integer
// convolutions stay as they are.
TEST(IntegerMatmul, ConvolutionsOfEightBitCastsAreReadAsThey) {
  const std::vector<int64_t> conv{2, 1, 1, 2, 1, 2, 2};  // stride, padding, dilation (h, w), groups
  for (DType left : {DType::Int8, DType::UInt8}) {
    Graph g;
    NodeId x = g.input(left, {2, 4, 7, 6});
    NodeId w = g.input(DType::Int8, {6, 2, 3, 2});
    g.outputs = {g.apply(Op::Conv2d, {cast(g, x, DType::Int32), cast(g, w, DType::Int32)}, Attr{conv, {}})};
    Graph p = run_pipeline(g);
    const Node* c = nullptr;
    for (const Node& n : p.nodes())
      if (n.op == Op::Conv2d) c = &n;
    ASSERT_NE(c, nullptr);
    std::vector<int64_t> want = conv;
    want.push_back(static_cast<int64_t>(DType::Int32));
    EXPECT_EQ(c->attr.ints, want);
    EXPECT_EQ(c->dtype, DType::Int32);
    EXPECT_EQ(p[c->inputs[0]].dtype, left);
    EXPECT_EQ(count(p, Op::Cast), 0u);
    std::vector<double> vx(2 * 4 * 7 * 6), vw(6 * 2 * 3 * 2);
    for (size_t i = 0; i < vx.size(); ++i) vx[i] = left == DType::Int8 ? (i % 2 ? -128.0 : 127.0) : (i % 3 ? 255.0 : 0.0);
    for (size_t i = 0; i < vw.size(); ++i) vw[i] = i % 2 ? -128.0 : 127.0 - static_cast<double>(i % 7);
    expect_same(g, p, std::vector<Array>{testing::make_array(left, {2, 4, 7, 6}, vx),
                                         testing::make_array(DType::Int8, {6, 2, 3, 2}, vw)});
  }
  Graph g;  // int32 operands of their own: an int32 convolution, summed as NumPy's matmul would
  NodeId x = g.input(DType::Int32, {1, 2, 4, 4});
  g.outputs = {g.apply(Op::Conv2d, {x, cast(g, g.input(DType::Int8, {3, 2, 2, 2}), DType::Int32)}, Attr{{1, 1, 0, 0, 1, 1, 1}, {}})};
  Graph p = run_pipeline(g);
  for (const Node& n : p.nodes()) {
    if (n.op == Op::Conv2d) {
      EXPECT_EQ(n.attr.ints.size(), kConv2dAttrs);
    }
  }
  EXPECT_THROW(g.apply(Op::Conv2d, {g.input(DType::Int32, {1, 2, 4, 4}), g.input(DType::Int8, {3, 2, 2, 2})},
                       Attr{{1, 1, 0, 0, 1, 1, 1, static_cast<int64_t>(DType::Int32)}, {}}),
               std::invalid_argument);
  EXPECT_THROW(g.apply(Op::Conv2d, {g.input(DType::Bool, {1, 2, 4, 4}), g.input(DType::Bool, {3, 2, 2, 2})},
                       Attr{{1, 1, 0, 0, 1, 1, 1}, {}}),
               std::invalid_argument);
}

TEST(Pipeline, PassesRunInTheDocumentedOrder) {
  std::vector<std::string_view> names;
  for (const PassEntry& p : pipeline()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"fold_constants", "simplify", "eliminate_dead", "sum_integer_matmuls",
                                                  "dense_outputs", "push_views", "reduce_in_memory_order",
                                                  "integer_matmul"}));
  static constexpr std::string_view kNoSuchPass[] = {"fold"};
  EXPECT_THROW(run_pipeline(Graph{}, kNoSuchPass), std::invalid_argument);
}

}  // namespace
}  // namespace braze
