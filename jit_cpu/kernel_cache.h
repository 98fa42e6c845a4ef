// The in-memory cache of generated kernels, and launching one.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "graph/lru.h"
#include "jit_cpu/kernel.h"

namespace braze::jit {

struct Lookup {
  std::shared_ptr<const CompiledKernel> kernel;  // null: the spec is not supported (see why)
  bool hit = false;                               // found in the cache
  int64_t codegen_ns = 0;                         // a miss: how long generating the code took
  int64_t evicted = 0;                            // a miss: entries dropped to make room (kernels_evicted)
  std::string why;
};

// The default bound of each in-memory kernel cache (BRAZE_KERNEL_CACHE_MB):
// a generated kernel takes a few pages, a oneDNN primitive tens of KB, so
// this holds thousands of either.
inline constexpr int64_t kDefaultKernelCacheMegabytes = 256;

// BRAZE_KERNEL_CACHE_MB in bytes, validated (graph/env.h).
int64_t kernel_cache_limit_from_env();

// Keyed by the spec's 128-bit key, the ISA and kCodegenVersion. Thread-safe;
// a key is compiled once even when threads ask for it at the same time.
// Negative answers are cached too, so an unsupported spec is analysed once.
// Bounded in bytes (CompiledKernel::memory_bytes): past the limit the least
// recently used kernels are dropped (Note [Bounded caches] in
// runtime/program.h); a program that holds one keeps it alive, and the
// next program that needs it again compiles it again.
class KernelCache {
 public:
  // The process's, bounded by BRAZE_KERNEL_CACHE_MB.
  static KernelCache& get();
  explicit KernelCache(int64_t limit_bytes) : limit_(limit_bytes) {}
  Lookup find_or_compile(const KernelSpec& spec, Isa isa);
  void clear();
  size_t size();
  int64_t bytes();  // of the kernels kept now
  int64_t limit() const { return limit_; }

 private:
  std::mutex mu_;
  LruMap<Lookup> entries_;
  const int64_t limit_;
};

// Below this many elements a kernel runs on the calling thread: waking the
// pool costs more than the work.
inline constexpr int64_t kParallelThreshold = 1 << 15;

// Runs `kernel` for `spec` over all rows, split across the thread pool.
void launch(const CompiledKernel& kernel, const KernelSpec& spec, std::span<const KernelArg> inputs,
            std::span<std::byte* const> outputs);

}  // namespace braze::jit
