// Note [Trusted cache directory]: a cache entry is code this process will
// run, so nothing another user could have written is ever loaded. The issue's
// reproducer: with BRAZE_CACHE_DIR in a folder others can write, an entry
// another user planted there was loaded (1 of 1). Here a second user (root
// acting as `nobody` in a child process) plants entries for real.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "runtime/disk_cache.h"
#include "tests/cpp/disk_cache_fixture.h"

namespace braze {
namespace {

namespace fs = std::filesystem;
using testing::as_user;
using testing::bytes_of;
using testing::other_user;
using testing::write_file;
using DiskCacheTrust = testing::DiskCacheTest;

const std::vector<std::byte> kEvil = bytes_of("\x7f" "ELF code another user wants run");

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(DiskCacheTrust, AFolderOthersCanWriteIsRefusedWithOneWarning) {
  for (mode_t mode : {01777, 0777, 0770, 0720}) {
    char name[16];
    std::snprintf(name, sizeof name, "mode%o", mode);
    fs::path dir = root_ / name;
    fs::create_directories(dir);
    ::chmod(dir.c_str(), mode);
    write_file(DiskCache(dir).entry_path(key_), DiskCache::encode(key_, kEvil));  // planted while it was open
    DiskCache c(dir);
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(c.load(key_)) << std::oct << mode;
    EXPECT_FALSE(c.store(key_, payload_));
    EXPECT_FALSE(c.load(key_));
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_FALSE(c.enabled());
    EXPECT_TRUE(contains(c.disabled_reason(), "is writable by other users")) << c.disabled_reason();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one warning line, however often it is asked:\n" << err;
    EXPECT_TRUE(contains(err, "braze: disk cache off: " + dir.string())) << err;
    EXPECT_FALSE(c.check()) << "braze cache and braze doctor see the same reason";
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1)
        << "nothing written into a refused folder";
  }
  // Closed again, the folder is used.
  ::chmod((root_ / "mode777").c_str(), 0700);
  DiskCache closed(root_ / "mode777");
  EXPECT_TRUE(closed.store(key_, payload_));
  EXPECT_EQ(closed.load(key_), payload_);
}

// The folder itself belongs to another user: refused though root could
// read and write it, and nothing is written into it.
TEST_F(DiskCacheTrust, ASecondUsersFolderIsRefused) {
  std::optional<testing::OtherUser> other = other_user();
  if (!other) {
    // Without a second user to plant files, a folder root owns stands for one.
    struct stat root_dir;
    if (::stat("/", &root_dir) == 0 && root_dir.st_uid != ::geteuid()) {
      DiskCache c("/");
      EXPECT_FALSE(c.check());
      EXPECT_TRUE(contains(c.disabled_reason(), "/ is owned by uid 0, not by you")) << c.disabled_reason();
    }
    GTEST_SKIP() << "not root: cannot act as a second user to plant an entry";
  }
  fs::path shared = root_ / "shared";  // as /tmp is: anyone may create in it
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);
  fs::path dir = shared / "cache";
  ASSERT_TRUE(as_user(*other, [&] { return DiskCache(dir).store(key_, kEvil); })) << "the second user plants";
  struct stat st;
  ASSERT_EQ(::stat(DiskCache(dir).entry_path(key_).c_str(), &st), 0);
  ASSERT_EQ(st.st_uid, other->uid);

  DiskCache c(dir);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(c.load(key_)) << "another user's entry was loaded";
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(c.enabled());
  EXPECT_TRUE(contains(c.disabled_reason(), "is owned by uid " + std::to_string(other->uid) + ", not by you"))
      << c.disabled_reason();
  EXPECT_TRUE(contains(err, c.disabled_reason())) << err;
  EXPECT_FALSE(c.store("mine", payload_));
  EXPECT_FALSE(fs::exists(c.entry_path("mine")));
}

// Our own folder, 0700, holding an entry another user wrote while the
// folder was open to them: that entry is a miss, never loaded and never
// removed, and the next store replaces it.
TEST_F(DiskCacheTrust, ASecondUsersEntryInOurFolderIsNeverLoaded) {
  std::optional<testing::OtherUser> other = other_user();
  if (!other) GTEST_SKIP() << "not root: cannot act as a second user";
  fs::path dir = root_ / "ours";
  ASSERT_TRUE(DiskCache(dir).store(key_, payload_));
  ::chmod(dir.c_str(), 0777);
  ASSERT_TRUE(as_user(*other, [&] {
    // Rename over ours, as an attacker would: a whole, valid entry.
    std::string tmp = (dir / "planted").string();
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    std::vector<std::byte> b = DiskCache::encode(key_, kEvil);
    bool ok = fd >= 0 && ::write(fd, b.data(), b.size()) == static_cast<ssize_t>(b.size());
    return ::close(fd) == 0 && ok && ::rename(tmp.c_str(), DiskCache(dir).entry_path(key_).c_str()) == 0;
  }));
  ::chmod(dir.c_str(), 0700);

  DiskCache c(dir);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(c.load(key_)) << "another user's entry was loaded";
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "not loading " + c.entry_path(key_).string() + " is owned by uid")) << err;
  EXPECT_TRUE(c.enabled()) << "one entry, not the folder: " << c.disabled_reason();
  EXPECT_TRUE(fs::exists(c.entry_path(key_)));
  ASSERT_TRUE(c.store(key_, payload_));
  EXPECT_EQ(c.load(key_), payload_);
}

// A symbolic link owned by another user decides where the cache goes, so
// it is refused even when it points at our own folder.
TEST_F(DiskCacheTrust, ALinkOwnedBySomeoneElseIsRefused) {
  std::optional<testing::OtherUser> other = other_user();
  if (!other) GTEST_SKIP() << "not root: cannot act as a second user";
  fs::path ours = root_ / "ours";
  ASSERT_TRUE(DiskCache(ours).store(key_, payload_));
  fs::path shared = root_ / "shared";
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);
  ASSERT_TRUE(as_user(*other, [&] { return ::symlink(ours.c_str(), (shared / "link").c_str()) == 0; }));
  for (const fs::path& dir : {shared / "link", shared / "link" / "sub"}) {
    DiskCache c(dir);
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(c.load(key_));
    EXPECT_FALSE(c.store(key_, payload_));
    ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(contains(c.disabled_reason(), (shared / "link").string() + " is a symbolic link owned by uid"))
        << c.disabled_reason();
  }
  EXPECT_FALSE(fs::exists(ours / "sub")) << "nothing created through the link";
  // Our own link to our own folder is fine.
  fs::create_directory_symlink(ours, root_ / "my_link");
  EXPECT_EQ(DiskCache(root_ / "my_link").load(key_), payload_);
}

// Without a second user: an entry others can write, a link in place of an
// entry, and (as root) an entry handed to another uid are misses, the
// folder still used.
TEST_F(DiskCacheTrust, EntriesOthersCouldHaveWrittenAreMisses) {
  DiskCache c(root_ / "cache");
  ASSERT_TRUE(c.store(key_, payload_));
  ::testing::internal::CaptureStderr();
  for (mode_t mode : {0666, 0620, 0602}) {
    ::chmod(c.entry_path(key_).c_str(), mode);
    EXPECT_FALSE(c.load(key_)) << std::oct << mode;
  }
  ::chmod(c.entry_path(key_).c_str(), 0600);
  EXPECT_EQ(c.load(key_), payload_);

  // A link under an entry's name is not followed, even to a good entry.
  ASSERT_TRUE(c.store("target", payload_));
  fs::create_symlink(c.entry_path("target"), c.entry_path("link"));
  write_file(c.entry_path("target"), DiskCache::encode("link", payload_));
  EXPECT_FALSE(c.load("link"));

  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(c.entry_path(key_).c_str(), 65534, 65534), 0);
    EXPECT_FALSE(c.load(key_)) << "an entry another uid owns";
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(c.enabled()) << c.disabled_reason();
  ASSERT_TRUE(c.store(key_, payload_));
  EXPECT_EQ(c.load(key_), payload_);
}

}  // namespace
}  // namespace braze
