// Note [Disk cache eviction]: the size bound over entries and writers'
// temporaries, stores that do not list the folder each time, temporaries
// of killed writers removed at once, and only braze's files ever touched.
// The reproducers: 200 stores took 29.3 s beside 20,000 foreign
// files (0.07 s without); eviction deleted 50 of 50 user files ending in
// `.bzk`; killed writers left 25 temporaries outside the bound for an hour.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "runtime/disk_cache.h"
#include "tests/cpp/disk_cache_fixture.h"

namespace braze {
namespace {

namespace fs = std::filesystem;
using testing::bytes_of;
using testing::dead_pid;
using testing::write_file;
using DiskCacheEviction = testing::DiskCacheTest;

int64_t braze_bytes(const fs::path& dir) {
  int64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (DiskCache::is_entry_file(name) || DiskCache::is_temporary_file(name))
      total += static_cast<int64_t>(e.file_size());
  }
  return total;
}

void touch(const fs::path& p) { ::close(::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)); }

TEST_F(DiskCacheEviction, SizeIsBoundedOldestEntriesGoFirst) {
  const int64_t entry = static_cast<int64_t>(DiskCache::encode("key 0", std::vector<std::byte>(1000)).size());
  DiskCache c(root_, 3 * entry);
  for (int k = 0; k < 10; ++k) {
    ASSERT_TRUE(c.store("key " + std::to_string(k), std::vector<std::byte>(1000, std::byte(k))));
    // Distinct times, oldest first, whatever the file system's resolution.
    fs::last_write_time(c.entry_path("key " + std::to_string(k)),
                        fs::file_time_type::clock::now() - std::chrono::minutes(100 - k));
    EXPECT_LE(braze_bytes(root_), 3 * entry) << "after store " << k;
  }
  EXPECT_TRUE(c.load("key 9"));
  EXPECT_FALSE(c.load("key 0"));
}

TEST_F(DiskCacheEviction, TwoHundredStoresBesideTwentyThousandForeignFilesListTheFolderRarely) {
  auto two_hundred_stores = [&](const fs::path& dir, DiskCache& c) {
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < 200; ++k) EXPECT_TRUE(c.store(dir.string() + " key " + std::to_string(k), payload_));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  DiskCache alone(root_ / "alone");
  double without = two_hundred_stores(root_ / "alone", alone);
  fs::create_directories(root_ / "crowded");
  for (int i = 0; i < 20000; ++i) touch(root_ / "crowded" / ("user file " + std::to_string(i) + ".txt"));
  DiskCache c(root_ / "crowded");
  double with = two_hundred_stores(root_ / "crowded", c);
  std::cout << "200 stores: " << without << " s alone, " << with << " s beside 20,000 foreign files, "
            << c.listings() << " listing(s)\n";
  EXPECT_LE(c.listings(), 1 + 200 / kStoresBetweenListings) << "a listing per store is what cost 29.3 s";
  EXPECT_LT(with, 2 * without + 1.0);
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "crowded"), fs::directory_iterator()), 20200);
}

TEST_F(DiskCacheEviction, UserFilesEndingInBzkSurviveEvictionAndClear) {
  const std::string hex(32, 'a');
  std::vector<std::string> mine;
  for (int i = 0; i < 50; ++i) mine.push_back("notes " + std::to_string(i) + ".bzk");
  for (std::string name : {std::string(31, 'a') + ".bzk", std::string(32, 'A') + ".bzk", std::string(32, 'g') + ".bzk",
                           hex + ".bzk.bak", hex + ".bzk.tmp.12.x.0", hex + ".bzk.tmp.12.3", hex + ".bzk.tmp..1.2"})
    mine.push_back(name);
  for (const std::string& name : mine) write_file(root_ / name, DiskCache::encode("a user's own", payload_));
  fs::create_directory(root_ / (std::string(32, 'b') + ".bzk"));  // a directory with an entry's name

  const int64_t entry = static_cast<int64_t>(DiskCache::encode("key 0", std::vector<std::byte>(1000)).size());
  DiskCache c(root_, 3 * entry);
  for (int k = 0; k < 10; ++k) ASSERT_TRUE(c.store("key " + std::to_string(k), std::vector<std::byte>(1000)));
  for (const std::string& name : mine) EXPECT_TRUE(fs::exists(root_ / name)) << name << " was evicted";

  DiskCache::Usage before = c.usage();
  EXPECT_GE(before.entries, 2);
  EXPECT_LE(before.bytes, 3 * entry);
  DiskCache::Usage removed = c.clear();
  EXPECT_EQ(removed.entries, before.entries);
  EXPECT_EQ(removed.bytes, before.bytes);
  for (const std::string& name : mine) EXPECT_TRUE(fs::exists(root_ / name)) << name << " was cleared";
  EXPECT_TRUE(fs::is_directory(root_ / (std::string(32, 'b') + ".bzk")));
  EXPECT_EQ(c.usage().entries, 0);
}

// 25 temporaries of a killed writer (the count) go at the next
// listing, not an hour later; a live writer's temporary stays but counts
// toward the bound; an hour-old one goes whatever its pid.
TEST_F(DiskCacheEviction, AKilledWritersTemporariesGoAtOnceAndLiveOnesCount) {
  const std::string hex(32, 'c');
  const pid_t gone = dead_pid();
  const std::vector<std::byte> mib(1 << 20, std::byte{1});
  for (int i = 0; i < 25; ++i)
    write_file(root_ / (hex + ".bzk.tmp." + std::to_string(gone) + ".7." + std::to_string(i)), mib);
  const fs::path live = root_ / (hex + ".bzk.tmp." + std::to_string(::getpid()) + ".7.0");
  write_file(live, std::vector<std::byte>(2 << 20));
  const fs::path old = root_ / (hex + ".bzk.tmp.1.7.0");  // pid 1 lives, but not for an hour of one write
  write_file(old, mib);
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::minutes(61));

  const int64_t bound = 4 << 20;  // under three quarters of it: the live 2 MiB and two entries
  DiskCache c(root_, bound);
  ASSERT_TRUE(c.store(key_, payload_));
  EXPECT_EQ(c.listings(), 1);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(root_)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left.size(), 2u) << "the entry and the live writer's temporary";
  EXPECT_TRUE(fs::exists(live));
  EXPECT_EQ(c.usage().temporaries, 1);

  // Entries of 400 KiB beside the live 2 MiB temporary: the bound holds for
  // all of braze's files together, so entries go to make room.
  for (int k = 0; k < 8; ++k) {
    ASSERT_TRUE(c.store("big " + std::to_string(k), std::vector<std::byte>(400 << 10, std::byte(k))));
    EXPECT_LE(braze_bytes(root_), bound) << "after store " << k;
  }
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(c.load("big 7"));
}

}  // namespace
}  // namespace braze
