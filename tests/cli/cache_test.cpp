// `braze cache` and `braze cache clear` over a temporary BRAZE_CACHE_DIR
// filled through the real disk cache (runtime/disk_cache.h): the counts and
// bytes it reports, a clear that leaves a user's own files alone, and bad
// cache paths giving one line and exit 1.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/disk_cache.h"
#include "tests/cli/run_cli.h"

namespace braze {
namespace {

namespace fs = std::filesystem;

using Result = testing::CliResult;
using testing::cli;
using testing::one_line;

std::vector<std::byte> bytes(size_t n, uint8_t fill) { return std::vector<std::byte>(n, std::byte{fill}); }

class CacheCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("braze_cache_cli_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    if (const char* old = std::getenv("BRAZE_CACHE_DIR")) saved_ = old;
    point_at(root_ / "cache");
  }
  void TearDown() override {
    if (saved_) ::setenv("BRAZE_CACHE_DIR", saved_->c_str(), 1);
    else ::unsetenv("BRAZE_CACHE_DIR");
    ::chmod(root_.c_str(), 0700);
    fs::remove_all(root_);
  }
  void point_at(const fs::path& dir) { ::setenv("BRAZE_CACHE_DIR", dir.c_str(), 1); }
  nlohmann::json disk() {
    Result r = cli({"cache", "--format", "json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["disk"];
  }
  fs::path root_;
  std::optional<std::string> saved_;
};

TEST_F(CacheCliTest, ReportsADirectoryNotCreatedYet) {
  nlohmann::json d = disk();
  EXPECT_EQ(d["directory"], (root_ / "cache").string());
  EXPECT_EQ(d["from"], "BRAZE_CACHE_DIR");
  EXPECT_FALSE(d["exists"]);
  EXPECT_EQ(d["entries"], 0);
  EXPECT_EQ(d["max_bytes"], kDefaultDiskCacheBytes);
  Result r = cli({"cache"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("not created yet"), std::string::npos) << r.out;
}

TEST_F(CacheCliTest, CountsEntriesWrittenByTheDiskCacheThenClearsOnlyThem) {
  DiskCache c(root_ / "cache");
  ASSERT_TRUE(c.store("kernel one", bytes(100, 1))) << c.disabled_reason();
  ASSERT_TRUE(c.store("kernel two", bytes(300, 2))) << c.disabled_reason();
  int64_t on_disk = static_cast<int64_t>(fs::file_size(c.entry_path("kernel one")) +
                                         fs::file_size(c.entry_path("kernel two")));
  // A user's files beside the entries (50 merely ending in .bzk, as eviction
  // used to delete), and a writer's leftover temporary.
  std::ofstream(root_ / "cache" / "notes.txt") << "mine";
  for (int i = 0; i < 50; ++i) std::ofstream(root_ / "cache" / ("notes " + std::to_string(i) + ".bzk")) << "mine";
  std::ofstream(c.entry_path("kernel three").string() + ".tmp.123.456.0") << "half";

  nlohmann::json d = disk();
  EXPECT_TRUE(d["exists"]);
  EXPECT_TRUE(d["healthy"]);
  EXPECT_EQ(d["entries"], 2);
  EXPECT_EQ(d["temporaries"], 1);
  EXPECT_EQ(d["bytes"], on_disk + 4);
  Result text = cli({"cache"});
  EXPECT_NE(text.out.find("2 entries, " + std::to_string(on_disk + 4) + " bytes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("healthy"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("memory (this process)"), std::string::npos) << text.out;

  Result cleared = cli({"cache", "clear", "--format", "json"});
  ASSERT_EQ(cleared.code, 0) << cleared.err;
  nlohmann::json j = nlohmann::json::parse(cleared.out);
  EXPECT_EQ(j["removed"], 3);
  EXPECT_EQ(j["bytes"], on_disk + 4);
  EXPECT_TRUE(fs::exists(root_ / "cache" / "notes.txt"));
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(fs::exists(root_ / "cache" / ("notes " + std::to_string(i) + ".bzk"))) << i;
  EXPECT_FALSE(fs::exists(c.entry_path("kernel one")));
  EXPECT_FALSE(c.load("kernel two").has_value());
  EXPECT_EQ(disk()["entries"], 0);

  Result again = cli({"cache", "clear"});
  EXPECT_EQ(again.code, 0);
  EXPECT_EQ(again.out.rfind("removed 0 file(s), 0 bytes", 0), 0u) << again.out;
}

TEST_F(CacheCliTest, APathThatIsAFileIsAOneLineError) {
  std::ofstream(root_ / "plain") << "x";
  point_at(root_ / "plain");
  for (std::vector<std::string> args : {std::vector<std::string>{"cache"}, {"cache", "clear"}}) {
    Result r = cli(args);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::exists(root_ / "plain"));
}

TEST_F(CacheCliTest, AnUnreadableDirectoryIsAOneLineError) {
  // Below a file: not a directory anywhere on the way.
  std::ofstream(root_ / "plain") << "x";
  point_at(root_ / "plain" / "cache");
  Result r = cli({"cache"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("cannot inspect"), std::string::npos) << r.err;

  if (::geteuid() == 0) GTEST_SKIP() << "root reads any directory";
  fs::create_directories(root_ / "locked");
  ::chmod((root_ / "locked").c_str(), 0);
  point_at(root_ / "locked");
  Result locked = cli({"cache", "clear"});
  ::chmod((root_ / "locked").c_str(), 0700);
  EXPECT_EQ(locked.code, 1);
  EXPECT_TRUE(one_line(locked.err)) << locked.err;
  EXPECT_NE(locked.err.find("cannot read"), std::string::npos) << locked.err;
}

// A folder others can write is refused (Note [Trusted cache directory]):
// `braze cache` and `braze doctor` say why, `braze cache clear` leaves it.
TEST_F(CacheCliTest, ARefusedDirectoryIsShownWithItsReasonAndNotCleared) {
  DiskCache c(root_ / "cache");
  ASSERT_TRUE(c.store("kernel one", bytes(100, 1))) << c.disabled_reason();
  ::chmod((root_ / "cache").c_str(), 0777);

  nlohmann::json d = disk();
  EXPECT_FALSE(d["healthy"]);
  ASSERT_TRUE(d["not_used_because"].is_string()) << d;
  EXPECT_NE(d["not_used_because"].get<std::string>().find("is writable by other users (mode 0777)"), std::string::npos)
      << d;
  EXPECT_EQ(d["entries"], 0) << "nothing in a refused folder is counted as the cache's";
  Result text = cli({"cache"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("not used: " + (root_ / "cache").string() + " is writable by other users"),
            std::string::npos)
      << text.out;

  Result doctor = cli({"doctor", "--format", "json"});
  ASSERT_EQ(doctor.code, 0) << doctor.err;
  EXPECT_EQ(nlohmann::json::parse(doctor.out)["cache"]["not_used_because"], d["not_used_because"]);
  Result doctor_text = cli({"doctor"});
  EXPECT_NE(doctor_text.out.find("not used: " + (root_ / "cache").string() + " is writable"), std::string::npos)
      << doctor_text.out;

  Result cleared = cli({"cache", "clear"});
  EXPECT_EQ(cleared.code, 1);
  EXPECT_TRUE(one_line(cleared.err)) << cleared.err;
  EXPECT_NE(cleared.err.find("cache clear: " + (root_ / "cache").string() + " is writable by other users"),
            std::string::npos)
      << cleared.err;
  EXPECT_TRUE(fs::exists(c.entry_path("kernel one")));

  ::chmod((root_ / "cache").c_str(), 0700);
  EXPECT_TRUE(disk()["healthy"]);
  EXPECT_EQ(disk()["entries"], 1);
}

TEST_F(CacheCliTest, UnknownCacheActionIsAUsageError) {
  Result r = cli({"cache", "purge"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
}

}  // namespace
}  // namespace braze
