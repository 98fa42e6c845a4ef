// Note [Storage versions]: writes bump a live storage's version, exported
// storages are never the same twice, and freed storages leave the table.
#include <gtest/gtest.h>

#include "graph/array.h"
#include "runtime/storage_versions.h"

namespace braze {
namespace {

std::shared_ptr<std::byte[]> storage() { return allocate_array(DType::Float32, {16}).data; }

TEST(StorageVersions, WritesBumpTheVersionOfTheStorageWritten) {
  StorageVersions v;
  auto a = storage(), b = storage();
  EXPECT_EQ(v.version(a), 0u);
  v.written(a);
  v.written(a);
  EXPECT_EQ(v.version(a), 2u);
  EXPECT_EQ(v.version(b), 0u);
  // A view into the storage (an aliasing pointer to its first byte) is
  // the same storage.
  EXPECT_EQ(v.version(std::shared_ptr<std::byte[]>(a, a.get())), 2u);
}

TEST(StorageVersions, AnExportedStorageIsNeverTheSameTwice) {
  StorageVersions v;
  auto a = storage();
  v.exported(a);
  uint64_t first = v.version(a);
  EXPECT_NE(v.version(a), first);
  v.written(a);  // still exported
  EXPECT_NE(v.version(a), v.version(a));
}

TEST(StorageVersions, AFreedStorageLeavesTheTable) {
  StorageVersions v;
  // 10,000 storages, each at its own address in `memory` and freed after
  // one write (as a loop that assigns into new tensors): none inherits an
  // old version, and the table does not keep them.
  static std::byte memory[10000];
  for (int i = 0; i < 10000; ++i) {
    std::shared_ptr<std::byte[]> s(memory + i, [](std::byte*) {});
    EXPECT_EQ(v.version(s), 0u);
    v.written(s);
    ASSERT_EQ(v.version(s), 1u);
  }
  EXPECT_LE(v.size(), 128u);
  // A new storage at a freed one's address starts again at 0.
  {
    std::shared_ptr<std::byte[]> s(memory, [](std::byte*) {});
    v.written(s);
    v.exported(s);
  }
  std::shared_ptr<std::byte[]> again(memory, [](std::byte*) {});
  EXPECT_EQ(v.version(again), 0u);
}

}  // namespace
}  // namespace braze
