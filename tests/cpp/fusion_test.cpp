// The fusion pass: what fuses into one kernel, why the rest does not, that
// specs are deterministic, and that a fused run equals the reference
// interpreter bit for bit (including a fuzzer over random graphs).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "fusion/schedule.h"
#include "graph/reference.h"
#include "runtime/braze.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "tests/cpp/random_graph.h"
#include "tests/cpp/random_tensor.h"
#include "tests/cpp/test_util.h"

namespace braze {
namespace {

using testing::random_tensor;

Schedule schedule_of(std::initializer_list<Tensor> roots) {
  return make_schedule(lower(std::span<const Tensor>(roots.begin(), roots.size())).graph);
}

size_t kernel_count(const Schedule& s) {
  size_t n = 0;
  for (const Step& st : s.steps) n += st.group.kind == FusedGroup::Kind::Kernel;
  return n;
}

using testing::same_bits;

// Runs `g` fused and with the reference interpreter; every output must
// agree bit for bit (a NaN may be another NaN: the pass pipeline rewrites
// x ** 1 to x, Note [Exact simplification]).
void expect_fused_equals_reference(const Graph& g, std::span<const Array> inputs) {
  std::vector<Array> want = reference::evaluate(g, inputs, g.outputs);
  Schedule s = make_schedule(g);
  std::vector<Array> got = execute(s, inputs, allocate_array, KernelMode::Interpreted);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << "output " << i << "\n" << explain(s);
}

void expect_fused_equals_reference(std::initializer_list<Tensor> roots) {
  Lowered l = lower(std::span<const Tensor>(roots.begin(), roots.size()));
  expect_fused_equals_reference(l.graph, l.inputs);
}

TEST(Fusion, TenOpChainWithBroadcastAndTransposedInputsIsOneKernel) {
  Tensor x = random_tensor({64, 32}, 1);
  Tensor wt = random_tensor({32, 64}, 2);  // read transposed
  Tensor b = random_tensor({32}, 3);       // broadcast along rows
  Tensor y = relu(exp(x * 0.5 + transpose(wt)) - b) / (1.0 + sigmoid(x));  // 7 ops
  y = tanh(y * y) + abs(b);                                                   // +4 ops
  Schedule s = schedule_of({y});
  EXPECT_EQ(kernel_count(s), 1u) << explain(s);
  EXPECT_EQ(s.steps[0].spec.inputs.size(), 5u) << explain(s);  // x, wt^T, b, 0.5, 1.0
  expect_fused_equals_reference({y});
}

TEST(Fusion, NormalisationsAreOneKernelEach) {
  Tensor x = random_tensor({8, 33}, 4);
  Tensor w = random_tensor({33}, 5), bias = random_tensor({33}, 6);
  for (const Tensor& y : {softmax(x), log_softmax(x), layer_norm(x, w, bias), layer_norm(x), rms_norm(x, w),
                          logsumexp(x, Axes{{-1}})}) {
    Schedule s = schedule_of({y});
    EXPECT_EQ(kernel_count(s), 1u) << explain(s);
    EXPECT_TRUE(s.unfused.empty()) << explain(s);
    expect_fused_equals_reference({y});
  }
}

TEST(Fusion, ReductionOfElementwiseExpressionIsOneKernel) {
  Tensor x = random_tensor({16, 10}, 7);
  for (const Tensor& y : {sum(exp(x) * 2.0), mean(x * x, Axes{{0}}), max(abs(x) - 1.0, Axes{{1}}, true)}) {
    Schedule s = schedule_of({y});
    EXPECT_EQ(kernel_count(s), 1u) << explain(s);
    expect_fused_equals_reference({y});
  }
}

TEST(Fusion, SeveralOutputsFromOneGroup) {
  Tensor x = random_tensor({5, 6}, 8);
  Tensor y = exp(x) + 1.0;
  Tensor total = sum(y, Axes{{1}});
  Schedule s = schedule_of({y, total});
  ASSERT_EQ(kernel_count(s), 1u) << explain(s);
  EXPECT_EQ(s.steps[0].spec.outputs.size(), 2u);
  expect_fused_equals_reference({y, total});
}

TEST(Fusion, EveryUnfusedEdgeHasAReason) {
  Tensor x = random_tensor({6, 7}, 9);
  Tensor y = exp(x);
  Tensor rows = sum(y, Axes{{1}}, true), cols = sum(y, Axes{{0}}, true);
  Tensor z = rows * cols;  // [6, 7]: a different index space from both
  Schedule s = schedule_of({z});
  EXPECT_GE(kernel_count(s), 2u);
  ASSERT_FALSE(s.unfused.empty()) << explain(s);
  for (const UnfusedEdge& e : s.unfused) EXPECT_FALSE(e.reason.empty());
  EXPECT_NE(explain(s).find("reduces axes"), std::string::npos) << explain(s);
  expect_fused_equals_reference({z});
}

TEST(Fusion, LibraryCallsEndGroups) {
  Tensor a = random_tensor({4, 5}, 10), w = random_tensor({5, 3}, 11);
  Tensor y = relu(matmul(exp(a), w) + 1.0);
  Schedule s = schedule_of({y});
  EXPECT_EQ(s.steps.size(), 2u) << explain(s);  // exp; matmul with +1 (linear) and relu as post-ops
  EXPECT_NE(explain(s).find("library call"), std::string::npos);
  expect_fused_equals_reference({y});
}

// a @ b + c @ d: each call's chain reaches the add, but only the later call
// may take it, reading the earlier one's value from memory (both taking it
// ran one call before the value it read existed, and crashed).
TEST(Fusion, TwoLibraryCallsNeverShareAnEpilogue) {
  Tensor a = random_tensor({6, 6}, 20), h = random_tensor({6, 5}, 21), wx = random_tensor({6, 5}, 22),
         wh = random_tensor({5, 5}, 23), b = random_tensor({5}, 24);
  for (Tensor y : {matmul(a, a) + matmul(a, transpose(a)), tanh(matmul(a, wx) + matmul(h, wh) + b)}) {
    Schedule s = schedule_of({y});
    ASSERT_EQ(s.steps.size(), 2u) << explain(s);
    std::set<NodeId> owned;
    for (const Step& st : s.steps)
      for (NodeId n : st.group.nodes) EXPECT_TRUE(owned.insert(n).second) << "node " << n << " in two steps\n" << explain(s);
    EXPECT_TRUE(s.steps[0].group.post_ops.empty()) << explain(s);
    EXPECT_FALSE(s.steps[1].group.post_ops.empty()) << explain(s);
    EXPECT_NE(explain(s).find("is computed after this library call"), std::string::npos) << explain(s);
    expect_fused_equals_reference({y});
  }
}

TEST(Fusion, ViewsOfOutputsAndLeavesAreCopiedDensely) {
  Tensor x = random_tensor({3, 4}, 12);
  Tensor t = transpose(x);
  std::vector<Index> reversed{Slice{std::nullopt, std::nullopt, -1}};
  Tensor s = index(x * 2.0, reversed);
  expect_fused_equals_reference({t, s, sum(x, Axes{{1}})});
}

TEST(Fusion, SpecTextAndKeyAreDeterministic) {
  auto build = [] {
    Tensor x = random_tensor({8, 16}, 13);
    return schedule_of({layer_norm(x * 3.0 + 1.0)});
  };
  Schedule a = build(), b = build();
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(canonical_text(a.steps[i].spec), canonical_text(b.steps[i].spec));
    EXPECT_EQ(kernel_key(a.steps[i].spec), kernel_key(b.steps[i].spec));
  }
  EXPECT_EQ(kernel_key(a.steps[0].spec).hex().size(), 32u);
}

TEST(Fusion, ScalarValuesAreNotPartOfTheKey) {
  Tensor x = random_tensor({4, 4}, 14);
  Schedule a = schedule_of({x * 2.0 + 1.0}), b = schedule_of({x * 5.0 + 7.0});
  EXPECT_EQ(kernel_key(a.steps[0].spec), kernel_key(b.steps[0].spec));
}

TEST(Fusion, ZeroSizeAndScalarShapes) {
  Tensor e = random_tensor({0, 5}, 15);
  Tensor s = from_vector<float>({2.5f}, {});
  expect_fused_equals_reference({exp(e) + 1.0, sum(e, Axes{{0}}), softmax(e), s * s + 1.0, sum(s)});
}

// Found by the fuzzer: a one-element slice of a reduction's result passed
// for a relabelling of it (every stride of a size-1 view is "dense"), so
// exp of x.min(0)[0] landed in the two-element reduced space.
TEST(Fusion, PartialViewOfAReductionIsNotARelabelling) {
  Tensor x = random_tensor({17, 2, 1}, 4);
  Tensor m = reshape(min(x, Axes{{0}}, /*keepdims=*/true), {2});
  Index first[] = {Slice{0, 1, 1}};
  expect_fused_equals_reference({exp(index(m, first))});
}

// Found by the fuzzer: a value read through a view a kernel cannot index
// (here reversed) comes from memory, so its reader cannot join the
// producer's kernel even when another of its inputs leads there.
TEST(Fusion, AValueReadFromMemoryIsNotAlsoFused) {
  Tensor x = random_tensor({3, 17, 3}, 5);
  Tensor s = sqrt(abs(x));
  Index reversed[] = {Ellipsis{}, Slice{std::nullopt, std::nullopt, -1}};
  Tensor m = index(sum(s, Axes{{0}}, /*keepdims=*/true), reversed);
  expect_fused_equals_reference({m / (s - x)});
}

// Note [Padding sinks under a mask]: exp(0) is 1, so the padding of
// pad(exp(x)) is selected back to zero; one kernel, x loaded under a mask.
TEST(Fusion, APaddedElementwiseResultIsOneKernel) {
  Tensor x = random_tensor({25, 37}, 11);
  Tensor y = pad(exp(x) * 2.0, {1, 0}, {2, 3}) + 1.0;
  Schedule s = schedule_of({y});
  ASSERT_EQ(kernel_count(s), 1u) << explain(s);
  bool masked = false;
  for (const KernelInput& in : s.steps[0].spec.inputs) masked = masked || in.view.windowed();
  EXPECT_TRUE(masked) << explain(s);
  expect_fused_equals_reference({y});
}

// Note [Lazy concatenation]: two parts, the join and what reads it, one
// kernel; a computed part padded to more than twice its size (pads_little,
// Note [Padding sinks under a mask]) is a kernel of its own, computed once.
TEST(Fusion, ALazyConcatenationFusesItsParts) {
  Tensor a = random_tensor({4, 6}, 12), b = random_tensor({4, 6}, 13);
  Tensor two[] = {a * 2.0, sqrt(abs(b))};
  Tensor y = concatenate(two, 0) - 1.0;
  Schedule s = schedule_of({y});
  EXPECT_EQ(kernel_count(s), 1u) << explain(s);
  expect_fused_equals_reference({y});
  Tensor three[] = {a * 2.0, sqrt(abs(b)), a};
  Tensor z = concatenate(three, 0) - 1.0;
  s = schedule_of({z});
  EXPECT_EQ(kernel_count(s), 3u) << explain(s);  // each computed part a third of the rows: apart, then the join
  expect_fused_equals_reference({z});
}

// Note [Index expressions are recomputed]: the same mask (one interned
// node) read by two kernels is computed by each, not written by one and
// loaded by the other.
TEST(Fusion, IndexExpressionsAreComputedWhereRead) {
  Tensor x = random_tensor({6, 8}, 14);
  Tensor i = reshape(arange(0, 6), {6, 1});
  Tensor mask = logical_and(less(i, 3), greater(i, 0));
  Tensor first = where(mask, x, 0.0);
  Tensor second = where(mask, sum(x, Axes{{1}}, /*keepdims=*/true), 1.0);
  Schedule s = schedule_of({first, second});
  for (const Step& st : s.steps)
    for (NodeId r : st.reads)
      EXPECT_FALSE(is_elementwise(s.graph[r].op) && s.graph[r].dtype == DType::Bool) << "a mask read from memory\n"
                                                                                     << explain(s);
  expect_fused_equals_reference({first, second});
}

// Found by the fuzzer: two producer kernels, one loading the other's value
// from memory, were merged into one kernel reading its own output.
TEST(Fusion, KernelsThatLoadEachOthersValuesDoNotMerge) {
  Tensor x = random_tensor({7, 17, 7}, 6);
  Tensor m = min(x, Axes{{0}});
  Index reversed[] = {Ellipsis{}, Slice{std::nullopt, std::nullopt, -1}};
  expect_fused_equals_reference({m / (abs(index(m, reversed)) + 0.5)});
}

// Note [Loops in memory order]: a reduction of a permuted view runs over
// memory's axis order, so x.T.sum(0) is x.sum(1)'s kernel, and every
// result keeps its bits.
TEST(Fusion, ReductionsOfPermutedViewsRunInMemoryOrder) {
  Tensor x = random_tensor({16, 24}, 8);
  const KernelSpec t = schedule_of({sum(transpose(x), Axes{{0}})}).steps[0].spec;
  const KernelSpec rows = schedule_of({sum(x, Axes{{1}})}).steps[0].spec;
  EXPECT_EQ(t.domain, (Shape{16, 24}));
  EXPECT_EQ(t.reduce_axes, (std::vector<int64_t>{1}));
  EXPECT_EQ(t.inputs[0].view.strides, (Strides{24, 1}));
  EXPECT_EQ(kernel_key(t), kernel_key(rows)) << canonical_text(t) << canonical_text(rows);
  // x.T.sum(1) reduces x's rows' axis: a column reduction over x's order.
  const KernelSpec cols = schedule_of({sum(transpose(x), Axes{{1}})}).steps[0].spec;
  EXPECT_EQ(kernel_key(cols), kernel_key(schedule_of({sum(x, Axes{{0}})}).steps[0].spec));

  Tensor y = random_tensor({6, 5, 7}, 9);
  Tensor p = permute(y, {2, 0, 1});  // [7, 6, 5], strides [1, 35, 7]
  expect_fused_equals_reference({sum(p, Axes{{0}}), max(p, Axes{{0, 2}}), argmax(p, 0), argmax(p, 2),
                                 sum(p, Axes{{1, 2}}), mean(transpose(y), Axes{{1}})});
  // var of a permuted view: the mean stays in memory's order (Note
  // [Reductions in memory order]), so both reductions are one kernel
  // reading y as it lies.
  Tensor v = var(permute(y, {2, 1, 0}), Axes{{2}});
  Schedule vs = schedule_of({v});
  size_t reducing = 0;
  for (const Step& st : vs.steps) {
    if (st.group.kind != FusedGroup::Kind::Kernel || st.spec.reduce_axes.empty()) continue;
    ++reducing;
    EXPECT_EQ(st.spec.inputs[0].view.strides, (Strides{35, 7, 1})) << explain(vs);
  }
  EXPECT_EQ(reducing, 1u) << explain(vs);
  expect_fused_equals_reference({v});
  // A Full output is dense over the domain: its order stays.
  const KernelSpec soft = schedule_of({softmax(transpose(x), 0)}).steps[0].spec;
  EXPECT_EQ(soft.domain, (Shape{24, 16}));
  EXPECT_EQ(soft.reduce_axes, (std::vector<int64_t>{0}));
  expect_fused_equals_reference({softmax(transpose(x), 0), softmax(p, 0)});
}

TEST(Fusion, RandomGraphsMatchTheReferenceBitForBit) {
  for (uint32_t seed = testing::fuzz_first(); seed < testing::fuzz_first() + testing::fuzz_graphs(500); ++seed) {
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed).build(inputs);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_fused_equals_reference(g, inputs);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace braze
