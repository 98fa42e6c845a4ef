#include "runtime/memory_figures.h"

#include "jit_cpu/dnn.h"
#include "jit_cpu/kernel_cache.h"
#include "runtime/context.h"

namespace braze {

std::vector<CacheFigures> memory_figures() {
  Runtime& rt = Runtime::get();
  jit::KernelCache& kernels = jit::KernelCache::get();
  dnn::CacheFigures primitives = dnn::cache_figures();
  ArenaPool::Figures arenas = rt.arenas().figures();
  auto count = [](size_t n) { return static_cast<int64_t>(n); };
  return {
      {"programs", "BRAZE_PROGRAM_CACHE_MB", count(rt.programs().size()), rt.programs().bytes(),
       rt.programs().limit()},
      {"cpu_kernels", "BRAZE_KERNEL_CACHE_MB", count(kernels.size()), kernels.bytes(), kernels.limit()},
      {"onednn_primitives", "BRAZE_KERNEL_CACHE_MB", count(primitives.entries), primitives.bytes, primitives.limit},
      {"idle_arenas", "BRAZE_ARENA_POOL_MB", count(arenas.idle), arenas.idle_bytes, arenas.limit},
  };
}

}  // namespace braze
