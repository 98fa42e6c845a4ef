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
#include "runtime/context.h"
#include "runtime/execute.h"
#include "runtime/program.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

using testing::random_tensor;

// Two matmuls of 256 rows with row-major right operands, each read packed
// (Note [Packed matmul weights]): the first's is computed by a kernel, so it
// is packed at every run into the step's workspace; the second's is a graph
// input, packed once and kept by the program (Note [Kept packed weights]).
Lowered two_packed_matmuls() {
  Tensor x = random_tensor({256, 64}, 11, 1.0f), w1 = random_tensor({64, 96}, 12, 0.2f);
  Tensor w2 = random_tensor({96, 32}, 13, 0.2f), b = random_tensor({96}, 14, 1.0f);
  return lower(std::vector<Tensor>{matmul(relu(matmul(x, exp(w1 * 0.5)) + b), w2)});
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
  EXPECT_EQ(s.steps[0].workspace_bytes, 0);  // a generated kernel needs none
  // What each call needs depends on the kernels oneDNN picks for this CPU
  // (AVX2's gemm has no scratchpad, AVX-512's brgemm has one): the
  // expectation is what the primitive reports.
  dnn::Prepared computed = dnn::prepare(s.graph, s.steps[1].group);
  dnn::Prepared input = dnn::prepare(s.graph, s.steps[2].group);
  ASSERT_EQ(computed.why_not, "");
  ASSERT_EQ(input.why_not, "");
  EXPECT_GE(computed.packed_bytes, 64 * 96 * 4) << "256 rows: the computed right operand is packed";
  EXPECT_GT(input.packed_bytes, 0) << "the input weight is packed";
  EXPECT_EQ(s.steps[1].workspace_bytes, (computed.packed_bytes + 63) / 64 * 64 + computed.scratch_bytes)
      << "the computed operand is packed at every run, into the workspace";
  EXPECT_EQ(s.steps[2].workspace_bytes, input.scratch_bytes)
      << "the input weight is kept packed by the program, not in the arena";
  memplan::Liveness lives = memplan::liveness(s);
  int workspaces = 0;
  for (const memplan::BufferLife& b : lives.scratch) {
    if (!b.workspace) continue;
    ++workspaces;
    EXPECT_EQ(b.first, b.last);
    EXPECT_EQ(b.bytes, s.steps[b.first].workspace_bytes);
  }
  EXPECT_GE(workspaces, 1);
  memplan::MemoryPlan plan = memplan::plan_memory(lives);
  EXPECT_EQ(memplan::plan_problem(lives, plan), "");
  EXPECT_EQ(plan.arena_bytes, memplan::lower_bound(lives, plan.alignment)) << memplan::to_string(lives, plan);
  EXPECT_NE(memplan::to_string(lives, plan).find(" workspace  steps 1..1"), std::string::npos)
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
  EXPECT_EQ(allocations, 1) << "the kept packed weight; no workspace of its own, and the arena is borrowed per run";
  Runtime::get().arenas().clear();  // so that the first run obtains its arena (Note [Arena pool])
  ASSERT_GE(p.workspace_offset[1], 0);
  EXPECT_LE(p.workspace_offset[1] + program.schedule().steps[1].workspace_bytes, p.plan.arena_bytes);
  EXPECT_EQ(p.workspace[1].data, nullptr);
  EXPECT_EQ(p.kept[1].packed.data, nullptr);
  EXPECT_NE(p.kept[2].packed.data, nullptr);
  for (int run = 0; run < 3; ++run) {
    std::vector<Array> inputs = l.inputs;
    std::vector<Array> got = program.run(inputs, l.scalars, counted);
    expect_near(got[0], want[0], 1e-4);
  }
  EXPECT_EQ(allocations, 1 + 1 + 3) << "the arena at the first run, one output per run, nothing else";
}

TEST(LibraryWorkspace, AKeptPackedWeightFollowsANewWeightAndAnInPlaceWrite) {
  if (!dnn::available()) GTEST_SKIP() << "braze is built without oneDNN";
  Tensor x = random_tensor({200, 24}, 71, 1.0f), w = random_tensor({24, 40}, 72, 1.0f);
  auto check = [&](const Tensor& weight, const std::string& what) {
    Tensor y = matmul(x, weight);
    Lowered l = lower(std::vector<Tensor>{y});
    std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
    realize({y});
    std::vector<double> got = y.to_vector<double>();
    for (int64_t i = 0; i < want[0].numel(); ++i) {
      double v = load_double(want[0].dtype, want[0].data.get(), i);
      ASSERT_NEAR(got[i], v, 1e-4 * (1 + std::abs(v))) << what << " at " << i;
    }
  };
  check(w, "first run: packs");
  check(w, "replay: the kept copy");
  assign({w}, {w * -2.0});  // in place: the storage's version moves
  check(w, "after assign");
  check(random_tensor({24, 40}, 73, 1.0f), "another weight of the same shape");
  check(w, "back to the first");
}

TEST(LibraryWorkspace, WithoutTheArenaOrASizedScheduleTheWorkspaceIsAllocatedOnce) {
  if (!dnn::available()) GTEST_SKIP() << "braze is built without oneDNN";
  Lowered l = two_packed_matmuls();
  std::vector<Array> want = reference::evaluate(l.graph, l.inputs, l.graph.outputs);
  for (bool arena : {false, true}) {
    Schedule s = make_schedule(l.graph);  // workspaces not sized: the plan holds none
    Prepared p = prepare(s, KernelMode::Generated, {.arena = arena, .poison = arena}, allocate_array);
    EXPECT_EQ(p.workspace_offset[1], -1);
    EXPECT_NE(p.workspace[1].data, nullptr);
    for (int run = 0; run < 2; ++run) expect_near(run_prepared(s, p, l.inputs, allocate_array)[0], want[0], 1e-4);
  }
}

}  // namespace
}  // namespace braze
