#include "runtime/disk_cache_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace braze::disk_cache {

namespace {

namespace fs = std::filesystem;

std::string uid_text(uid_t uid) { return "uid " + std::to_string(uid); }

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The first symbolic link on the way to `dir` that another user owns, as
// the reason to refuse it, or "". Root's links are trusted as root's
// directories are: whoever is root can change anything anyway.
std::string foreign_link(const fs::path& dir) {
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  if (ec) return "";
  fs::path prefix;
  for (const fs::path& part : abs) {
    prefix /= part;
    struct stat st;
    if (::lstat(prefix.c_str(), &st) != 0) return "";  // the rest does not exist yet
    if (S_ISLNK(st.st_mode) && st.st_uid != ::geteuid() && st.st_uid != 0)
      return prefix.string() + " is a symbolic link owned by " + uid_text(st.st_uid) + ", not by you (" +
             uid_text(::geteuid()) + ")";
  }
  return "";
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string untrusted(const struct stat& st, std::string_view what) {
  if (st.st_uid != ::geteuid())
    return std::string(what) + " is owned by " + uid_text(st.st_uid) + ", not by you (" + uid_text(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string(what) + " is writable by other users (mode " + mode_text(st.st_mode) + ")";
  return "";
}

OpenedDir open_dir(const fs::path& dir, bool create) {
  OpenedDir r;
  auto refuse = [&](std::string why) {
    r.refused = true;
    r.problem = std::move(why);
    return std::move(r);
  };
  if (std::string link = foreign_link(dir); !link.empty()) return refuse(link);
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  r.fd = Fd(::open(dir.c_str(), kFlags));
  if (!r.fd && (errno == ENOENT || errno == ENOTDIR)) {
    if (!create) {
      r.absent = errno == ENOENT;
      if (!r.absent) r.problem = dir.string() + " is not a directory";
      return r;
    }
    // Parents as the user's umask makes them; the cache directory itself 0700.
    std::error_code ec;
    if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      r.problem = "cannot create " + dir.string() + ": " + std::strerror(errno);
      return r;
    }
    // Created (or made by another process meanwhile): a link may have
    // appeared on the way since the first look.
    if (std::string link = foreign_link(dir); !link.empty()) return refuse(link);
    r.fd = Fd(::open(dir.c_str(), kFlags));
  }
  if (!r.fd) {
    r.problem = errno == ENOTDIR ? dir.string() + " is not a directory"
                                 : "cannot read " + dir.string() + ": " + std::strerror(errno);
    return r;
  }
  struct stat st;
  if (::fstat(r.fd.get(), &st) != 0) {
    r.problem = "cannot read " + dir.string() + ": " + std::strerror(errno);
    r.fd = Fd();
    return r;
  }
  if (std::string why = untrusted(st, dir.string()); !why.empty()) {
    r.fd = Fd();
    return refuse(why);
  }
  return r;
}

bool is_entry_name(std::string_view name) {
  return name.size() == 36 && name.substr(0, 32).find_first_not_of("0123456789abcdef") == std::string_view::npos &&
         name.substr(32) == ".bzk";
}

bool is_temporary_name(std::string_view name) {
  if (name.size() < 36 + 5 || !is_entry_name(name.substr(0, 36)) || name.substr(36, 5) != ".tmp.") return false;
  std::string_view rest = name.substr(41);  // <pid>.<thread>.<counter>
  for (int part = 0; part < 3; ++part) {
    size_t dot = part < 2 ? rest.find('.') : rest.size();
    if (dot == std::string_view::npos || !all_digits(rest.substr(0, dot))) return false;
    rest = part < 2 ? rest.substr(dot + 1) : std::string_view();
  }
  return true;
}

pid_t temporary_writer(std::string_view name) {
  std::string_view rest = name.substr(41);
  long long pid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  return ec == std::errc() && pid > 0 && pid <= INT32_MAX ? static_cast<pid_t>(pid) : 0;
}

bool list_files(int dir_fd, std::vector<File>& files) {
  int fd = ::dup(dir_fd);  // closedir closes it; the caller keeps its own
  if (fd < 0) return false;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    int err = errno;
    ::close(fd);
    errno = err;
    return false;
  }
  ::rewinddir(d);  // a dup shares the offset of an earlier listing
  const uid_t me = ::geteuid();
  for (;;) {
    errno = 0;  // readdir's end and its failure differ only in errno
    const dirent* e = ::readdir(d);
    if (!e) break;
    std::string_view name = e->d_name;
    // The name first: a directory full of other files costs no stat each.
    bool temporary = is_temporary_name(name);
    if (!temporary && !is_entry_name(name)) continue;
    struct stat st;
    if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_uid != me)
      continue;
    files.push_back({std::string(name), static_cast<int64_t>(st.st_size),
                     int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec, temporary});
  }
  int err = errno;
  ::closedir(d);
  errno = err;
  return err == 0;
}

bool is_stale_temporary(const File& f, int64_t now_ns) {
  constexpr int64_t kHour = int64_t{3600} * 1'000'000'000;
  if (now_ns - f.mtime_ns > kHour) return true;  // a live writer finishes in far less
  pid_t pid = temporary_writer(f.name);
  // ESRCH: no such process. Another user's process (EPERM) or this one is alive.
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace braze::disk_cache
