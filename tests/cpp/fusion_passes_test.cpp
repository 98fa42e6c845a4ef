// The graph passes before partition: constant folding, exact algebraic
// simplification and dead-code elimination. Each rule shows the graph
// before and after, and that values on NaN, +-inf, +-0.0 and denormals are
// the same bits under the reference interpreter, the fused schedule and
// (NaN aside) the generated kernels; the rules that must not fire are
// tested as well.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>

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

bool same_bits(const Array& a, const Array& b) {
  return a.dtype == b.dtype && a.shape == b.shape && std::memcmp(a.data.get(), b.data.get(), a.bytes()) == 0;
}

// Equal values, NaN where NaN (its payload and sign aside), zeros by sign.
bool same_values(const Array& a, const Array& b) {
  if (a.dtype != b.dtype || a.shape != b.shape) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = load_double(a.dtype, a.data.get(), i), y = load_double(b.dtype, b.data.get(), i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (x != y || std::signbit(x) != std::signbit(y)) return false;
  }
  return true;
}

// `after` gives the reference's bits of `before`, and so does the fused
// schedule of `before` (the whole pipeline) through the spec interpreter;
// the generated kernels give the same values (`generated`: when the
// graph's ops are ones the CPU kernel computes exactly, no transcendentals).
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
      EXPECT_TRUE(same_values(jit[i], want[i])) << "output " << i << "\n" << explain(s);
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
      {Op::Neg, DType::Float32, {0.0}, {}, "the reference gives +0.0, the kernel -0.0"},
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
      {"x + 0 (int)", F::Int32, rhs(Op::Add, 0), Op::Add, 0},
      {"x - 0 (int)", F::Int8, rhs(Op::Sub, 0), Op::Sub, 0},
      {"x * true", F::Float32, rhs(Op::Mul, 1, F::Bool), Op::Mul, 0},
      {"x ** 1 (int)", F::Int64, rhs(Op::Pow, 1), Op::Pow, 0},
      {"astype same", F::Float16, [](Graph& g, NodeId x) { return cast(g, x, F::Float16); }, Op::Cast, 0},
  });
}

TEST(Simplify, SquareForPowOfTwo) {
  using F = DType;
  auto pow2 = rhs(Op::Pow, 2);
  for (DType t : {F::Float32, F::Float16, F::BFloat16, F::Int32})
    check_rules({{"x ** 2", t, pow2, Op::Square, 1}, {"x ** 2", t, pow2, Op::Pow, 0}});
  // float64: pow is not correctly rounded where x * x is.
  check_rules({{"x ** 2", F::Float64, pow2, Op::Pow, 1}});
  // x ** 2 in double is exactly x * x for every float32: random bits.
  std::mt19937 rng(7);
  std::vector<double> v(4096);
  for (double& d : v) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    d = f;
  }
  Graph g;
  NodeId x = g.input(F::Float32, {4096});
  g.outputs = {pow2(g, x)};
  std::vector<Array> in{testing::make_array(F::Float32, {4096}, v)};
  expect_same(g, simplified(g), in);
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
  }, /*generated=*/false);  // exp's polynomial and -(+0.0) differ from the reference, by design
}

TEST(Simplify, IdempotentOpsAndIntegerRounding) {
  using F = DType;
  for (Op op : {Op::Abs, Op::Relu, Op::Sign, Op::Floor, Op::Ceil, Op::Round})
    check_rules({{std::string(info(op).name), F::Float32, twice(op), op,
                  1}});
  check_rules({
      {"floor(int)", F::Int32, [](Graph& g, NodeId x) { return g.apply(Op::Floor, {x}); }, Op::Floor, 0},
      {"-(-x) (int)", F::Int8, twice(Op::Neg), Op::Neg, 0},
  });
}

TEST(Simplify, RulesThatMustNotFire) {
  using F = DType;
  check_rules({
      {"x + 0.0", F::Float32, rhs(Op::Add, 0.0), Op::Add, 1},
      {"x - -0.0", F::Float32, rhs(Op::Sub, -0.0), Op::Sub, 1},
      {"x + int 0 in float", F::Float32, rhs(Op::Add, 0, F::Int32), Op::Add, 1},
      {"x * 0", F::Float32, rhs(Op::Mul, 0), Op::Mul, 1},
      {"x - x", F::Float32, [](Graph& g, NodeId x) { return bin(g, Op::Sub, x, x); }, Op::Sub, 1},
      {"max(x, x)", F::Float32, [](Graph& g, NodeId x) { return bin(g, Op::Maximum, x, x); }, Op::Maximum, 1},
      {"x ** 1", F::Float32, rhs(Op::Pow, 1), Op::Pow, 1},
      {"x ** 0.5", F::Float32, rhs(Op::Pow, 0.5), Op::Pow, 1},
      {"1.0000001 in float16 is not 1", F::Float16,
       rhs(Op::Mul, 1.0000001, F::Float16), Op::Mul, 1},
  });
  // Negation of floats stays doubled: the reference's -(-(-0.0)) is +0.0.
  check_rules({{"-(-x)", F::Float32, twice(Op::Neg),
                Op::Neg, 2}},
              /*generated=*/false);
  // Another dtype: int32 * 1.0 converts to float32 and is not x.
  check_rules({{"int * 1.0", F::Int32, rhs(Op::Mul, 1, F::Float32),
                Op::Mul, 1},
               {"astype(int, float32)", F::Int32, [](Graph& g, NodeId x) { return cast(g, x, F::Float32); }, Op::Cast,
                1}});
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

// The fusion fuzzer (fusion_test.cpp) checks every random graph bit for bit
// through the whole pipeline; this makes sure its graphs give folding and
// simplification something to do.
TEST(Pipeline, RandomGraphsExerciseFoldingAndSimplification) {
  int folds = 0, simplifications = 0;
  for (uint32_t seed = 0; seed < 400; ++seed) {
    std::vector<Array> inputs;
    Graph g = eliminate_dead(testing::RandomGraph(seed).build(inputs));
    Graph f = folded(g);
    folds += computed(f) < computed(g);
    simplifications += computed(simplified(f)) < computed(f);
  }
  EXPECT_GE(folds, 15) << folds << " of 400 graphs";
  EXPECT_GE(simplifications, 15) << simplifications << " of 400 graphs";
}

TEST(Pipeline, PassesRunInTheDocumentedOrder) {
  std::vector<std::string_view> names;
  for (const PassEntry& p : kPipeline) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"fold_constants", "simplify", "eliminate_dead", "dense_outputs",
                                                  "push_views"}));
}

}  // namespace
}  // namespace braze
