// Compiled CUDA kernels by spec and architecture: memory, then disk, then
// NVRTC (DESIGN.md section 5). Built where jit_cuda is.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fusion/kernel_spec.h"
#include "graph/lru.h"
#include "jit_cpu/kernel_cache.h"
#include "jit_cuda/cuda_source.h"
#include "runtime/disk_cache.h"

namespace braze {

struct Cubin {
  cuda::CudaKernelSource kernel;  // name, source and launch shape
  std::vector<std::byte> image;
};

// The disk key of a kernel (Note [Disk cache entries]): everything the
// cubin depends on, the source in full.
std::string cubin_disk_key(const cuda::CudaKernelSource& kernel, int arch);

// The memory level is bounded in bytes (each cubin's image and source;
// BRAZE_KERNEL_CACHE_MB, Note [Bounded caches] in runtime/program.h): past
// the bound the least recently used cubins are dropped from memory (the
// disk keeps them); a module loaded from one lives as long as the programs
// that launch it.
class CubinCache {
 public:
  enum class Source { Memory, Disk, Compiled };
  struct Lookup {
    std::shared_ptr<const Cubin> cubin;
    Source source;
    int64_t evicted = 0;  // cubins this lookup dropped from memory (kernels_evicted)
  };

  // Without a disk cache, memory only.
  explicit CubinCache(std::optional<DiskCache> disk = std::nullopt, int64_t limit_bytes = jit::kernel_cache_limit_from_env())
      : limit_(limit_bytes), disk_(std::move(disk)) {}

  // Thread-safe; threads asking for the same kernel at once wait for one
  // compile. A compile error is rethrown to every waiter and not cached.
  Lookup get(const KernelSpec& spec, int arch);

  int64_t compiled() const { return compiled_; }
  int64_t memory_hits() const { return memory_hits_; }
  int64_t disk_hits() const { return disk_hits_; }
  int64_t evicted() const { return evicted_; }
  size_t size();
  int64_t bytes();  // of the cubins in memory now

 private:
  std::shared_ptr<const Cubin> produce(const KernelSpec& spec, int arch, Source& source);

  std::mutex mutex_;
  // Charged a cubin's bytes once its compile or load is done.
  LruMap<std::shared_future<std::shared_ptr<const Cubin>>> memory_;
  const int64_t limit_;
  std::optional<DiskCache> disk_;  // thread-safe itself: disk loads of different kernels overlap
  std::atomic<int64_t> compiled_{0}, memory_hits_{0}, disk_hits_{0}, evicted_{0};
};

}  // namespace braze
