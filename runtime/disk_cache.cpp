#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <thread>

#include "graph/log.h"

namespace braze {

namespace {

using disk_cache::Fd;
using disk_cache::OpenedDir;

constexpr char kMagic[8] = {'B', 'R', 'A', 'Z', 'E', 'K', 'C', '\0'};
constexpr size_t kHeader = 8 + 4 + 4 + 8 + 8;
constexpr size_t kChecksum = 8;

// The fixed-size start of an entry file (Note [Disk cache entries]).
struct Header {
  uint32_t version = kDiskFormatVersion;
  uint32_t zero = 0;
  uint64_t key_len = 0, payload_len = 0;
};

// Each field copied into place: no vector growth, which g++ 12 at -O3 takes
// for an overflow (-Wstringop-overflow on vector::insert of a few bytes).
std::array<std::byte, kHeader> encode_header(const Header& h) {
  std::array<std::byte, kHeader> out;
  std::memcpy(out.data(), kMagic, 8);
  std::memcpy(out.data() + 8, &h.version, 4);
  std::memcpy(out.data() + 12, &h.zero, 4);
  std::memcpy(out.data() + 16, &h.key_len, 8);
  std::memcpy(out.data() + 24, &h.payload_len, 8);
  return out;
}

Header decode_header(const std::array<std::byte, kHeader>& in) {
  Header h;
  std::memcpy(&h.version, in.data() + 8, 4);
  std::memcpy(&h.zero, in.data() + 12, 4);
  std::memcpy(&h.key_len, in.data() + 16, 8);
  std::memcpy(&h.payload_len, in.data() + 24, 8);
  return h;
}

// The checksum of an entry: of its header, key and payload, as one run of bytes.
uint64_t checksum(const std::array<std::byte, kHeader>& header, std::string_view key,
                  std::span<const std::byte> payload) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, header.data(), kHeader);
  XXH3_64bits_update(state, key.data(), key.size());
  XXH3_64bits_update(state, payload.data(), payload.size());
  uint64_t sum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return sum;
}

std::string hex128(std::string_view s) {
  XXH128_hash_t h = XXH3_128bits(s.data(), s.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

std::string entry_name(std::string_view key) { return hex128(key) + ".bzk"; }

bool write_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const std::byte*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Exactly `n` bytes at `offset`, or false (a short file reads as damage).
bool read_exact(int fd, void* data, size_t n, uint64_t offset) {
  auto* p = static_cast<std::byte*>(data);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

// A temporary name no other writer (process or thread) uses; the pid tells
// eviction whether its writer is alive (Note [Disk cache eviction]).
std::string temp_name(const std::string& entry) {
  static std::atomic<uint64_t> counter{0};
  return entry + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." + std::to_string(counter++);
}

// Errors that say the directory as a whole cannot take entries, so trying
// again at every compile is pointless; any other failure concerns one entry.
bool whole_directory_failed(int err) {
  return err == ENOSPC || err == EDQUOT || err == EROFS || err == EIO || err == EACCES || err == EPERM;
}

int64_t now_ns() {
  timespec t;
  ::clock_gettime(CLOCK_REALTIME, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

DiskCache::DiskCache(std::filesystem::path dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

DiskCache::DiskCache(DiskCache&& other) noexcept : dir_(std::move(other.dir_)), max_bytes_(other.max_bytes_) {
  std::lock_guard lock(other.mutex_);
  disabled_reason_ = std::move(other.disabled_reason_);
  listed_ = other.listed_;
  estimate_ = other.estimate_;
  stores_since_listing_ = other.stores_since_listing_;
  listings_ = other.listings_;
}

std::filesystem::path DiskCache::default_dir() {
  if (const char* d = std::getenv("BRAZE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "braze";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : ".") / ".cache" / "braze";
}

bool DiskCache::is_entry_file(std::string_view file_name) { return disk_cache::is_entry_name(file_name); }
bool DiskCache::is_temporary_file(std::string_view file_name) { return disk_cache::is_temporary_name(file_name); }

std::filesystem::path DiskCache::entry_path(std::string_view key) const { return dir_ / entry_name(key); }

bool DiskCache::enabled() const {
  std::lock_guard lock(mutex_);
  return disabled_reason_.empty();
}

std::string DiskCache::disabled_reason() const {
  std::lock_guard lock(mutex_);
  return disabled_reason_;
}

int64_t DiskCache::listings() const {
  std::lock_guard lock(mutex_);
  return listings_;
}

void DiskCache::turn_off(const std::string& reason, bool warn) {
  {
    std::lock_guard lock(mutex_);
    if (!disabled_reason_.empty()) return;  // warned already
    disabled_reason_ = reason;
  }
  if (warn) log_line("disk cache off: " + reason + "; compiled kernels are not kept");
}

OpenedDir DiskCache::open_dir(bool create, bool warn) {
  if (!enabled()) return {};
  OpenedDir d = disk_cache::open_dir(dir_, create);
  if (!d.problem.empty()) turn_off(d.problem, warn);
  return d;
}

bool DiskCache::check() { return open_dir(/*create=*/false, /*warn=*/false).problem.empty() && enabled(); }

std::vector<std::byte> DiskCache::encode(std::string_view key, std::span<const std::byte> payload, uint32_t version) {
  std::array<std::byte, kHeader> header = encode_header({version, 0, key.size(), payload.size()});
  uint64_t sum = checksum(header, key, payload);
  std::vector<std::byte> out(kHeader + key.size() + payload.size() + kChecksum);
  std::byte* p = out.data();
  std::memcpy(p, header.data(), kHeader);
  if (!key.empty()) std::memcpy(p + kHeader, key.data(), key.size());
  if (!payload.empty()) std::memcpy(p + kHeader + key.size(), payload.data(), payload.size());
  std::memcpy(p + out.size() - kChecksum, &sum, kChecksum);
  return out;
}

std::optional<std::vector<std::byte>> DiskCache::load(std::string_view key) {
  OpenedDir d = open_dir(/*create=*/false, /*warn=*/true);
  if (!d.fd) return std::nullopt;
  std::string name = entry_name(key);
  // O_NONBLOCK: a FIFO under an entry's name must not block (Note [Trusted
  // cache directory]); it is refused below as no regular file.
  Fd fd(::openat(d.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return std::nullopt;  // absent, a link, unreadable: a miss for this entry
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  if (std::string why = disk_cache::untrusted(st, (dir_ / name).string()); !why.empty()) {
    log_line("disk cache: not loading " + why);
    return std::nullopt;
  }
  auto damaged = [&] {
    ::unlinkat(d.fd.get(), name.c_str(), 0);  // so the recompiled entry replaces it
    return std::nullopt;
  };
  // Sizes are checked before anything is read beyond the header, and
  // compared without adding first, so huge lengths cannot wrap around.
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kHeader + kChecksum || size > static_cast<uint64_t>(max_bytes_)) return damaged();
  std::array<std::byte, kHeader> head;
  if (!read_exact(fd.get(), head.data(), kHeader, 0)) return damaged();
  Header h = decode_header(head);
  if (std::memcmp(head.data(), kMagic, 8) != 0 || h.version != kDiskFormatVersion || h.zero != 0) return damaged();
  if (h.key_len > size || h.payload_len > size || kHeader + h.key_len + h.payload_len + kChecksum != size)
    return damaged();
  if (h.key_len != key.size()) return std::nullopt;  // another key with the same hash: leave it
  std::string stored_key(key.size(), '\0');
  if (!read_exact(fd.get(), stored_key.data(), key.size(), kHeader)) return damaged();
  if (stored_key != key) return std::nullopt;
  std::vector<std::byte> payload(h.payload_len);
  uint64_t sum = 0;
  if (!read_exact(fd.get(), payload.data(), payload.size(), kHeader + key.size()) ||
      !read_exact(fd.get(), &sum, kChecksum, size - kChecksum))
    return damaged();
  if (sum != checksum(head, key, payload)) return damaged();
  ::futimens(fd.get(), nullptr);  // recently used (Note [Disk cache eviction])
  return payload;
}

bool DiskCache::store(std::string_view key, std::span<const std::byte> payload) {
  const uint64_t bytes = kHeader + key.size() + payload.size() + kChecksum;
  if (bytes > static_cast<uint64_t>(max_bytes_)) return false;  // would be evicted at once
  OpenedDir d = open_dir(/*create=*/true, /*warn=*/true);
  if (!d.fd) return false;
  std::string name = entry_name(key), tmp = temp_name(name);
  Fd fd(::openat(d.fd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) {
    int err = errno;
    if (whole_directory_failed(err)) turn_off("cannot write in " + dir_.string() + ": " + std::strerror(err), true);
    return false;
  }
  std::array<std::byte, kHeader> header = encode_header({kDiskFormatVersion, 0, key.size(), payload.size()});
  uint64_t sum = checksum(header, key, payload);
  bool ok = write_all(fd.get(), header.data(), kHeader) && write_all(fd.get(), key.data(), key.size()) &&
            write_all(fd.get(), payload.data(), payload.size()) && write_all(fd.get(), &sum, kChecksum) &&
            ::fsync(fd.get()) == 0;
  int err = ok ? 0 : errno;
  if (::close(fd.release()) != 0 && ok) ok = false, err = errno;
  if (ok && ::renameat(d.fd.get(), tmp.c_str(), d.fd.get(), name.c_str()) != 0) ok = false, err = errno;
  if (ok) {
    after_store(d.fd.get(), static_cast<int64_t>(bytes));
    return true;
  }
  ::unlinkat(d.fd.get(), tmp.c_str(), 0);
  // A full disk or a failing device: stop trying for this cache. Anything
  // else (the entry's name taken by a directory, say) fails this entry only.
  if (whole_directory_failed(err))
    turn_off("writing " + (dir_ / name).string() + " failed: " + std::strerror(err), true);
  return false;
}

void DiskCache::after_store(int dir_fd, int64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    estimate_ += bytes;
    if (listed_ && estimate_ <= max_bytes_ && ++stores_since_listing_ < kStoresBetweenListings) return;
  }
  evict(dir_fd);
}

void DiskCache::evict(int dir_fd) {
  std::unique_lock one(evict_mutex_, std::try_to_lock);
  if (!one) return;  // another thread is listing right now
  std::vector<disk_cache::File> files;
  if (!disk_cache::list_files(dir_fd, files)) return;  // tried again at the next store
  const int64_t now = now_ns();
  int64_t total = 0;
  std::vector<const disk_cache::File*> entries;
  for (const disk_cache::File& f : files) {
    if (f.temporary && disk_cache::is_stale_temporary(f, now) && ::unlinkat(dir_fd, f.name.c_str(), 0) == 0)
      continue;
    total += f.bytes;  // live writers' temporaries count, but are not evicted
    if (!f.temporary) entries.push_back(&f);
  }
  if (total > max_bytes_) {
    std::sort(entries.begin(), entries.end(),
              [](const disk_cache::File* a, const disk_cache::File* b) { return a->mtime_ns < b->mtime_ns; });
    const int64_t low_water = max_bytes_ / 4 * 3;
    for (const disk_cache::File* e : entries) {
      if (total <= low_water) break;
      if (::unlinkat(dir_fd, e->name.c_str(), 0) == 0 || errno == ENOENT) total -= e->bytes;
    }
  }
  std::lock_guard lock(mutex_);
  listed_ = true;
  estimate_ = total;
  stores_since_listing_ = 0;
  ++listings_;
}

DiskCache::Usage DiskCache::usage() {
  Usage u;
  OpenedDir d = open_dir(/*create=*/false, /*warn=*/false);
  std::vector<disk_cache::File> files;
  if (!d.fd || !disk_cache::list_files(d.fd.get(), files)) return u;
  for (const disk_cache::File& f : files) {
    ++(f.temporary ? u.temporaries : u.entries);
    u.bytes += f.bytes;
  }
  return u;
}

DiskCache::Usage DiskCache::clear() {
  Usage removed;
  OpenedDir d = open_dir(/*create=*/false, /*warn=*/false);
  if (!d.fd) return removed;
  std::vector<disk_cache::File> files;
  if (!disk_cache::list_files(d.fd.get(), files))
    throw std::runtime_error("cannot read " + dir_.string() + ": " + std::strerror(errno));
  for (const disk_cache::File& f : files) {
    if (::unlinkat(d.fd.get(), f.name.c_str(), 0) != 0) {
      if (errno == ENOENT) continue;  // another process removed it first
      throw std::runtime_error("cannot remove " + (dir_ / f.name).string() + ": " + std::strerror(errno));
    }
    ++(f.temporary ? removed.temporaries : removed.entries);
    removed.bytes += f.bytes;
  }
  std::lock_guard lock(mutex_);
  listed_ = false;  // the next store lists again
  estimate_ = 0;
  return removed;
}

}  // namespace braze
