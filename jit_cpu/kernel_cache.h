// The in-memory cache of generated kernels, and launching one.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "jit_cpu/kernel.h"

namespace braze::jit {

struct Lookup {
  std::shared_ptr<const CompiledKernel> kernel;  // null: the spec is not supported (see why)
  bool hit = false;                               // found in the cache
  int64_t codegen_ns = 0;                         // a miss: how long generating the code took
  std::string why;
};

// Keyed by the spec's 128-bit key, the ISA and kCodegenVersion. Thread-safe;
// a key is compiled once even when threads ask for it at the same time.
// Negative answers are cached too, so an unsupported spec is analysed once.
class KernelCache {
 public:
  static KernelCache& get();
  Lookup find_or_compile(const KernelSpec& spec, Isa isa);
  void clear();
  size_t size();

 private:
  std::mutex mu_;
  std::unordered_map<std::string, Lookup> entries_;
};

// Below this many elements a kernel runs on the calling thread: waking the
// pool costs more than the work.
inline constexpr int64_t kParallelThreshold = 1 << 15;

// Runs `kernel` for `spec` over all rows, split across the thread pool.
void launch(const CompiledKernel& kernel, const KernelSpec& spec, std::span<const KernelArg> inputs,
            std::span<std::byte* const> outputs);

}  // namespace braze::jit
