#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

namespace braze {

namespace {

constexpr char kMagic[8] = {'B', 'R', 'A', 'Z', 'E', 'K', 'C', '\0'};
constexpr size_t kHeader = 8 + 4 + 4 + 8 + 8;
constexpr const char* kSuffix = ".bzk";

// Copies `v` into `out` at `at` and returns the offset past it.
template <class T>
size_t put(std::vector<std::byte>& out, size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof v);
  return at + sizeof v;
}

template <class T>
T get(const std::vector<std::byte>& in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

std::string hex128(std::string_view s) {
  XXH128_hash_t h = XXH3_128bits(s.data(), s.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

bool write_all(int fd, const std::byte* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// A temporary name no other writer (process or thread) uses.
std::string temp_name(const std::filesystem::path& final_path) {
  static std::atomic<uint64_t> counter{0};
  return final_path.string() + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." + std::to_string(counter++);
}

}  // namespace

DiskCache::DiskCache(std::filesystem::path dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

std::filesystem::path DiskCache::default_dir() {
  if (const char* d = std::getenv("BRAZE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "braze";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : ".") / ".cache" / "braze";
}

bool DiskCache::is_entry_file(std::string_view file_name) {
  return file_name.ends_with(kSuffix) && file_name.find(".tmp.") == std::string_view::npos;
}

bool DiskCache::is_temporary_file(std::string_view file_name) {
  size_t at = file_name.find(std::string(kSuffix) + ".tmp.");
  return at != std::string_view::npos && at > 0;
}

std::filesystem::path DiskCache::entry_path(std::string_view key) const { return dir_ / (hex128(key) + kSuffix); }

std::vector<std::byte> DiskCache::encode(std::string_view key, std::span<const std::byte> payload, uint32_t version) {
  // Sized once and filled in place: g++ 12 at -O3 takes the growth path of
  // vector::insert for an overflow of the 8-byte magic's allocation
  // (-Werror=stringop-overflow, which stopped `pip install .`).
  std::vector<std::byte> out(kHeader + key.size() + payload.size() + 8);
  std::memcpy(out.data(), kMagic, 8);
  size_t at = put<uint32_t>(out, 8, version);
  at = put<uint32_t>(out, at, 0);
  at = put<uint64_t>(out, at, key.size());
  at = put<uint64_t>(out, at, payload.size());
  if (!key.empty()) std::memcpy(out.data() + at, key.data(), key.size());
  if (!payload.empty()) std::memcpy(out.data() + at + key.size(), payload.data(), payload.size());
  put<uint64_t>(out, out.size() - 8, XXH3_64bits(out.data(), out.size() - 8));
  return out;
}

std::optional<std::vector<std::byte>> DiskCache::load(std::string_view key) {
  std::filesystem::path path = entry_path(key);
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;  // absent (or unreadable): a miss
  std::vector<std::byte> bytes(size);
  {
    std::ifstream in(path, std::ios::binary);
    if (!in || !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
      return std::nullopt;
  }
  auto damaged = [&] {
    std::filesystem::remove(path, ec);  // so the recompiled entry replaces it
    return std::nullopt;
  };
  if (size < kHeader + 8 || std::memcmp(bytes.data(), kMagic, 8) != 0) return damaged();
  if (get<uint32_t>(bytes, 8) != kDiskFormatVersion || get<uint32_t>(bytes, 12) != 0) return damaged();
  uint64_t key_len = get<uint64_t>(bytes, 16), payload_len = get<uint64_t>(bytes, 24);
  // Compared without adding first, so huge lengths cannot wrap around.
  if (key_len > size || payload_len > size || kHeader + key_len + payload_len + 8 != size) return damaged();
  if (get<uint64_t>(bytes, size - 8) != XXH3_64bits(bytes.data(), size - 8)) return damaged();
  if (std::string_view(reinterpret_cast<const char*>(bytes.data() + kHeader), key_len) != key)
    return std::nullopt;  // another key with the same hash: not damage, leave it
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ec);  // recently used
  auto first = bytes.begin() + static_cast<std::ptrdiff_t>(kHeader + key_len);
  return std::vector<std::byte>(first, first + static_cast<std::ptrdiff_t>(payload_len));
}

bool DiskCache::ensure_dir() {
  std::error_code ec;
  if (std::filesystem::is_directory(dir_, ec)) return true;
  // Parents as the user's umask makes them; the cache directory itself 0700.
  if (dir_.has_parent_path()) std::filesystem::create_directories(dir_.parent_path(), ec);
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    disabled_reason_ = "cannot create " + dir_.string() + ": " + std::strerror(errno);
    return false;
  }
  if (std::filesystem::is_directory(dir_, ec)) return true;
  disabled_reason_ = dir_.string() + " is not a directory";
  return false;
}

bool DiskCache::store(std::string_view key, std::span<const std::byte> payload) {
  if (!enabled() || !ensure_dir()) return false;
  std::filesystem::path final_path = entry_path(key);
  std::string tmp = temp_name(final_path);
  std::vector<std::byte> bytes = encode(key, payload);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    disabled_reason_ = "cannot write in " + dir_.string() + ": " + std::strerror(errno);
    return false;
  }
  bool ok = write_all(fd, bytes.data(), bytes.size()) && ::fsync(fd) == 0;
  int err = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) ok = false, err = errno;
  if (ok && ::rename(tmp.c_str(), final_path.c_str()) != 0) ok = false, err = errno;
  if (ok) {
    evict();
    return true;
  }
  ::unlink(tmp.c_str());
  // A full disk or a failing device: stop trying for this cache.
  disabled_reason_ = "writing " + final_path.string() + " failed: " + std::strerror(err);
  return false;
}

void DiskCache::evict() {
  struct Entry {
    std::filesystem::file_time_type time;
    uintmax_t size;
    std::filesystem::path path;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    auto time = e.last_write_time(ec);
    if (ec) continue;
    if (is_temporary_file(name)) {
      // A writer killed mid-write; a live one finishes in well under an hour.
      if (now - time > std::chrono::hours(1)) std::filesystem::remove(e.path(), ec);
      continue;
    }
    if (!is_entry_file(name)) continue;
    uintmax_t size = e.file_size(ec);
    if (ec) continue;
    entries.push_back({time, size, e.path()});
    total += static_cast<int64_t>(size);
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.time < b.time; });
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    if (std::filesystem::remove(e.path, ec)) total -= static_cast<int64_t>(e.size);
  }
}

}  // namespace braze
