// A cache of compiled kernels on disk (DESIGN.md section 5), shared by the
// processes of one user: an entry is a key and the bytes compiled for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace braze {

// Note [Disk cache entries]
// An entry can be read while another process writes it, be cut short by a
// crash or a full disk, be damaged on disk, or come from another braze. None
// of that may ever give a wrong kernel, so:
// - the key is the full text of everything the bytes depend on (for CUDA:
//   the source's hash, NVRTC's version, the options, the architecture,
//   braze's codegen version, the embedded headers' hash); the file name is a
//   hash of it, and the entry stores the whole key, compared on load, so a
//   hash collision is a miss;
// - a file is: magic "BRAZEKC\0", format version (u32), zero (u32), key
//   length and payload length (u64 each), the key, the payload, and an
//   XXH3-64 checksum of everything before it. Lengths must add up to the
//   file's size exactly; anything else, a wrong magic, version, key or
//   checksum, or a read error, is a miss, and the damaged file is removed
//   so the recompiled entry replaces it;
// - an entry is written to a temporary file of its own (O_EXCL, mode 0600),
//   flushed (fsync), and renamed into place: readers see a whole entry or
//   none, and a process killed while writing leaves only a temporary file,
//   which no load ever opens (and the next eviction removes);
// - the directory is created with mode 0700 (kernels are code the process
//   will run); when it cannot be created or written (read-only, full, not a
//   directory), caching turns off for this cache object with the reason
//   kept, and compiling goes on as if there were no cache;
// - the total size is bounded: after a store, the least recently used
//   entries (file modification time; a hit touches it) are removed until
//   the directory is under the bound.
inline constexpr uint32_t kDiskFormatVersion = 1;
inline constexpr int64_t kDefaultDiskCacheBytes = int64_t{1} << 30;

class DiskCache {
 public:
  explicit DiskCache(std::filesystem::path dir, int64_t max_bytes = kDefaultDiskCacheBytes);

  // $BRAZE_CACHE_DIR, else $XDG_CACHE_HOME/braze, else ~/.cache/braze.
  static std::filesystem::path default_dir();

  // The payload stored under `key`, or nullopt (absent or damaged).
  std::optional<std::vector<std::byte>> load(std::string_view key);
  // Publishes the entry; false when caching is off or the write failed.
  bool store(std::string_view key, std::span<const std::byte> payload);

  bool enabled() const { return disabled_reason_.empty(); }
  const std::string& disabled_reason() const { return disabled_reason_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(std::string_view key) const;

  // Which files in a cache directory are braze's: entries (`<hash>.bzk`)
  // and the temporary files of writers (`<entry>.tmp.<pid>...`). Eviction and
  // `braze cache clear` touch only these, never another file a user keeps
  // beside them.
  static bool is_entry_file(std::string_view file_name);
  static bool is_temporary_file(std::string_view file_name);
  int64_t max_bytes() const { return max_bytes_; }

  // The bytes an entry file holds (tests write damaged ones with it).
  static std::vector<std::byte> encode(std::string_view key, std::span<const std::byte> payload,
                                       uint32_t version = kDiskFormatVersion);

 private:
  bool ensure_dir();
  void evict();

  std::filesystem::path dir_;
  int64_t max_bytes_;
  std::string disabled_reason_;
};

}  // namespace braze
