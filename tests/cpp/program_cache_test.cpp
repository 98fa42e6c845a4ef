// The program cache bounded in bytes (Note [Bounded caches] in
// runtime/program.h): it holds at most its bound and drops the least
// recently used program; a program a caller holds outlives its eviction;
// kernels shared by programs are charged once; a program's estimate is not
// below the heap it takes.
#include <gtest/gtest.h>

#include <vector>

#include "graph/reference.h"
#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/lower.h"
#include "runtime/program.h"
#include "tests/cpp/heap_bytes.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

// A program realize would make for y, by its structure key.
struct Made {
  std::string key;
  std::shared_ptr<Program> program;
  Lowered lowered;
};
Made make_program(const Tensor& y) {
  Walk w = walk(std::vector<Tensor>{y}, {.scalars_as_inputs = true}, /*with_key=*/true);
  Lowered l = lower(w, std::vector<Tensor>{y});
  auto p = std::make_shared<Program>(l, KernelMode::Generated, MemoryOptions{.arena = true}, allocate_array);
  return {w.key, p, std::move(l)};
}

// The loop workload's step on [n, 33]: a program with an arena.
Tensor loop_step(int64_t n) {
  Tensor x = testing::random_tensor({n, 33}, 5, 1.0f), bias = testing::random_tensor({33}, 6, 1.0f);
  return softmax(maximum(x + bias, 0.0) * 0.75, -1) + x;
}

int64_t footprint(const Program& p) {
  int64_t bytes = p.own_bytes();
  for (const auto& part : p.shared_parts()) bytes += part.second;
  return bytes;
}

TEST(ProgramCacheBound, KeepsItsBoundLeastRecentlyUsedFirst) {
  std::vector<Made> made;
  for (int64_t n = 1; n <= 12; ++n) made.push_back(make_program(loop_step(n)));
  // Room for about three: the shapes differ, so no two share a kernel.
  ProgramCache cache(3 * footprint(*made[0].program) + footprint(*made[0].program) / 2);
  auto put = [&](size_t i) { return cache.find_or_make(made[i].key, [&] { return made[i].program; }); };
  int64_t evicted = 0;
  for (size_t i = 0; i < 3; ++i) evicted += put(i).evicted;
  EXPECT_EQ(evicted, 0);
  EXPECT_FALSE(put(0).compiled);  // 0 is now the most recent, 1 the least
  ProgramCache::Found f = put(3);
  EXPECT_TRUE(f.compiled);
  EXPECT_EQ(f.evicted, 1);
  EXPECT_FALSE(put(0).compiled);
  EXPECT_TRUE(put(1).compiled) << "1 was dropped";
  for (size_t i = 4; i < made.size(); ++i) {
    put(i);
    EXPECT_LE(cache.bytes(), cache.limit()) << i;
  }
  EXPECT_LE(cache.size(), 3u);
  // A program the cache dropped still runs for whoever holds it.
  Made& held = made[0];
  std::vector<Array> inputs = held.lowered.inputs;
  std::vector<Array> got = held.program->run(inputs, held.lowered.scalars, allocate_array);
  std::vector<Array> want = reference::evaluate(held.lowered.graph, inputs, held.lowered.graph.outputs);
  ASSERT_EQ(got[0].numel(), want[0].numel());
  for (int64_t i = 0; i < got[0].numel(); ++i)
    EXPECT_NEAR(load_double(got[0].dtype, got[0].data.get(), i), load_double(want[0].dtype, want[0].data.get(), i),
                1e-5);
}

TEST(ProgramCacheBound, KernelsSharedByProgramsAreChargedOnce) {
  // Two programs of one structure (as two devices' or two memory modes'
  // would be): the same kernels from the kernel cache.
  Made a = make_program(loop_step(8)), b = make_program(loop_step(8));
  ASSERT_EQ(a.program->shared_parts(), b.program->shared_parts());
  int64_t shared = footprint(*a.program) - a.program->own_bytes();
  ASSERT_GT(shared, 0);
  ProgramCache cache(int64_t{1} << 30);
  cache.find_or_make("a", [&] { return a.program; });
  cache.find_or_make("b", [&] { return b.program; });
  EXPECT_EQ(cache.bytes(), a.program->own_bytes() + b.program->own_bytes() + shared);
  cache.clear();
  EXPECT_EQ(cache.bytes(), 0);
}

TEST(ProgramCacheBound, TheNewestStaysHoweverLarge) {
  ProgramCache cache(0);
  for (int64_t n = 1; n <= 3; ++n) {
    Made m = make_program(loop_step(n));
    EXPECT_EQ(cache.find_or_make(m.key, [&] { return m.program; }).evicted, n == 1 ? 0 : 1);
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_FALSE(cache.find_or_make(m.key, [&] { return m.program; }).compiled);
  }
}

// A transformer-like block over [n, 64]: layer_norm, two matmuls with
// their epilogues, gelu, softmax, a residual add.
Tensor block(int64_t n) {
  Tensor x = testing::random_tensor({n, 64}, 11, 1.0f);
  Tensor w1 = testing::random_tensor({64, 256}, 12, 0.1f), w2 = testing::random_tensor({256, 64}, 13, 0.1f);
  Tensor g = testing::random_tensor({64}, 14, 1.0f), b = testing::random_tensor({64}, 15, 1.0f);
  Tensor h = gelu(matmul(layer_norm(x, g, b, 1e-5), w1) + testing::random_tensor({256}, 16, 1.0f));
  return x + softmax(matmul(h, w2), -1) * sum(x, std::vector<int64_t>{0}, true);
}

TEST(ProgramCacheBound, AProgramsEstimateIsNotBelowWhatItTakes) {
  for (const Tensor& y : {matmul(loop_step(16), testing::random_tensor({33, 20}, 7, 1.0f)), block(16)}) {
    // Its kernels are in the caches first, so the programs add their own state only.
    Made first = make_program(y);
    int64_t before = testing::heap_bytes();
    std::vector<std::shared_ptr<Program>> programs;
    for (int i = 0; i < 20; ++i) programs.push_back(make_program(y).program);
    int64_t heap = (testing::heap_bytes() - before) / 20;
    const Program& p = *first.program;
    EXPECT_GE(p.own_bytes(), heap) << p.schedule().steps.size() << " steps, " << p.schedule().graph.size() << " nodes";
    EXPECT_LE(p.own_bytes(), 3 * heap) << "an estimate, not a multiple";
  }
}

}  // namespace
}  // namespace braze
