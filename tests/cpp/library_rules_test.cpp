// Note [Library capabilities]: a target's rules decide which post-ops join
// a library call and which operands are copied dense first; whatever they
// decide, the schedule computes what the graph computes. Checked with
// rules stricter than any real target's, on the CPU.
#include <gtest/gtest.h>

#include "fusion/library_rules.h"
#include "fusion/passes.h"
#include "fusion/schedule.h"
#include "graph/reference.h"
#include "runtime/braze.h"
#include "runtime/execute.h"
#include "tests/cpp/jit_check.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

using testing::random_tensor;

std::string refuse_all(const Graph&, NodeId, std::span<const PostOp>, const PostOp&) { return "refused by the test"; }
bool read_none(const Graph&, const Node&, size_t) { return false; }

const LibraryRules kStrict{"strict", refuse_all, read_none};

std::vector<Tensor> roots() {
  Tensor x = random_tensor({2, 5, 7}, 1, 1.0f), w = random_tensor({7, 3}, 2, 1.0f), b = random_tensor({3}, 3, 1.0f);
  Tensor img = random_tensor({1, 2, 6, 6}, 4, 1.0f), k = random_tensor({3, 2, 3, 3}, 5, 1.0f);
  return {relu(matmul(x, matrix_transpose(random_tensor({3, 7}, 6, 1.0f))) + b), gelu(matmul(x, w) * 0.5),
          conv2d(img, k, random_tensor({3}, 7, 1.0f))};
}

TEST(LibraryRules, StrictRulesCopyEveryOperandAndKeepEveryPostOpAKernel) {
  Lowered l = lower(roots());
  Schedule s = make_schedule(l.graph, kStrict);
  size_t copies = 0, calls = 0;
  for (const Step& step : s.steps) {
    if (step.group.kind == FusedGroup::Kind::Library) {
      ++calls;
      EXPECT_TRUE(step.group.post_ops.empty()) << explain(s);
      for (NodeId in : s.graph[step.group.nodes[0]].inputs) EXPECT_EQ(s.graph[s.graph.base(in)].op, Op::Copy);
    }
    for (NodeId o : step.group.outputs) copies += s.graph[o].op == Op::Copy;
  }
  EXPECT_EQ(calls, 3u);
  EXPECT_GE(copies, 5u) << explain(s);  // x is one copy shared by two calls
  EXPECT_NE(explain(s).find("refused by the test"), std::string::npos);
  std::vector<Array> got = execute(s, l.inputs, allocate_array);
  std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(testing::close(got[i], want[i], 1e-5)) << "output " << i;
}

TEST(LibraryRules, TheCpuRulesChangeNothing) {
  Graph g = lower(roots()).graph;
  Graph once = run_pipeline(g);
  EXPECT_EQ(copy_unread_operands(once, cpu_library_rules()).size(), once.size());
  EXPECT_EQ(make_schedule(g).steps.size(), make_schedule(g, cpu_library_rules()).steps.size());
}

// What the CPU's rules copy and refuse, so oneDNN never runs its reference
// implementation (fusion/library_rules.cpp, cpu_reads and cpu_refuse).
TEST(LibraryRules, TheCpuRulesKeepOneDnnOnItsFastPaths) {
  auto schedule = [](std::vector<Tensor> ts) { return make_schedule(lower(ts).graph, cpu_library_rules()); };
  auto copied = [](const Schedule& s) {
    size_t n = 0;
    for (const Step& step : s.steps)
      if (step.group.kind == FusedGroup::Kind::Library)
        for (NodeId in : s.graph[step.group.nodes[0]].inputs) n += s.graph[s.graph.base(in)].op == Op::Copy;
    return n;
  };
  Tensor x = random_tensor({4, 3, 6, 6}, 11, 1.0f), k = random_tensor({5, 3, 3, 3}, 12, 1.0f);
  EXPECT_EQ(copied(schedule({conv2d(x, k)})), 0u);
  EXPECT_EQ(copied(schedule({conv2d(permute(random_tensor({3, 4, 6, 6}, 13, 1.0f), {1, 0, 2, 3}), k)})), 1u);
  Index flip[] = {Slice{}, Slice{}, Slice{std::nullopt, std::nullopt, -1}, Slice{}};
  EXPECT_EQ(copied(schedule({conv2d(x, index(k, flip))})), 1u);  // a negative stride
  Tensor a = random_tensor({8, 16}, 14, 1.0f), b = random_tensor({16, 4}, 15, 1.0f);
  EXPECT_EQ(copied(schedule({matmul(a, b), matmul(matrix_transpose(b), matrix_transpose(a))})), 0u);
  Index every_other[] = {Slice{}, Slice{0, std::nullopt, 2}};
  EXPECT_EQ(copied(schedule({matmul(index(random_tensor({8, 32}, 16, 1.0f), every_other), b)})), 1u);
  // Post-ops: one value, one per column and one per element join the call;
  // one per row, or a [8, 4] operand over a batch, stay kernels of their own.
  auto post_ops = [&](const Tensor& y) {
    Schedule s = schedule({y});
    for (const Step& step : s.steps)
      if (step.group.kind == FusedGroup::Kind::Library) return step.group.post_ops.size();
    return size_t{99};
  };
  Tensor ab = matmul(a, b);
  EXPECT_EQ(post_ops(ab + random_tensor({4}, 17, 1.0f)), 1u);
  EXPECT_EQ(post_ops(ab + random_tensor({8, 4}, 18, 1.0f)), 1u);
  EXPECT_EQ(post_ops(ab / random_tensor({8, 1}, 19, 1.0f)), 0u);
  Tensor batched = matmul(random_tensor({2, 8, 16}, 20, 1.0f), b);
  EXPECT_EQ(post_ops(batched + random_tensor({8, 4}, 21, 1.0f)), 0u);
  EXPECT_EQ(post_ops(batched + random_tensor({2, 8, 4}, 22, 1.0f)), 1u);
}

}  // namespace
}  // namespace braze
