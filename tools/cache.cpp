// `braze cache` and `braze cache clear`: the disk cache of compiled kernels
// (runtime/disk_cache.h, Note [Disk cache entries]) and this process's
// in-memory caches. Which files are braze's, and whether the directory may
// be used at all, is DiskCache's answer (Notes [Disk cache eviction] and
// [Trusted cache directory]), so a clear never removes a file a user keeps in
// the same directory, nor touches a directory braze refuses.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "graph/check.h"
#include "jit_cpu/kernel_cache.h"
#include "runtime/context.h"
#include "runtime/disk_cache.h"
#include "tools/commands.h"

namespace braze::cli {

namespace {

namespace fs = std::filesystem;

// Which variable chose the directory (DiskCache::default_dir's order).
std::string dir_source() {
  if (const char* d = std::getenv("BRAZE_CACHE_DIR"); d && *d) return "BRAZE_CACHE_DIR";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return "XDG_CACHE_HOME";
  return "HOME";
}

// The nearest existing directory on the way to `dir` (itself if it
// exists): where the first store would create it.
fs::path existing_ancestor(const fs::path& dir) {
  std::error_code ec;
  fs::path p = dir;
  while (!fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  return p;
}

// The directory, or a one-line error when it, or what it would be created
// in, is no directory. A directory not created yet is fine: the first
// store creates it.
fs::path checked_dir() {
  fs::path dir = DiskCache::default_dir();
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  BRAZE_CHECK(st.type() != fs::file_type::none, "cache: cannot inspect ", dir.string(), ": ", ec.message());
  BRAZE_CHECK(st.type() == fs::file_type::not_found || st.type() == fs::file_type::directory, "cache: ",
              dir.string(), " (from $", dir_source(), ") is not a directory");
  if (st.type() == fs::file_type::not_found) {
    fs::path at = existing_ancestor(dir);
    BRAZE_CHECK(fs::is_directory(at, ec), "cache: cannot inspect ", dir.string(), " (from $", dir_source(),
                "): ", at.string(), " is not a directory");
  }
  return dir;
}

nlohmann::json disk_facts() {
  fs::path dir = checked_dir();
  DiskCache cache(dir);
  // Refused (Note [Trusted cache directory]) or unreadable: the reason, and
  // no counts, as the cache itself lists nothing there.
  bool usable = cache.check();
  DiskCache::Usage u = cache.usage();
  std::error_code ec;
  nlohmann::json j = {{"directory", dir.string()}, {"from", dir_source()},       {"exists", fs::exists(dir, ec)},
                      {"max_bytes", cache.max_bytes()}, {"entries", u.entries}, {"bytes", u.bytes},
                      {"temporaries", u.temporaries}};
  j["not_used_because"] = usable ? nlohmann::json(nullptr) : nlohmann::json(cache.disabled_reason());
  // Writable as the cache writes: create files in it (or create it).
  j["writable"] = ::access(existing_ancestor(dir).c_str(), W_OK | X_OK) == 0;
  j["healthy"] = usable && j["writable"].get<bool>();
  return j;
}

nlohmann::json memory_facts() {
  Runtime& rt = Runtime::get();
  Stats& s = rt.stats();
  return {{"cpu_kernels", jit::KernelCache::get().size()},
          {"programs", rt.programs().size()},
          {"kernels_compiled", s.kernels_compiled.load()},
          {"cache_hits_memory", s.cache_hits_memory.load()},
          {"cache_hits_disk", s.cache_hits_disk.load()},
          {"programs_compiled", s.programs_compiled.load()},
          {"programs_replayed", s.programs_replayed.load()}};
}

}  // namespace

void show_cache(const std::string& format, std::ostream& out) {
  nlohmann::json f = {{"disk", disk_facts()}, {"memory", memory_facts()}};
  if (format == "json") {
    out << f.dump(1) << "\n";
    return;
  }
  const nlohmann::json& d = f["disk"];
  out << "disk cache: " << d["directory"].get<std::string>() << " (from $" << d["from"].get<std::string>() << ")\n";
  if (!d["not_used_because"].is_null()) {
    out << "  not used: " << d["not_used_because"].get<std::string>()
        << "; compiled kernels are not kept (point $BRAZE_CACHE_DIR at a directory only you can write)\n";
  } else if (d["exists"]) {
    out << "  " << d["entries"].get<int64_t>() << " entr" << (d["entries"] == 1 ? "y" : "ies") << ", "
        << d["bytes"].get<int64_t>() << " bytes of " << d["max_bytes"].get<int64_t>() << " allowed";
    if (d["temporaries"] > 0) out << ", " << d["temporaries"].get<int64_t>() << " temporary file(s)";
    out << "\n  " << (d["healthy"] ? "healthy: readable and writable" : "not writable: compiled kernels are not kept")
        << "\n";
  } else {
    out << "  not created yet (the first compiled kernel creates it); bound " << d["max_bytes"].get<int64_t>()
        << " bytes\n";
  }
  const nlohmann::json& m = f["memory"];
  out << "memory (this process): " << m["cpu_kernels"].get<size_t>() << " cpu kernel(s), "
      << m["programs"].get<size_t>() << " program(s); " << m["kernels_compiled"].get<int64_t>() << " compiled, "
      << m["cache_hits_memory"].get<int64_t>() << " memory hit(s), " << m["cache_hits_disk"].get<int64_t>()
      << " disk hit(s); programs " << m["programs_compiled"].get<int64_t>() << " compiled, "
      << m["programs_replayed"].get<int64_t>() << " replayed\n";
}

void clear_cache(const std::string& format, std::ostream& out) {
  fs::path dir = checked_dir();
  DiskCache cache(dir);
  // A directory braze does not use is not braze's to clear.
  BRAZE_CHECK(cache.check(), "cache clear: ", cache.disabled_reason());
  DiskCache::Usage gone = cache.clear();
  int64_t removed = gone.entries + gone.temporaries, bytes = gone.bytes;
  if (format == "json") {
    out << nlohmann::json{{"directory", dir.string()}, {"removed", removed}, {"bytes", bytes}}.dump(1) << "\n";
    return;
  }
  out << "removed " << removed << " file(s), " << bytes << " bytes, from " << dir.string() << "\n";
}

}  // namespace braze::cli
