// What the disk cache's tests share: a fresh directory per test, entry
// files written by hand, and a second user to plant files as.
#pragma once

#include <gtest/gtest.h>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/disk_cache.h"

namespace braze::testing {

namespace fs = std::filesystem;

inline std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

// Writes `b` to `p` with mode 0600, as the cache's own files have, whatever
// the umask: a file others could write is refused for that alone.
inline void write_file(const fs::path& p, const std::vector<std::byte>& b) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  ::chmod(p.c_str(), 0600);
}

// A user other than this one, which root can act as (Note [Trusted cache
// directory] is about files another user planted): `nobody`, or uid 65534
// where no such name exists. None when not root: then only root's own files
// can stand for another user's.
struct OtherUser {
  uid_t uid;
  gid_t gid;
};
inline std::optional<OtherUser> other_user() {
  if (::geteuid() != 0) return std::nullopt;
  if (const passwd* p = ::getpwnam("nobody"); p && p->pw_uid != 0) return OtherUser{p->pw_uid, p->pw_gid};
  return OtherUser{65534, 65534};
}

// Runs `fn` as `user` in a child process: true when it ran and returned true.
inline bool as_user(const OtherUser& user, const std::function<bool()>& fn) {
  pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    bool ok = ::setgroups(0, nullptr) == 0 && ::setgid(user.gid) == 0 && ::setuid(user.uid) == 0 && fn();
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A pid no process has: a child's, after it has exited and been reaped.
inline pid_t dead_pid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("braze_disk_cache_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    ::chmod(root_.c_str(), 0755);  // the second user passes through it
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

}  // namespace braze::testing
