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
#include <unordered_map>
#include <vector>

#include "fusion/kernel_spec.h"
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

class CubinCache {
 public:
  enum class Source { Memory, Disk, Compiled };
  struct Lookup {
    std::shared_ptr<const Cubin> cubin;
    Source source;
  };

  // Without a disk cache, memory only.
  explicit CubinCache(std::optional<DiskCache> disk = std::nullopt) : disk_(std::move(disk)) {}

  // Thread-safe; threads asking for the same kernel at once wait for one
  // compile. A compile error is rethrown to every waiter and not cached.
  Lookup get(const KernelSpec& spec, int arch);

  int64_t compiled() const { return compiled_; }
  int64_t memory_hits() const { return memory_hits_; }
  int64_t disk_hits() const { return disk_hits_; }

 private:
  std::shared_ptr<const Cubin> produce(const KernelSpec& spec, int arch, Source& source);

  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const Cubin>>> memory_;
  std::optional<DiskCache> disk_;  // thread-safe itself: disk loads of different kernels overlap
  std::atomic<int64_t> compiled_{0}, memory_hits_{0}, disk_hits_{0};
};

}  // namespace braze
