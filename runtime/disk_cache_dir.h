// The directory of a disk cache (runtime/disk_cache.h) as the cache uses it:
// opened only when this user alone can write it, and listed by the strict
// names of braze's files. Internal to DiskCache and its tests.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace braze::disk_cache {

// Note [Trusted cache directory]
// A cache of compiled kernels is code this process will run, so whoever can
// write an entry can run code as this user. An entry is used only when this
// user alone could have written it:
// - the directory is opened (never through a symbolic link owned by another
//   user, anywhere on its path: whoever owns a link decides where it points)
//   and the opened directory's fstat must say: a directory, owned by this
//   user (the effective uid), not writable by group or others. Anything else
//   refuses the directory: one warning line, caching off for that cache,
//   the reason kept for `braze cache` and `braze doctor`. Root is no
//   exception: root using a directory a user owns would run that user's code;
// - every later access goes through the opened directory's descriptor
//   (openat, renameat, unlinkat), so the directory checked is the directory
//   used even if a name on its path is swapped afterwards (no
//   check-then-use race on the path);
// - an entry is opened with O_NOFOLLOW (a link in place of an entry is never
//   followed) and O_NONBLOCK (a FIFO there cannot block the process), and
//   the opened file's fstat must say: a regular file, owned by this user,
//   not writable by group or others. Anything else is a miss for that entry
//   (with a warning line), never loaded and never removed: the next store
//   renames a good entry over it.
// Files of other users in a directory that passes can only have been put
// there by root or while the directory was open to them; they are never
// loaded, counted or removed.

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

struct OpenedDir {
  Fd fd;                // valid when the directory can be used
  bool absent = false;  // it does not exist (and was not to be created)
  bool refused = false; // `problem` is about trust (owner, mode, a link), not an error
  std::string problem;  // why it cannot be used; empty when fd is valid
};

// Opens `dir` as Note [Trusted cache directory] says, creating it (mode
// 0700, its parents as the umask makes them) when `create` is set.
OpenedDir open_dir(const std::filesystem::path& dir, bool create);

// Why an opened file or directory's fstat makes it untrusted, or "".
std::string untrusted(const struct stat& st, std::string_view what);

// braze's file names (Note [Disk cache eviction]): an entry is
// `<32 lowercase hex digits>.bzk`; a writer's temporary is an entry's name
// followed by `.tmp.<pid>.<thread>.<counter>`.
bool is_entry_name(std::string_view name);
bool is_temporary_name(std::string_view name);
// The pid in a temporary's name.
pid_t temporary_writer(std::string_view name);

// braze's files in an opened cache directory: regular files of this user
// with braze's names, nothing else.
struct File {
  std::string name;
  int64_t bytes = 0;
  int64_t mtime_ns = 0;  // modification time: a hit touches an entry
  bool temporary = false;
};
// False (with errno set) when the directory cannot be read.
bool list_files(int dir_fd, std::vector<File>& files);

// Whether a temporary was left by a writer that is gone (Note [Disk cache
// eviction]): its pid no longer exists, or it is older than an hour.
bool is_stale_temporary(const File& f, int64_t now_ns);

}  // namespace braze::disk_cache
