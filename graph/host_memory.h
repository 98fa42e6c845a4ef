// Where host arrays get their bytes: 64-byte aligned blocks, and for large
// ones a pool of freed blocks so that a loop which realizes a 64 MB result
// every step reuses the same pages instead of faulting fresh ones in.
//
// Note [Why freed blocks are kept]
// glibc returns blocks of 128 KB and up to the kernel with munmap when they
// are freed, and the next allocation of that size maps new pages, each of
// which faults on first touch and is zeroed by the kernel. For a
// memory-bound kernel that writes a 64 MB output this costs more than the
// kernel itself (measured: bias_relu_scale 57 ms with fresh pages, 9.5 ms
// with reused ones, on a 2-core EPYC). So blocks of kPoolMinBytes and up are
// rounded to a size class, and when freed are kept on a free list of that
// class, up to a cap on the bytes kept (BRAZE_HOST_POOL_MB, default 4096; 0
// turns the pool off). Blocks of kHugePageBytes and up are aligned to 2 MB
// and advised as transparent huge pages, which cuts the faults of a first
// touch by 512x where the kernel allows it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace braze {

inline constexpr size_t kPoolMinBytes = size_t{256} << 10;
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// A block of at least `bytes` bytes (1 if 0), 64-byte aligned, contents
// unspecified. The deleter returns it to the pool.
std::shared_ptr<std::byte[]> allocate_host_block(size_t bytes);

struct HostPoolCounters {
  int64_t reused = 0;       // allocations served from the free lists
  int64_t bytes_kept = 0;   // bytes on the free lists now
};
HostPoolCounters host_pool_counters();

// Gives every kept block back to the system (tests; memory pressure).
void release_host_pool();

}  // namespace braze
