#include "graph/host_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>

namespace braze {

namespace {

// Large blocks come in size classes so that a freed block fits the next
// request of about the same size: multiples of 64 KB below 2 MB, of 2 MB
// above.
size_t size_class(size_t bytes) {
  size_t step = bytes >= kHugePageBytes ? kHugePageBytes : size_t{64} << 10;
  return (bytes + step - 1) / step * step;
}

size_t pool_cap_bytes() {
  const char* env = std::getenv("BRAZE_HOST_POOL_MB");
  long long mb = env ? std::atoll(env) : 4096;
  return mb > 0 ? static_cast<size_t>(mb) << 20 : 0;
}

std::byte* map_block(size_t bytes) {
  size_t align = bytes >= kHugePageBytes ? kHugePageBytes : 64;
  void* p = std::aligned_alloc(align, bytes);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHugePageBytes) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return static_cast<std::byte*>(p);
}

class HostPool {
 public:
  std::byte* take(size_t cls) {
    {
      std::lock_guard lock(mu_);
      auto it = free_.find(cls);
      if (it != free_.end()) {
        std::byte* p = it->second;
        free_.erase(it);
        kept_ -= cls;
        ++reused_;
        return p;
      }
    }
    return map_block(cls);
  }

  void give(std::byte* p, size_t cls) {
    {
      std::lock_guard lock(mu_);
      if (kept_ + cls <= cap_) {
        free_.emplace(cls, p);
        kept_ += cls;
        return;
      }
    }
    std::free(p);
  }

  HostPoolCounters counters() {
    std::lock_guard lock(mu_);
    return {reused_, static_cast<int64_t>(kept_)};
  }

  void release() {
    std::multimap<size_t, std::byte*> drop;
    {
      std::lock_guard lock(mu_);
      drop.swap(free_);
      kept_ = 0;
    }
    for (auto& [cls, p] : drop) std::free(p);
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, std::byte*> free_;  // size class -> block
  size_t kept_ = 0;
  size_t cap_ = pool_cap_bytes();
  int64_t reused_ = 0;
};

// Never destroyed: arrays held by Python objects may be freed after static
// destructors have run.
HostPool& pool() {
  static HostPool* p = new HostPool;
  return *p;
}

}  // namespace

std::shared_ptr<std::byte[]> allocate_host_block(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes < kPoolMinBytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    auto* p = static_cast<std::byte*>(::operator new[](rounded, std::align_val_t{64}));
    return std::shared_ptr<std::byte[]>(p, [](std::byte* q) { ::operator delete[](q, std::align_val_t{64}); });
  }
  size_t cls = size_class(bytes);
  return std::shared_ptr<std::byte[]>(pool().take(cls), [cls](std::byte* q) { pool().give(q, cls); });
}

HostPoolCounters host_pool_counters() { return pool().counters(); }

void release_host_pool() { pool().release(); }

}  // namespace braze
