// Programs and their cache (runtime/program.h): a structure compiles once
// and replays; a new scalar value replays, a new shape compiles; replayed
// programs allocate nothing but the outputs the user keeps, and nothing at
// all when they write into existing tensors; random graphs give the same
// bits through a poisoned, replayed program as through a plain run.
#include <gtest/gtest.h>

#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/execute.h"
#include "runtime/in_place.h"
#include "runtime/lower.h"
#include "runtime/program.h"
#include "tests/cpp/random_graph.h"
#include "tests/cpp/random_tensor.h"
#include "tests/cpp/test_util.h"

namespace braze {
namespace {

using testing::same_bits;

int64_t stat(std::atomic<int64_t> Stats::*counter) { return (Runtime::get().stats().*counter).load(); }

Tensor random_tensor(Shape shape, uint32_t seed) { return testing::random_tensor(std::move(shape), seed, 1.0f); }

// The loop workload's step (WORKLOADS.md): bias_relu_scale, then softmax_rows.
Tensor loop_step(const Tensor& x, const Tensor& bias, double scale) {
  return softmax(maximum(x + bias, 0.0) * scale, -1);
}

TEST(Program, TheSameStructureCompilesOnceThenReplays) {
  Tensor x = random_tensor({8, 33}, 1), bias = random_tensor({33}, 2);
  int64_t compiled = stat(&Stats::programs_compiled), replayed = stat(&Stats::programs_replayed);
  std::vector<float> first;
  for (int i = 0; i < 5; ++i) {
    std::vector<float> got = loop_step(x, bias, 0.45).to_vector<float>();
    if (i == 0) first = got;
    EXPECT_EQ(got, first) << "iteration " << i;
  }
  EXPECT_EQ(stat(&Stats::programs_compiled) - compiled, 1);
  EXPECT_EQ(stat(&Stats::programs_replayed) - replayed, 4);
}

TEST(Program, ANewScalarReplaysWithItsValue) {
  Tensor x = random_tensor({4, 17}, 3);
  (x * 0.25 + 3.5).to_vector<float>();  // compiles
  int64_t compiled = stat(&Stats::programs_compiled), replayed = stat(&Stats::programs_replayed);
  for (double lr : {0.1, 0.37, 1e-3, 7.0}) {
    std::vector<float> got = (x * lr + 3.5).to_vector<float>();
    std::vector<float> xs = x.to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], xs[i] * static_cast<float>(lr) + 3.5f) << lr;
  }
  EXPECT_EQ(stat(&Stats::programs_compiled) - compiled, 0);
  EXPECT_EQ(stat(&Stats::programs_replayed) - replayed, 4);
}

TEST(Program, SpecialScalarsAreStructure) {
  // x * 1 simplifies to a copy: a different program from x * 3, and both right.
  Tensor x = random_tensor({5, 9}, 4);
  int64_t compiled = stat(&Stats::programs_compiled);
  std::vector<float> xs = x.to_vector<float>();
  EXPECT_EQ((x * 1.0).to_vector<float>(), xs);
  std::vector<float> tripled = (x * 3.0).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(tripled[i], xs[i] * 3.0f);
  EXPECT_EQ((x * 1.0).to_vector<float>(), xs);  // replays the first
  EXPECT_EQ(stat(&Stats::programs_compiled) - compiled, 2);
}

TEST(Program, EqualScalarsAreOneParameterAndThatIsStructure) {
  // As equal Consts intern to one node: x * 0.3 + y * 0.3 reads one scalar.
  Tensor x = random_tensor({4, 9}, 13), y = random_tensor({4, 9}, 14);
  std::vector<float> xs = x.to_vector<float>(), ys = y.to_vector<float>();
  auto check = [&](double a, double b) {
    std::vector<float> got = (x * a + y * b).to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(got[i], xs[i] * static_cast<float>(a) + ys[i] * static_cast<float>(b)) << a << " " << b;
  };
  int64_t compiled = stat(&Stats::programs_compiled);
  check(0.3, 0.3);
  check(0.7, 0.7);  // replays the first
  check(0.3, 0.4);  // two parameters: a new structure
  check(0.55, 0.6);  // replays the third
  EXPECT_EQ(stat(&Stats::programs_compiled) - compiled, 2);
  Lowered l = lower(std::vector<Tensor>{x * 0.3 + y * 0.3}, {.scalars_as_inputs = true});
  EXPECT_EQ(l.scalars.size(), 1u);
  EXPECT_EQ(l.graph.inputs().size(), 3u);
}

TEST(Program, WithScalarParametersIsTheGraphRealizeRuns) {
  Tensor x = random_tensor({4, 9}, 15);
  std::vector<Tensor> roots = {layer_norm(x * 0.3 + 1.0, std::nullopt, std::nullopt, 1e-5)};
  Graph from_consts = with_scalar_parameters(lower(roots).graph);
  Graph direct = lower(roots, {.scalars_as_inputs = true}).graph;
  ASSERT_EQ(from_consts.size(), direct.size());
  for (NodeId id = 0; id < direct.size(); ++id) EXPECT_EQ(from_consts[id], direct[id]) << "node " << id;
  EXPECT_EQ(from_consts.outputs, direct.outputs);
}

TEST(Program, ANewShapeOrDtypeCompilesANewProgram) {
  int64_t compiled = stat(&Stats::programs_compiled);
  loop_step(random_tensor({8, 33}, 5), random_tensor({33}, 6), 2.0).data();
  loop_step(random_tensor({8, 34}, 5), random_tensor({34}, 6), 2.0).data();
  loop_step(astype(random_tensor({8, 34}, 5), DType::Float16), astype(random_tensor({34}, 6), DType::Float16), 2.0)
      .data();
  // Three programs (astype of a realized tensor adds nodes: that is a new structure too).
  EXPECT_EQ(stat(&Stats::programs_compiled) - compiled, 3);
}

TEST(Program, ReplaysAllocateOnlyTheOutputs) {
  Tensor x = random_tensor({64, 100}, 7), bias = random_tensor({100}, 8);
  Tensor y = loop_step(x, bias, 0.45);
  y.data();
  int64_t allocations = stat(&Stats::allocations), bytes = stat(&Stats::bytes_allocated);
  for (int i = 0; i < 10; ++i) loop_step(x, bias, 0.45 + i).data();
  EXPECT_EQ(stat(&Stats::allocations) - allocations, 10);  // one output per iteration
  EXPECT_EQ(stat(&Stats::bytes_allocated) - bytes, 10 * 64 * 100 * 4);
}

TEST(Program, AssignIntoAnExistingTensorAllocatesNothing) {
  Tensor x = random_tensor({64, 100}, 9), bias = random_tensor({100}, 10);
  Tensor out = zeros({64, 100});
  out.data();
  assign({out}, {loop_step(x, bias, 0.45)});  // compiles
  int64_t allocations = stat(&Stats::allocations), replayed = stat(&Stats::programs_replayed);
  for (int i = 0; i < 20; ++i) {
    double scale = 0.3 + 0.25 * i;  // never a special value (0, 1, 2), which would be a new structure
    assign({out}, {loop_step(x, bias, scale)});
    EXPECT_EQ(out.to_vector<float>(), loop_step(x, bias, scale).to_vector<float>()) << i;
  }
  // The checks above realize new tensors: count only what assign did, by difference.
  int64_t check_outputs = 20;
  EXPECT_EQ(stat(&Stats::allocations) - allocations, check_outputs);
  EXPECT_EQ(stat(&Stats::programs_replayed) - replayed, 40);
}

TEST(Program, AnInPlaceUpdateReadsTheOldValues) {
  // w = w - lr * g, written into w: the program reads w while writing it.
  const size_t n = 40;
  Tensor w = random_tensor({40, 40}, 11), g = random_tensor({40, 40}, 12);
  std::vector<float> ws = w.to_vector<float>(), gs = g.to_vector<float>();
  for (int step = 0; step < 3; ++step) {
    assign({w}, {w - 0.1 * g});
    for (size_t i = 0; i < ws.size(); ++i) ws[i] = ws[i] - 0.1f * gs[i];
    // A transposed read of the target: element (i, j) needs the old (j, i).
    assign({w}, {matrix_transpose(w)});
    std::vector<float> transposed(ws.size());
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) transposed[i * n + j] = ws[j * n + i];
    ws = transposed;
    EXPECT_EQ(w.to_vector<float>(), ws) << "step " << step;
  }
}

// Note [In-place outputs]: which outputs may be written over the input they alias.
std::vector<std::vector<bool>> overwrites(std::initializer_list<Tensor> values, std::initializer_list<Tensor> inputs) {
  std::vector<Tensor> roots(values);
  Lowered l = lower(roots);
  Schedule s = program_schedule(l.graph);
  std::vector<std::vector<NodeId>> may = in_place_inputs(s);
  std::vector<std::vector<bool>> result;
  for (size_t i = 0; i < may.size(); ++i) {
    result.emplace_back();
    for (const Tensor& t : inputs) {
      // The graph input bound to t's storage.
      bool found = false;
      for (NodeId id : s.graph.inputs())
        if (l.inputs[s.graph[id].attr.ints[0]].data == t.data().data)
          found = found || std::count(may[i].begin(), may[i].end(), id) > 0;
      result.back().push_back(found);
    }
  }
  return result;
}

TEST(Program, OutputsOverwriteWhatTheyReadAtTheirOwnIndexOnly) {
  Tensor w = random_tensor({16, 16}, 13), g = random_tensor({16, 16}, 14), x = random_tensor({16, 4}, 15);
  using V = std::vector<std::vector<bool>>;
  EXPECT_EQ(overwrites({w - 0.1 * g}, {w, g}), (V{{true, true}}));  // element-wise, at the same index
  EXPECT_EQ(overwrites({matrix_transpose(w) + g}, {w, g}), (V{{false, true}}));  // w read transposed
  EXPECT_EQ(overwrites({w - mean(w, Axes{{1}}, true)}, {w}), (V{{false}}));     // a reduction kernel
  // w is read again by a later step (the matmul after the kernel that makes w * 2).
  EXPECT_EQ(overwrites({w * 2.0, matmul(w, x)}, {w})[0], (std::vector<bool>{false}));
  // What the executor makes of it: the update reads the old values, staged or not.
  std::vector<float> ws = w.to_vector<float>(), gs = g.to_vector<float>();
  assign({w, g}, {w - 0.5f * g, g * 2.0f});
  std::vector<float> got = w.to_vector<float>(), g2 = g.to_vector<float>();
  for (size_t i = 0; i < ws.size(); ++i) {
    EXPECT_EQ(got[i], ws[i] - 0.5f * gs[i]) << i;
    EXPECT_EQ(g2[i], gs[i] * 2.0f) << i;
  }
}

TEST(Program, AssignedRealizedValuesAreOldValuesToo) {
  // A realized value is copied by the program, not before it: swapping two
  // tensors, or one realized and one computed from a target, sees the old values.
  Tensor a = from_vector<float>({0, 0}, {2}), b = from_vector<float>({1, 1}, {2});
  assign({a, b}, {b, a});
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 0}));
  assign({a, b}, {b, a + 10.0f});
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{11, 11}));
}

TEST(Program, EqualTensorsRealizedTogetherOwnTheirStorage) {
  // zeros twice is one interned node: the program computes it once, but each
  // tensor gets storage of its own, since in-place writes must not leak.
  Tensor x = from_vector<float>({1, 2}, {2});
  Tensor a = x * 3.0f, b = x * 3.0f;
  realize({a, b});
  EXPECT_NE(a.data().data, b.data().data);
  assign({a}, {x});
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{3, 6}));
}

TEST(Program, ALoopCarriedAccumulatorStaysBounded) {
  // acc = acc + x, never realized: Note [Lazy depth limit] cuts it.
  Tensor x = full({16}, 1.0f), acc = zeros({16});
  int64_t compiled = stat(&Stats::programs_compiled);
  const int n = 5 * static_cast<int>(kMaxLazyDepth) + 3;
  for (int i = 0; i < n; ++i) {
    acc = acc + x;
    ASSERT_LE(lazy_depth(*acc.node()), kMaxLazyDepth);
  }
  for (float v : acc.to_vector<float>()) EXPECT_EQ(v, static_cast<float>(n));
  // The first cycle starts from zeros, the later ones from a realized tensor,
  // the last one is shorter: three structures.
  EXPECT_LE(stat(&Stats::programs_compiled) - compiled, 3);
}

// Random graphs through lift -> lower with parameters -> a poisoned
// program, run twice: the same bits as the plain run of the graph.
TEST(Program, RandomGraphsReplayWithPoisonedArenas) {
  uint32_t first = testing::fuzz_first(), count = testing::fuzz_graphs(1000);
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed).build(inputs);
    std::vector<Array> want = execute(make_schedule(g), inputs, allocate_array, KernelMode::Interpreted);
    Lowered l = lower(lift(g, inputs), {.scalars_as_inputs = true});
    Program p(l, KernelMode::Interpreted, {.arena = true, .poison = true}, allocate_array);
    for (int run = 0; run < 2; ++run) {
      std::vector<Array> got = p.run(l.inputs, l.scalars, allocate_array);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(same_bits(got[i], want[i])) << "seed " << seed << " run " << run << " output " << i;
    }
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace braze
