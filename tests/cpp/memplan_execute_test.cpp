// The executor with its intermediates in one planned arena: results equal
// those of one allocation per buffer, bit for bit, with poison mode on (a
// dead buffer's bytes become NaN, so a planner bug shows up as a wrong
// answer); the arena is one allocation; outputs are never in it.
#include <gtest/gtest.h>

#include <random>

#include "fusion/schedule.h"
#include "runtime/braze.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "tests/cpp/random_graph.h"
#include "tests/cpp/random_tensor.h"
#include "tests/cpp/test_util.h"

namespace braze {
namespace {

using testing::same_bits;

constexpr MemoryOptions kPoisonedArena{.arena = true, .poison = true};

// Keeps every array it hands out, to count them and find the arena.
struct RecordingAllocator {
  std::vector<Array> given;
  ArrayAllocator fn() {
    return [this](DType dtype, Shape shape) { return given.emplace_back(allocate_array(dtype, std::move(shape))); };
  }
};

void expect_arena_equals_plain(const Schedule& s, std::span<const Array> inputs, KernelMode mode,
                               const std::string& what) {
  std::vector<Array> want = execute(s, inputs, allocate_array, mode);
  std::vector<Array> got = execute(s, inputs, allocate_array, mode, kPoisonedArena);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << what << ", output " << i;
}

TEST(MemPlanExecute, RandomGraphsGiveTheSameResultsInAPoisonedArena) {
  uint32_t first = testing::fuzz_first(), count = testing::fuzz_graphs(1000);
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed).build(inputs);
    expect_arena_equals_plain(make_schedule(g), inputs, KernelMode::Interpreted, "seed " + std::to_string(seed));
    if (HasFailure()) return;
  }
}

// Generated kernels writing over their inputs in place (Note [In-place
// outputs]): the machine code must read each element before it stores it.
TEST(MemPlanExecute, RandomGraphsWithInPlaceOutputsGiveTheSameResultsWhenGenerated) {
  uint32_t first = testing::fuzz_first(), count = testing::fuzz_graphs(1000);
  size_t in_place = 0;
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed).build(inputs);
    Schedule s = make_schedule(g);
    size_t here = 0;
    for (const memplan::BufferLife& b : memplan::liveness(s).scratch) here += b.in_place_of >= 0;
    if (here == 0) continue;
    in_place += here;
    expect_arena_equals_plain(s, inputs, KernelMode::Generated, "seed " + std::to_string(seed));
    if (HasFailure()) return;
  }
  std::printf("%zu outputs written in place, generated\n", in_place);
  if (count >= 1000) {
    EXPECT_GT(in_place, 0u);
  }
}

Tensor random_tensor(Shape shape, uint32_t seed) { return testing::random_tensor(std::move(shape), seed, 0.5f); }

// Library calls between kernels: many intermediates, alive over several
// steps, sharing the arena; run by generated code.
Lowered small_transformer_block() {
  const int64_t batch = 2, seq = 8, d = 16, heads = 2, dh = d / heads;
  uint32_t seed = 0;
  auto w = [&](Shape s) { return random_tensor(std::move(s), ++seed); };
  auto split = [&](const Tensor& t) { return permute(reshape(t, {batch, seq, heads, dh}), {0, 2, 1, 3}); };
  Tensor x = w({batch * seq, d});
  Tensor h = layer_norm(x, w({d}), w({d}));
  Tensor q = split(matmul(h, w({d, d}))), k = split(matmul(h, w({d, d}))), v = split(matmul(h, w({d, d})));
  Tensor attn = softmax(matmul(q, matrix_transpose(k)) * 0.35, -1);
  Tensor y = x + matmul(reshape(permute(matmul(attn, v), {0, 2, 1, 3}), {batch * seq, d}), w({d, d}));
  Tensor f = gelu(matmul(layer_norm(y, w({d}), w({d})), w({d, 4 * d})) + w({4 * d}), "tanh");
  Tensor out = y + matmul(f, w({4 * d, d}));
  return lower(std::vector<Tensor>{out, attn});
}

TEST(MemPlanExecute, TransformerBlockGivesTheSameResultsInAPoisonedArena) {
  Lowered l = small_transformer_block();
  Schedule s = make_schedule(l.graph);
  ASSERT_GT(s.steps.size(), 8u);
  expect_arena_equals_plain(s, l.inputs, KernelMode::Generated, "generated");
  expect_arena_equals_plain(s, l.inputs, KernelMode::Interpreted, "interpreted");
}

TEST(MemPlanExecute, TheArenaIsOneAllocationAndHoldsNoOutput) {
  Lowered l = small_transformer_block();
  // Sized as a program's schedule is, so the library calls' workspaces are
  // planned buffers too (Note [Step workspaces]).
  Schedule s = program_schedule(l.graph);
  RecordingAllocator plain, arena;
  execute(s, l.inputs, plain.fn());
  Prepared prepared = prepare(s, KernelMode::Generated, kPoisonedArena, arena.fn());
  // What the program keeps beside the arena: the packed weights (Note [Kept
  // packed weights]), where oneDNN reads them packed on this CPU. Every
  // workspace is in the arena.
  size_t kept = 0;
  for (const Prepared::KeptPacked& k : prepared.kept) kept += k.packed.data != nullptr;
  for (const Array& w : prepared.workspace) EXPECT_EQ(w.data, nullptr) << "a workspace outside the arena";
  EXPECT_EQ(arena.given.size(), 1 + kept) << "preparing: the arena, then the kept packed weights";
  std::vector<Array> out = run_prepared(s, prepared, l.inputs, arena.fn());
  // Plain: one per output and per intermediate. Arena: one per output, plus the arena.
  EXPECT_EQ(arena.given.size(), 1 + kept + s.graph.outputs.size());
  EXPECT_GT(plain.given.size(), arena.given.size() + 5);
  const Array& a = arena.given.front();
  ASSERT_EQ(a.dtype, DType::UInt8);
  for (const Array& o : out) {
    const std::byte* p = o.data.get();
    EXPECT_TRUE(p + o.bytes() <= a.data.get() || p >= a.data.get() + a.bytes()) << "an output lies in the arena";
  }
}

}  // namespace
}  // namespace braze
