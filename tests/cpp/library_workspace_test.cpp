// Library calls' workspaces in the program's arena (Note [Step workspaces]):
// oneDNN's scratchpad and the packed right operand are buffers alive during
// their step only, placed and verified like any intermediate, poisoned after
// it, and the results are unchanged.
#include <gtest/gtest.h>

#include "fusion/schedule.h"
#include "graph/reference.h"
#include "jit_cpu/dnn.h"
#include "memplan/plan.h"
#include "memplan/verify.h"
#include "runtime/braze.h"
#include "runtime/execute.h"
#include "runtime/program.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

using testing::random_tensor;

// Two matmuls of 256 rows with row-major right operands (each packed first:
// Note [Packed matmul weights]) around an element-wise kernel.
Lowered two_packed_matmuls() {
  Tensor x = random_tensor({256, 64}, 11, 1.0f), w1 = random_tensor({64, 96}, 12, 0.2f);
  Tensor w2 = random_tensor({96, 32}, 13, 0.2f), b = random_tensor({96}, 14, 1.0f);
  return lower(std::vector<Tensor>{matmul(exp(relu(matmul(x, w1) + b) * -0.5), w2)});
}

void expect_near(const Array& got, const Array& want, double tol) {
  ASSERT_EQ(got.numel(), want.numel());
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = load_double(want.dtype, want.data.get(), i);
    ASSERT_NEAR(load_double(got.dtype, got.data.get(), i), w, tol * (1 + std::abs(w))) << "at " << i;
  }
}

TEST(LibraryWorkspace, APackedMatmulsWorkspaceIsABufferOfItsStepOnly) {
  if (!dnn::available()) GTEST_SKIP() << "braze is built without oneDNN";
  Lowered l = two_packed_matmuls();
  Schedule s = program_schedule(l.graph);
  ASSERT_EQ(s.steps.size(), 3u) << explain(s);
  for (size_t k : {size_t{0}, size_t{2}})  // at least the packed right operand
    EXPECT_GE(s.steps[k].workspace_bytes, k == 0 ? 64 * 96 * 4 : 96 * 32 * 4) << "step " << k;
  EXPECT_EQ(s.steps[1].workspace_bytes, 0);  // a generated kernel needs none
  memplan::Liveness lives = memplan::liveness(s);
  int workspaces = 0;
  for (const memplan::BufferLife& b : lives.scratch) {
    if (!b.workspace) continue;
    ++workspaces;
    EXPECT_EQ(b.first, b.last);
    EXPECT_EQ(b.bytes, s.steps[b.first].workspace_bytes);
  }
  EXPECT_EQ(workspaces, 2);
  memplan::MemoryPlan plan = memplan::plan_memory(lives);
  EXPECT_EQ(memplan::plan_problem(lives, plan), "");
  // The second call's workspace reuses bytes of what died before it.
  EXPECT_EQ(plan.arena_bytes, memplan::lower_bound(lives, plan.alignment)) << memplan::to_string(lives, plan);
  EXPECT_NE(memplan::to_string(lives, plan).find(" workspace  steps 0..0"), std::string::npos)
      << memplan::to_string(lives, plan);
}

TEST(LibraryWorkspace, AProgramRunsItsLibraryCallsOnArenaWorkspacesWithTheSameResults) {
  if (!dnn::available()) GTEST_SKIP() << "braze is built without oneDNN";
  Lowered l = two_packed_matmuls();
  std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
  int64_t allocations = 0;
  ArrayAllocator counted = [&](DType d, Shape shape) { ++allocations; return allocate_array(d, std::move(shape)); };
  // Poisoned: every workspace byte is NaN before its step and after it.
  Program program(l, KernelMode::Generated, {.arena = true, .poison = true}, counted);
  const Prepared& p = program.prepared();
  EXPECT_EQ(allocations, 1) << "the arena only: no workspace of its own";
  for (size_t k : {size_t{0}, size_t{2}}) {
    ASSERT_GE(p.workspace_offset[k], 0) << "step " << k;
    EXPECT_LE(p.workspace_offset[k] + program.schedule().steps[k].workspace_bytes, p.plan.arena_bytes);
    EXPECT_EQ(p.workspace[k].data, nullptr);
  }
  for (int run = 0; run < 3; ++run) {
    std::vector<Array> inputs = l.inputs;
    std::vector<Array> got = program.run(inputs, l.scalars, counted);
    expect_near(got[0], want[0], 1e-4);
  }
  EXPECT_EQ(allocations, 1 + 3) << "one output per run, nothing else";
}

TEST(LibraryWorkspace, WithoutTheArenaOrASizedScheduleTheWorkspaceIsAllocatedOnce) {
  if (!dnn::available()) GTEST_SKIP() << "braze is built without oneDNN";
  Lowered l = two_packed_matmuls();
  std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
  for (bool arena : {false, true}) {
    Schedule s = make_schedule(l.graph);  // workspaces not sized: the plan holds none
    Prepared p = prepare(s, KernelMode::Generated, {.arena = arena, .poison = arena}, allocate_array);
    for (size_t k : {size_t{0}, size_t{2}}) {
      EXPECT_EQ(p.workspace_offset[k], -1);
      EXPECT_NE(p.workspace[k].data, nullptr) << "step " << k;
    }
    for (int run = 0; run < 2; ++run) expect_near(run_prepared(s, p, l.inputs, allocate_array)[0], want[0], 1e-4);
  }
}

}  // namespace
}  // namespace braze
