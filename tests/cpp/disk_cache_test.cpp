// The disk kernel cache (Note [Disk cache entries]): every kind of damage is
// a miss, never a wrong payload or a crash; unwritable directories turn
// caching off; concurrent writers never corrupt an entry; size is bounded.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "runtime/disk_cache.h"

namespace braze {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

void write_file(const fs::path& p, const std::vector<std::byte>& b) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(b.data()),
                                                               static_cast<std::streamsize>(b.size()));
}

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("braze_disk_cache_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_, ec);
  }
  fs::path root_;
  const std::string key_ = "source=abc nvrtc=13.0 opts=--gpu-architecture=sm_90 arch=90 codegen=1 headers=ff";
  const std::vector<std::byte> payload_ = bytes_of("\x7f" "ELF cubin bytes of a kernel");
};

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
  write_file(c.entry_path("cut").string() + ".tmp.999.0.0",
             std::vector<std::byte>(whole.begin(), whole.begin() + static_cast<long>(whole.size() / 2)));
  EXPECT_FALSE(c.load("cut"));
  // The next eviction removes stale temporary files.
  int temps = 0;
  for (const auto& e : fs::directory_iterator(root_))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) {
      ++temps;
      fs::last_write_time(e.path(), fs::file_time_type::clock::now() - std::chrono::hours(2));
    }
  ASSERT_TRUE(c.store("other", payload_));
  for (const auto& e : fs::directory_iterator(root_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  std::cout << "killed writer left " << temps << " temporary file(s)\n";
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

TEST_F(DiskCacheTest, SizeIsBoundedOldestEntriesGoFirst) {
  const int64_t entry = static_cast<int64_t>(DiskCache::encode("key 0", std::vector<std::byte>(1000)).size());
  DiskCache c(root_, 3 * entry);
  for (int k = 0; k < 10; ++k) {
    ASSERT_TRUE(c.store("key " + std::to_string(k), std::vector<std::byte>(1000, std::byte(k))));
    // Distinct times, oldest first, whatever the file system's resolution.
    fs::last_write_time(c.entry_path("key " + std::to_string(k)),
                        fs::file_time_type::clock::now() - std::chrono::minutes(100 - k));
  }
  int64_t total = 0;
  for (const auto& e : fs::directory_iterator(root_)) total += static_cast<int64_t>(e.file_size());
  EXPECT_LE(total, 3 * entry);
  EXPECT_TRUE(c.load("key 9"));
  EXPECT_FALSE(c.load("key 0"));
}

}  // namespace
}  // namespace braze
