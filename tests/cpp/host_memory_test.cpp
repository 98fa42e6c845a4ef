// The host block pool (graph/host_memory.h): large freed blocks come back to
// the next request of their size class; small ones go straight to malloc.
#include <gtest/gtest.h>

#include <cstdint>

#include "graph/array.h"
#include "graph/host_memory.h"

namespace braze {
namespace {

uintptr_t address(const std::shared_ptr<std::byte[]>& p) { return reinterpret_cast<uintptr_t>(p.get()); }

TEST(HostMemory, FreedLargeBlockIsReusedBySameSizeClass) {
  release_host_pool();
  int64_t before = host_pool_counters().reused;
  uintptr_t first;
  {
    auto a = allocate_host_block(3 << 20);
    first = address(a);
    EXPECT_EQ(first % kHugePageBytes, 0u);  // 2 MB aligned for huge pages
  }
  EXPECT_GE(host_pool_counters().bytes_kept, 3 << 20);
  auto b = allocate_host_block((3 << 20) + 1000);  // same 2 MB class (4 MB)
  EXPECT_EQ(address(b), first);
  EXPECT_EQ(host_pool_counters().reused, before + 1);
  EXPECT_EQ(host_pool_counters().bytes_kept, 0);
}

TEST(HostMemory, LiveBlocksAreNeverHandedOutTwice) {
  release_host_pool();
  auto a = allocate_host_block(kPoolMinBytes);
  auto b = allocate_host_block(kPoolMinBytes);
  EXPECT_NE(address(a), address(b));
  a.reset();
  auto c = allocate_host_block(kPoolMinBytes);
  EXPECT_NE(address(c), address(b));
}

TEST(HostMemory, DifferentClassesDoNotMix) {
  release_host_pool();
  { auto a = allocate_host_block(8 << 20); }
  int64_t reused = host_pool_counters().reused;
  auto b = allocate_host_block(kPoolMinBytes);
  EXPECT_EQ(host_pool_counters().reused, reused);  // the 8 MB block is not handed out for 256 KB
  release_host_pool();
  EXPECT_EQ(host_pool_counters().bytes_kept, 0);
}

TEST(HostMemory, SmallBlocksAreAlignedAndNotPooled) {
  release_host_pool();
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{4096}, kPoolMinBytes - 1}) {
    auto p = allocate_host_block(bytes);
    EXPECT_EQ(address(p) % 64, 0u) << bytes;
  }
  EXPECT_EQ(host_pool_counters().bytes_kept, 0);
}

TEST(HostMemory, ArraysUseThePool) {
  release_host_pool();
  int64_t before = host_pool_counters().reused;
  { Array a = allocate_array(DType::Float32, {1024, 1024}); }
  Array b = allocate_array(DType::Float32, {1024, 1024});
  EXPECT_EQ(host_pool_counters().reused, before + 1);
  EXPECT_EQ(address(b.data) % 64, 0u);
}

}  // namespace
}  // namespace braze
