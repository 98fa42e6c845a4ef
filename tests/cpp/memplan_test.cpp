// The memory planner on hand-made schedules and lives: what a chain, a
// diamond, zero-size buffers and alignment must give, and that the
// verifier names each kind of broken plan.
#include <gtest/gtest.h>

#include "fusion/schedule.h"
#include "memplan/liveness.h"
#include "memplan/plan.h"
#include "memplan/verify.h"

namespace braze::memplan {
namespace {

constexpr Strategy kStrategies[] = {Strategy::GreedyBySize, Strategy::HeapBestFit};

// A square float32 matrix product: a library call, so each one is a step.
NodeId mm(Graph& g, NodeId a, NodeId b) { return g.apply(Op::MatMul, {a, b}); }

Liveness lives(std::vector<BufferLife> scratch, int32_t steps) {
  Liveness l;
  l.scratch = std::move(scratch);
  l.steps = steps;
  return l;
}

TEST(MemPlanLiveness, ChainOfLibraryCalls) {
  Graph g;
  NodeId x = g.input(DType::Float32, {16, 16});
  NodeId w = g.input(DType::Float32, {16, 16});
  NodeId out = mm(g, mm(g, mm(g, mm(g, x, w), w), w), w);
  g.outputs = {out};
  Schedule s = make_schedule(g);
  Liveness l = liveness(s);
  ASSERT_EQ(l.steps, 4);
  ASSERT_EQ(l.scratch.size(), 3u);  // t1..t3; x, w and out are the user's
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(l.scratch[k].first, k);
    EXPECT_EQ(l.scratch[k].last, k + 1);
    EXPECT_EQ(l.scratch[k].bytes, 16 * 16 * 4);
  }
  EXPECT_EQ(l.user_visible, (std::vector<NodeId>{x, w, out}));
  EXPECT_EQ(lower_bound(l, 64), 2 * 1024);
  EXPECT_EQ(no_reuse_bytes(l, 64), 3 * 1024);
}

TEST(MemPlan, ChainPingPongsBetweenTwoBuffers) {
  Graph g;
  NodeId x = g.input(DType::Float32, {16, 16});
  NodeId w = g.input(DType::Float32, {16, 16});
  NodeId t = x;
  for (int k = 0; k < 8; ++k) t = mm(g, t, w);
  g.outputs = {t};
  Liveness l = liveness(make_schedule(g));
  ASSERT_EQ(l.scratch.size(), 7u);
  for (Strategy st : kStrategies) {
    MemoryPlan p = plan_memory(l, {.alignment = 64, .strategy = st});
    verify_plan(l, p);
    EXPECT_EQ(p.arena_bytes, 2 * 1024) << name(st);
    for (size_t k = 2; k < p.buffers.size(); ++k)  // every other step reuses the same place
      EXPECT_EQ(p.buffers[k].offset, p.buffers[k - 2].offset) << name(st) << " buffer " << k;
    EXPECT_NE(p.buffers[0].offset, p.buffers[1].offset) << name(st);
  }
}

TEST(MemPlan, Diamond) {
  // a feeds b and c, which meet in d: a is alive until c is written, so
  // at step 2 a, b and c are all alive.
  Graph g;
  NodeId x = g.input(DType::Float32, {8, 8});
  NodeId w = g.input(DType::Float32, {8, 8});
  NodeId a = mm(g, x, w), b = mm(g, a, w), c = mm(g, w, a), d = mm(g, b, c);
  g.outputs = {mm(g, d, w)};
  Liveness l = liveness(make_schedule(g));
  ASSERT_EQ(l.scratch.size(), 4u);
  EXPECT_EQ(l.scratch[0].node, a);
  EXPECT_EQ(l.scratch[0].last, 2);
  EXPECT_EQ(lower_bound(l, 64), 3 * 256);
  for (Strategy st : kStrategies) {
    MemoryPlan p = plan_memory(l, {.alignment = 64, .strategy = st});
    verify_plan(l, p);
    EXPECT_EQ(p.arena_bytes, 3 * 256) << name(st);  // d takes a's place once a is dead
  }
}

TEST(MemPlan, ZeroSizeBuffersTakeNoSpace) {
  Liveness l = lives({{1, 0, 0, 3}, {2, 128, 0, 1}, {3, 0, 1, 2}, {4, 128, 2, 3}}, 4);
  EXPECT_EQ(lower_bound(l, 64), 128);
  for (Strategy st : kStrategies) {
    MemoryPlan p = plan_memory(l, {.alignment = 64, .strategy = st});
    verify_plan(l, p);
    EXPECT_EQ(p.arena_bytes, 128) << name(st);
    EXPECT_EQ(p.buffers[0].bytes, 0);
  }
  Liveness empty = lives({{1, 0, 0, 0}}, 1);
  EXPECT_EQ(plan_memory(empty).arena_bytes, 0);
}

TEST(MemPlan, OffsetsAndSizesFollowTheAlignment) {
  // 3 bytes alive with 100 bytes: each is padded to a full block.
  Liveness l = lives({{1, 3, 0, 1}, {2, 100, 0, 1}, {3, 300, 1, 2}}, 3);
  for (int64_t alignment : {64, 256}) {
    EXPECT_EQ(lower_bound(l, alignment), alignment == 64 ? 64 + 128 + 320 : 3 * 256 + 256);
    for (Strategy st : kStrategies) {
      MemoryPlan p = plan_memory(l, {.alignment = alignment, .strategy = st});
      verify_plan(l, p);
      EXPECT_EQ(p.arena_bytes % alignment, 0);
      for (const Placement& at : p.buffers) EXPECT_EQ(at.offset % alignment, 0) << name(st);
      EXPECT_EQ(p.arena_bytes, lower_bound(l, alignment)) << name(st) << " at " << alignment;
    }
  }
  EXPECT_THROW(plan_memory(l, {.alignment = 48}), std::logic_error);
}

TEST(MemPlan, BuffersWhoseLivesTouchAtOneStepDoNotShare) {
  // b is written by the step that last reads a: the kernel reads a while
  // it writes b (Note [Buffer lives]).
  Liveness l = lives({{1, 64, 0, 1}, {2, 64, 1, 2}}, 3);
  for (Strategy st : kStrategies) EXPECT_EQ(plan_memory(l, {.strategy = st}).arena_bytes, 128) << name(st);
}

// Note [In-place outputs]: a pair the lives mark in place shares one offset.
TEST(MemPlan, AnInPlaceOutputTakesItsInputsOffset) {
  BufferLife b{2, 64, 1, 2};
  b.in_place_of = 0;
  Liveness l = lives({{1, 64, 0, 1}, b}, 3);
  EXPECT_EQ(lower_bound(l, 64), 64);
  for (Strategy st : kStrategies) {
    MemoryPlan p = plan_memory(l, {.strategy = st});
    EXPECT_EQ(p.arena_bytes, 64) << name(st);
    EXPECT_EQ(plan_problem(l, p), "") << name(st);
    EXPECT_EQ(plan_memory(l, {.strategy = st, .in_place = false}).arena_bytes, 128) << name(st);
  }
}

// Squares after matrix products: the element-wise kernel that reads the
// product at its own index may write over it, one that reads it transposed
// may not.
TEST(MemPlanLiveness, FindsExactlyTheSameIndexElementWiseReads) {
  Graph g;
  NodeId x = g.input(DType::Float32, {16, 16});
  NodeId w = g.input(DType::Float32, {16, 16});
  NodeId m1 = mm(g, x, w);
  NodeId e = g.apply(Op::Mul, {m1, m1});  // element-wise, same index: in place
  NodeId m2 = mm(g, e, w);
  NodeId mt = g.apply(Op::Permute, {m2}, Attr{{1, 0}, {}});
  NodeId t = g.apply(Op::Mul, {mt, mt});  // transposed read: not in place
  g.outputs = {mm(g, t, w)};
  Liveness l = liveness(make_schedule(g));
  ASSERT_EQ(l.scratch.size(), 4u) << explain(make_schedule(g));
  EXPECT_EQ(l.scratch[1].in_place_of, 0) << explain(make_schedule(g));
  EXPECT_EQ(l.scratch[3].in_place_of, -1) << explain(make_schedule(g));
  MemoryPlan p = plan_memory(l);
  EXPECT_EQ(plan_problem(l, p), "");
  EXPECT_EQ(p.buffers[0].offset, p.buffers[1].offset);
  (void)e;
  (void)t;
}

// --- the verifier ---

std::string problem_after(void (*corrupt)(Liveness&, MemoryPlan&)) {
  Liveness l = lives({{1, 64, 0, 1}, {2, 64, 1, 2}, {3, 64, 2, 3}}, 4);
  l.user_visible = {0, 9};
  MemoryPlan p = plan_memory(l);
  EXPECT_EQ(plan_problem(l, p), "");
  corrupt(l, p);
  return plan_problem(l, p);
}

TEST(MemPlanVerify, NamesEachKindOfBrokenPlan) {
  EXPECT_EQ(problem_after([](Liveness&, MemoryPlan&) {}), "");
  EXPECT_NE(problem_after([](Liveness&, MemoryPlan& p) { p.buffers[1].offset = p.buffers[0].offset; })
                .find("are alive together at step 1 and overlap in the arena"),
            std::string::npos);
  EXPECT_NE(problem_after([](Liveness&, MemoryPlan& p) { p.buffers[0].offset += 8; }).find("is not aligned to 64"),
            std::string::npos);
  EXPECT_NE(problem_after([](Liveness&, MemoryPlan& p) { p.arena_bytes = 64; }).find("ends past the arena"),
            std::string::npos);
  EXPECT_NE(problem_after([](Liveness& l, MemoryPlan&) { l.user_visible = {2}; }).find("is user-visible"),
            std::string::npos);
  EXPECT_NE(problem_after([](Liveness&, MemoryPlan& p) { p.buffers.pop_back(); }).find("places 2 buffers"),
            std::string::npos);
  EXPECT_NE(problem_after([](Liveness&, MemoryPlan& p) { p.buffers[2].bytes = 32; }).find("reserves only 32"),
            std::string::npos);
  // The touching overlap of 0 and 1 is allowed only when 1 is marked in
  // place of 0, at the same offset.
  EXPECT_EQ(problem_after([](Liveness& l, MemoryPlan& p) {
              l.scratch[1].in_place_of = 0;
              p.buffers[2].offset = p.buffers[1].offset;  // out of 1's way
              p.buffers[1].offset = p.buffers[0].offset;
            }),
            "");
  EXPECT_NE(problem_after([](Liveness& l, MemoryPlan& p) {
              l.scratch[2].in_place_of = 0;  // 0 is dead by step 2: not the input it writes over
              p.buffers[1].offset = p.buffers[0].offset;
            }).find("overlap in the arena"),
            std::string::npos);
  EXPECT_NE(problem_after([](Liveness& l, MemoryPlan& p) {
              l.scratch[1].in_place_of = 0;  // in place, but half a buffer up
              p.buffers[0].offset = 0;
              p.buffers[1].offset = 32;
              p.alignment = 32;
            }).find("overlap in the arena"),
            std::string::npos);
  EXPECT_NE(problem_after([](Liveness& l, MemoryPlan&) { l.scratch[0].in_place_of = 1; }).find("not an earlier one"),
            std::string::npos);
  // Buffers 0 and 2 are never alive together: sharing is allowed.
  EXPECT_EQ(problem_after([](Liveness&, MemoryPlan& p) { p.buffers[2].offset = p.buffers[0].offset; }), "");
}

TEST(MemPlanVerify, ThrowsAnInternalErrorThatNamesBothBuffers) {
  Liveness l = lives({{5, 64, 0, 2}, {7, 64, 1, 2}}, 3);
  MemoryPlan p = plan_memory(l);
  p.buffers[1].offset = 0;
  try {
    verify_plan(l, p);
    FAIL() << "the verifier accepted overlapping buffers";
  } catch (const std::logic_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("node 5 (steps 0..2, bytes [0, 64))"), std::string::npos) << what;
    EXPECT_NE(what.find("node 7 (steps 1..2, bytes [0, 64))"), std::string::npos) << what;
  }
}

TEST(MemPlan, ToStringShowsEachBufferAndThePeak) {
  Liveness l = lives({{1, 100, 0, 1}, {2, 64, 1, 2}}, 3);
  std::string text = to_string(l, plan_memory(l));
  EXPECT_NE(text.find("#1  steps 0..1  100 B  at 0"), std::string::npos) << text;
  EXPECT_NE(text.find("arena 192 B, lower bound 192 B, no reuse 192 B"), std::string::npos) << text;
}

}  // namespace
}  // namespace braze::memplan
