// A cache of compiled kernels on disk (DESIGN.md section 5), shared by the
// processes of one user: an entry is a key and the bytes compiled for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/disk_cache_dir.h"

namespace braze {

// Note [Disk cache entries]
// An entry can be read while another process writes it, be cut short by a
// crash or a full disk, be damaged on disk, come from another braze, or be
// planted by another user. None of that may ever give a wrong kernel or run
// anyone else's code, so:
// - the directory and every entry are used only when this user alone can
//   write them (Note [Trusted cache directory], runtime/disk_cache_dir.h);
// - the key is the full text of everything the bytes depend on (for CUDA:
//   the source's hash, NVRTC's version, the options, the architecture,
//   braze's codegen version, the embedded headers' hash); the file name is a
//   hash of it, and the entry stores the whole key, compared on load, so a
//   hash collision is a miss;
// - a file is: magic "BRAZEKC\0", format version (u32), zero (u32), key
//   length and payload length (u64 each), the key, the payload, and an
//   XXH3-64 checksum of everything before it. `load` reads the header first
//   and checks it against the file's size (which must not pass the cache's
//   bound) and the key's length, then the key, and only then the payload, so
//   a huge or junk file costs one small read however large it claims to be.
//   A wrong magic, version, size or checksum, or a read error, is a miss and
//   the damaged file is removed so the recompiled entry replaces it;
// - an entry is written to a temporary file of its own (O_EXCL, mode 0600),
//   flushed (fsync), and renamed into place: readers see a whole entry or
//   none, and a process killed while writing leaves only a temporary file,
//   which no load ever opens (eviction removes it: Note [Disk cache
//   eviction]);
// - the directory is created with mode 0700 (kernels are code the process
//   will run). When it cannot be created, read or written as a whole
//   (read-only, full, not a directory) or is refused, caching turns off for
//   this cache object with the reason kept (and a warning line), and
//   compiling goes on as if there were no cache. A failure that concerns one
//   entry (its name taken by a directory, an unreadable file) is a miss for
//   that entry only.
//
// Note [Disk cache eviction]
// The total size of braze's files (entries and writers' temporaries) is
// bounded. Listing the directory costs time in proportion to everything in
// it, so a store does not list it: the cache keeps an estimate, the bytes
// found by the last listing plus the bytes this object stored since, and
// lists the directory only at its first store, when the estimate passes the
// bound, and after every kStoresBetweenListings stores (other processes store
// too, unseen by the estimate; each can overshoot the bound by at most that
// many of its own stores between listings). A listing
// - removes writers' temporaries whose writer is gone: the temporary's name
//   carries its writer's pid, and no process has that pid any more (or the
//   file is an hour old, for a pid reused since). A writer in another pid
//   namespace sharing the folder may look gone: its rename then fails, a
//   miss for that one entry, never a damaged one;
// - then, past the bound, removes the least recently used entries (file
//   modification time; a hit touches it) until the total is under three
//   quarters of the bound, so the next listing is some stores away.
// Only braze's files are touched, and only by their strict names (an entry
// is `<32 hex digits>.bzk`, a temporary that followed by
// `.tmp.<pid>.<thread>.<counter>`) and owner: other files, even ones ending
// in `.bzk`, are never counted or removed. `braze cache clear` removes the
// same set.
inline constexpr uint32_t kDiskFormatVersion = 1;
inline constexpr int64_t kDefaultDiskCacheBytes = int64_t{1} << 30;
inline constexpr int kStoresBetweenListings = 100;

// Thread-safe: a cache object may be shared by any number of threads.
class DiskCache {
 public:
  explicit DiskCache(std::filesystem::path dir, int64_t max_bytes = kDefaultDiskCacheBytes);
  DiskCache(DiskCache&& other) noexcept;  // not while another thread uses `other`
  DiskCache& operator=(DiskCache&&) = delete;

  // $BRAZE_CACHE_DIR, else $XDG_CACHE_HOME/braze, else ~/.cache/braze.
  static std::filesystem::path default_dir();

  // The payload stored under `key`, or nullopt (absent, damaged or refused).
  std::optional<std::vector<std::byte>> load(std::string_view key);
  // Publishes the entry; false when caching is off or the write failed.
  bool store(std::string_view key, std::span<const std::byte> payload);

  // Whether the directory can be used, as load and store would find it,
  // without creating it or warning: a refusal or error turns caching off
  // with its reason, as it would there. For `braze cache` and `braze doctor`.
  bool check();

  bool enabled() const;
  std::string disabled_reason() const;
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(std::string_view key) const;
  int64_t max_bytes() const { return max_bytes_; }

  // Which files in a cache directory are braze's (Note [Disk cache
  // eviction]): entries and the temporary files of writers.
  static bool is_entry_file(std::string_view file_name);
  static bool is_temporary_file(std::string_view file_name);

  // braze's files in the directory (none when it is absent, refused or
  // unreadable: check() tells which).
  struct Usage {
    int64_t entries = 0, temporaries = 0, bytes = 0;
  };
  Usage usage();
  // Removes braze's files from the directory and says what went; throws
  // std::runtime_error naming a file that could not be removed.
  Usage clear();
  // How many times this object listed the directory (Note [Disk cache
  // eviction]: stores must not list it each time).
  int64_t listings() const;

  // The bytes an entry file holds (tests write damaged ones with it).
  static std::vector<std::byte> encode(std::string_view key, std::span<const std::byte> payload,
                                       uint32_t version = kDiskFormatVersion);

 private:
  // The directory opened for use (its fd valid), or not: absent (when
  // `create` is off), or with caching turned off for the reason (and a
  // warning line when `warn`).
  disk_cache::OpenedDir open_dir(bool create, bool warn);
  void turn_off(const std::string& reason, bool warn);
  void after_store(int dir_fd, int64_t bytes);
  void evict(int dir_fd);

  std::filesystem::path dir_;
  int64_t max_bytes_;
  mutable std::mutex mutex_;  // guards what follows
  std::string disabled_reason_;
  bool listed_ = false;           // the estimate comes from a listing
  int64_t estimate_ = 0;          // bytes of braze's files, as far as this object knows
  int stores_since_listing_ = 0;
  int64_t listings_ = 0;
  std::mutex evict_mutex_;  // one listing at a time; other threads skip theirs
};

}  // namespace braze
