// The disk kernel cache (Note [Disk cache entries]): every kind of damage is
// a miss, never a wrong payload or a crash, and costs a small read however
// large the file; unwritable directories turn caching off, a bad entry path
// fails that entry only; concurrent writers (processes or threads) never
// corrupt an entry. Ownership: disk_cache_trust_test.cpp; size and
// temporaries: disk_cache_eviction_test.cpp.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "runtime/disk_cache.h"
#include "tests/cpp/disk_cache_fixture.h"

namespace braze {
namespace {

namespace fs = std::filesystem;
using testing::bytes_of;
using testing::DiskCacheTest;
using testing::write_file;

TEST_F(DiskCacheTest, StoresAndLoadsInADirectoryOfMode0700) {
  DiskCache c(root_ / "a" / "cache");
  EXPECT_FALSE(c.load(key_));
  ASSERT_TRUE(c.store(key_, payload_)) << c.disabled_reason();
  EXPECT_EQ(c.load(key_), payload_);
  EXPECT_FALSE(c.load(key_ + " "));
  EXPECT_EQ(fs::status(c.dir()).permissions() & fs::perms::all, fs::perms::owner_all);
  DiskCache other(root_ / "a" / "cache");  // another process's view
  EXPECT_EQ(other.load(key_), payload_);
  EXPECT_TRUE(c.store(key_, bytes_of("v2")));  // replacing an entry is atomic too
  EXPECT_EQ(other.load(key_), bytes_of("v2"));
}

TEST_F(DiskCacheTest, EveryTruncationIsAMiss) {
  DiskCache c(root_);
  std::vector<std::byte> whole = DiskCache::encode(key_, payload_);
  for (size_t n = 0; n < whole.size(); ++n) {
    ASSERT_TRUE(c.store(key_, payload_));
    write_file(c.entry_path(key_), std::vector<std::byte>(whole.begin(), whole.begin() + static_cast<long>(n)));
    EXPECT_FALSE(c.load(key_)) << "truncated to " << n << " bytes";
    EXPECT_FALSE(fs::exists(c.entry_path(key_))) << "a damaged entry is removed";
  }
}

TEST_F(DiskCacheTest, ZeroFilledAndEveryBitFlipAreMisses) {
  DiskCache c(root_);
  std::vector<std::byte> whole = DiskCache::encode(key_, payload_);
  ASSERT_TRUE(c.store(key_, payload_));
  write_file(c.entry_path(key_), std::vector<std::byte>(whole.size(), std::byte{0}));
  EXPECT_FALSE(c.load(key_));
  for (size_t i = 0; i < whole.size(); ++i) {
    for (int bit : {0, 7}) {
      std::vector<std::byte> flipped = whole;
      flipped[i] ^= std::byte(1u << bit);
      write_file(c.entry_path(key_), flipped);
      EXPECT_FALSE(c.load(key_)) << "bit " << bit << " of byte " << i;
    }
  }
  write_file(c.entry_path(key_), whole);
  EXPECT_EQ(c.load(key_), payload_) << "the undamaged bytes still load";
}

TEST_F(DiskCacheTest, WrongVersionOtherKeyAndUnreadableEntriesAreMisses) {
  DiskCache c(root_);
  ASSERT_TRUE(c.store(key_, payload_));
  write_file(c.entry_path(key_), DiskCache::encode(key_, payload_, kDiskFormatVersion + 1));
  EXPECT_FALSE(c.load(key_)) << "another format version";
  // A valid entry of another key under this key's name (a hash collision).
  write_file(c.entry_path(key_), DiskCache::encode("another key", payload_));
  EXPECT_FALSE(c.load(key_));
  EXPECT_TRUE(fs::exists(c.entry_path(key_))) << "another key's entry is not damage";
  fs::remove(c.entry_path(key_));
  fs::create_directory(c.entry_path(key_));  // not a file at all
  EXPECT_FALSE(c.load(key_));
}

TEST_F(DiskCacheTest, AnUnwritableDirectoryTurnsCachingOff) {
  fs::create_directories(root_);
  write_file(root_ / "file", bytes_of("x"));
  DiskCache c(root_ / "file" / "cache");  // under a regular file: cannot exist
  EXPECT_FALSE(c.store(key_, payload_));
  EXPECT_FALSE(c.enabled());
  EXPECT_NE(c.disabled_reason().find("cannot create"), std::string::npos) << c.disabled_reason();
  EXPECT_FALSE(c.load(key_));
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(root_ / "ro");
    fs::permissions(root_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    DiskCache ro(root_ / "ro");
    EXPECT_FALSE(ro.store(key_, payload_));
    EXPECT_FALSE(ro.enabled());
  }
}

TEST_F(DiskCacheTest, AWriterKilledMidWriteLeavesNothingThatLoads) {
  DiskCache c(root_);
  std::vector<std::byte> big(8 << 20, std::byte{0x5a});
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DiskCache mine(root_);
    for (;;) mine.store(key_, big);  // killed somewhere in here
  }
  ::usleep(300000);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  // Either a whole entry from an earlier loop or none; never a partial one.
  std::optional<std::vector<std::byte>> got = c.load(key_);
  if (got) {
    EXPECT_EQ(*got, big);
  }
  // A temporary file cut short, as a kill mid-write leaves one, is never read.
  std::vector<std::byte> whole = DiskCache::encode("cut", payload_);
  write_file(c.entry_path("cut").string() + ".tmp." + std::to_string(child) + ".0.0",
             std::vector<std::byte>(whole.begin(), whole.begin() + static_cast<long>(whole.size() / 2)));
  EXPECT_FALSE(c.load("cut"));
  // The next listing (a fresh cache's first store) removes the temporaries
  // of the killed writer at once: its pid is gone (Note [Disk cache eviction]).
  int temps = 0;
  for (const auto& e : fs::directory_iterator(root_)) temps += DiskCache::is_temporary_file(e.path().filename().string());
  EXPECT_GE(temps, 1);
  ASSERT_TRUE(c.store("other", payload_));
  for (const auto& e : fs::directory_iterator(root_))
    EXPECT_FALSE(DiskCache::is_temporary_file(e.path().filename().string())) << e.path();
  std::cout << "killed writer left " << temps << " temporary file(s), removed by the next store\n";
}

TEST_F(DiskCacheTest, SixteenProcessesWritingAtOnceNeverCorruptAnEntry) {
  auto payload_of = [](int k) { return bytes_of(std::string(1000 + 37 * k, static_cast<char>('a' + k % 26))); };
  std::vector<pid_t> children;
  for (int p = 0; p < 16; ++p) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      DiskCache c(root_);
      int errors = 0;
      for (int round = 0; round < 20; ++round)
        for (int k : {0, 1, 2, 3, 100 + p}) {  // four keys shared by all, one of its own
          std::string key = "key " + std::to_string(k);
          if (!c.store(key, payload_of(k))) ++errors;
          std::optional<std::vector<std::byte>> got = c.load(key);
          if (!got || *got != payload_of(k)) ++errors;
        }
      ::_exit(errors == 0 ? 0 : 1);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process saw an error";
  }
  DiskCache c(root_);
  for (int k : {0, 1, 2, 3, 100, 115}) EXPECT_EQ(c.load("key " + std::to_string(k)), payload_of(k)) << k;
}

// The reproducers: a 1 TiB sparse entry threw std::bad_alloc, and 15
// junk entries of 1 GiB cost 142 s and 1 GB of memory, as load read a whole
// file before checking it. Now each costs a header's read.
TEST_F(DiskCacheTest, HugeAndJunkEntriesCostOneSmallRead) {
  DiskCache c(root_);
  auto sparse = [](const fs::path& p, const std::vector<std::byte>& head, uint64_t size) {
    write_file(p, head);
    fs::resize_file(p, size);  // a hole: no disk space, no time
  };
  auto t0 = std::chrono::steady_clock::now();
  sparse(c.entry_path(key_), DiskCache::encode(key_, payload_), uint64_t{1} << 40);
  EXPECT_FALSE(c.load(key_));
  EXPECT_FALSE(fs::exists(c.entry_path(key_))) << "past the bound: damage, removed";
  for (int k = 0; k < 15; ++k)
    sparse(c.entry_path("junk " + std::to_string(k)), bytes_of("junk, not an entry"), uint64_t{1} << 30);
  // A header that claims a well-formed 1 GiB entry of another key of the
  // same length: the key is read and compared, the payload never.
  std::string other = key_;
  other.back() = 'X';
  std::vector<std::byte> claims = DiskCache::encode(other, payload_);
  const uint64_t payload_len = (uint64_t{1} << 30) - 4096;  // under the bound
  std::memcpy(claims.data() + 24, &payload_len, 8);  // the payload length's place (Note [Disk cache entries])
  sparse(c.entry_path(key_), claims, 32 + other.size() + payload_len + 8);
  for (int k = 0; k < 15; ++k) EXPECT_FALSE(c.load("junk " + std::to_string(k))) << k;
  EXPECT_FALSE(c.load(key_));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 2.0) << "a 1 TiB and 16 1 GiB files took " << s << " s to refuse";
  std::cout << "a 1 TiB sparse entry and 16 junk 1 GiB entries: " << s * 1e3 << " ms\n";
  for (int k = 0; k < 15; ++k) EXPECT_FALSE(fs::exists(c.entry_path("junk " + std::to_string(k))));
  EXPECT_TRUE(c.enabled());
  ASSERT_TRUE(c.store(key_, payload_));
  EXPECT_EQ(c.load(key_), payload_);
}

// An entry's name taken by something that is no entry file fails that
// entry, never the cache: it turned caching off for the whole process.
TEST_F(DiskCacheTest, ABadEntryPathFailsThatEntryOnly) {
  DiskCache c(root_);
  fs::create_directories(c.entry_path(key_) / "inside");
  EXPECT_FALSE(c.load(key_));
  EXPECT_FALSE(c.store(key_, payload_)) << "cannot rename over a directory";
  EXPECT_TRUE(c.enabled()) << c.disabled_reason();
  ASSERT_TRUE(c.store("another key", payload_));
  EXPECT_EQ(c.load("another key"), payload_);
  // A FIFO under an entry's name neither blocks a load nor stops a store.
  ASSERT_EQ(::mkfifo(c.entry_path("fifo").c_str(), 0600), 0);
  EXPECT_FALSE(c.load("fifo"));
  ASSERT_TRUE(c.store("fifo", payload_));
  EXPECT_EQ(c.load("fifo"), payload_);
  for (const auto& e : fs::directory_iterator(root_))
    EXPECT_FALSE(DiskCache::is_temporary_file(e.path().filename().string())) << "a failed store cleans up";
  if (::geteuid() == 0) return;  // root reads any file
  ASSERT_TRUE(c.store("unreadable", payload_));
  ::chmod(c.entry_path("unreadable").c_str(), 0);
  EXPECT_FALSE(c.load("unreadable"));
  EXPECT_TRUE(c.enabled());
  ASSERT_TRUE(c.store("unreadable", payload_)) << "replaced by rename";
  EXPECT_EQ(c.load("unreadable"), payload_);
}

// One cache object shared by threads (as the process-wide cubin cache is):
// every load that hits gives the payload stored under its key.
TEST_F(DiskCacheTest, ThreadsShareOneCacheObject) {
  auto payload_of = [](int k) { return bytes_of(std::string(500 + 13 * k, static_cast<char>('a' + k % 26))); };
  const int64_t entry = static_cast<int64_t>(DiskCache::encode("key 10", payload_of(10)).size());
  DiskCache c(root_, 12 * entry);  // small: eviction runs while others load
  std::atomic<int> wrong{0}, hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        int k = (round * 7 + t) % 20;
        std::string key = "key " + std::to_string(k);
        if (round % 3 == 0) c.store(key, payload_of(k));
        if (std::optional<std::vector<std::byte>> got = c.load(key)) {
          ++hits;
          if (*got != payload_of(k)) ++wrong;
        }
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(hits.load(), 0);
  EXPECT_TRUE(c.enabled()) << c.disabled_reason();
}

}  // namespace
}  // namespace braze
