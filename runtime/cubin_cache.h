// Compiled CUDA kernels by spec and architecture: memory, then disk, then
// NVRTC (DESIGN.md section 5). Built where jit_cuda is.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
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

// Note [Compiling a program's kernels together]
// NVRTC compiles one program at a time on the thread that calls it, and
// most of a small kernel's ~0.2 s is NVRTC's fixed cost per program, so a
// cold program of 100 kernels compiled one after the other on the realizing
// thread waited 20-25 s. A device program's load asks for all of its
// kernels at once (get_many): the hits come from memory or disk, and the
// misses are compiled by a few threads in parallel (NVRTC is thread-safe
// for distinct programs), each into its own cubin, so the disk cache keeps
// one entry per kernel and a later program that shares some of them finds
// those. compile_threads(): the machine's hardware threads, at most 16
// (each compile holds some 100 MB), BRAZE_COMPILE_THREADS overriding.
int compile_threads();

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
  // get() of each spec, the misses compiled on up to `threads` threads at
  // once (Note [Compiling a program's kernels together]); the first error
  // is rethrown once every compile has ended.
  std::vector<Lookup> get_many(std::span<const KernelSpec* const> specs, int arch, int threads);

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
