// The arena pool (Note [Arena pool] in runtime/arena_pool.h): runs borrow
// the smallest idle arena that fits and give it back; only a miss
// obtains one; idle arenas past the bound go, smallest first, but one
// stays; programs of one structure at many sizes run in one arena.
#include <gtest/gtest.h>

#include "runtime/arena_pool.h"
#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/lower.h"
#include "runtime/program.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

struct Counting {
  int64_t allocations = 0;
  ArrayAllocator allocate() {
    return [this](DType d, Shape s) {
      ++allocations;
      return allocate_array(d, std::move(s));
    };
  }
};

const std::byte* data(const ArenaPool::Lease& l) { return l.arena().data.get(); }

TEST(ArenaPool, LendsTheSmallestIdleArenaThatFitsAndObtainsOnlyOnAMiss) {
  ArenaPool pool(int64_t{1} << 30);
  Counting c;
  const std::byte* small;
  const std::byte* large;
  {
    ArenaPool::Lease a = pool.lend(nullptr, 1000, c.allocate());
    ArenaPool::Lease b = pool.lend(nullptr, 100000, c.allocate());  // a is out: a miss
    small = data(a);
    large = data(b);
    EXPECT_EQ(a.arena().bytes(), 4096u);
    EXPECT_GE(b.arena().bytes(), 100000u);
  }
  EXPECT_EQ(c.allocations, 2);
  EXPECT_EQ(pool.figures().idle, 2u);
  {
    ArenaPool::Lease a = pool.lend(nullptr, 3000, c.allocate());
    EXPECT_EQ(data(a), small);
    ArenaPool::Lease b = pool.lend(nullptr, 3000, c.allocate());
    EXPECT_EQ(data(b), large) << "the smallest that fits, when the smaller one is out";
  }
  EXPECT_EQ(c.allocations, 2);
  // Another memory never gets these.
  int other;
  { ArenaPool::Lease a = pool.lend(&other, 1000, c.allocate()); }
  EXPECT_EQ(c.allocations, 3);
}

TEST(ArenaPool, AMissDropsTheIdleArenasTooSmallForIt) {
  ArenaPool pool(int64_t{1} << 30);
  Counting c;
  for (int64_t bytes : {1000, 20000, 300000}) ArenaPool::Lease a = pool.lend(nullptr, bytes, c.allocate());
  EXPECT_EQ(c.allocations, 3);
  EXPECT_EQ(pool.figures().idle, 1u) << "a loop of growing shapes keeps one arena";
  EXPECT_GE(pool.figures().idle_bytes, 300000);
}

TEST(ArenaPool, PastItsBoundDropsTheSmallestButKeepsOne) {
  ArenaPool pool(0);
  Counting c;
  {
    ArenaPool::Lease a = pool.lend(nullptr, 1 << 20, c.allocate());
    ArenaPool::Lease b = pool.lend(nullptr, 1 << 16, c.allocate());
  }
  EXPECT_EQ(pool.figures().idle, 1u);
  EXPECT_EQ(pool.figures().idle_bytes, 1 << 20) << "the larger serves both";
  { ArenaPool::Lease a = pool.lend(nullptr, 1 << 16, c.allocate()); }
  EXPECT_EQ(c.allocations, 2);
  pool.clear();
  EXPECT_EQ(pool.figures().idle, 0u);
}

TEST(ArenaPool, SizeClassesWasteAtMostAQuarter) {
  EXPECT_EQ(ArenaPool::size_class(1), 4096);
  for (int64_t bytes : {4097, 5000, 65537, 1000000, 123456789}) {
    int64_t c = ArenaPool::size_class(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_LE(c, bytes + bytes / 4) << bytes;
  }
  int classes = 0;  // a loop growing by one row obtains an arena every ~20%
  for (int64_t bytes = 4097, last = 0; bytes < (1 << 20); bytes += 997)
    if (ArenaPool::size_class(bytes) != last) ++classes, last = ArenaPool::size_class(bytes);
  EXPECT_LE(classes, 4 * 8 + 1);
}

TEST(ArenaPool, ProgramsOfOneStructureAtManySizesRunInOneArena) {
  std::vector<std::pair<std::shared_ptr<Program>, Lowered>> programs;
  for (int64_t n = 1; n <= 30; ++n) {
    // The product is an intermediate in the arena: its softmax reads it.
    Tensor x = testing::random_tensor({n, 33}, 1, 1.0f), w = testing::random_tensor({33, 20}, 2, 1.0f);
    Lowered l = lower(std::vector<Tensor>{softmax(matmul(x, w), -1) * 0.5});
    auto p = std::make_shared<Program>(l, KernelMode::Generated, MemoryOptions{.arena = true}, allocate_array);
    ASSERT_GT(p->prepared().plan.arena_bytes, 0);
    EXPECT_EQ(p->prepared().arena.data, nullptr) << "a program keeps no arena";
    programs.emplace_back(p, std::move(l));
  }
  ArenaPool& pool = Runtime::get().arenas();
  pool.clear();
  Counting c;
  for (int pass = 0; pass < 2; ++pass)
    for (auto& [p, l] : programs) {
      std::vector<Array> inputs = l.inputs;
      p->run(inputs, l.scalars, c.allocate());
      EXPECT_EQ(p->prepared().arena.data, nullptr) << "given back after the run";
    }
  EXPECT_EQ(pool.figures().idle, 1u);
  // Each run's output, and an arena only where the shapes grew past a size class.
  EXPECT_LE(c.allocations, 60 + 12);
  int64_t first_pass = c.allocations;
  for (auto& [p, l] : programs) {
    std::vector<Array> inputs = l.inputs;
    p->run(inputs, l.scalars, c.allocate());
  }
  EXPECT_EQ(c.allocations - first_pass, 30) << "the outputs only";
}

}  // namespace
}  // namespace braze
