// Host emulation of the little of CUDA that generated kernels use, so that
// the CUDA source braze renders can be compiled by the host C++ compiler
// and run on CPU threads, and its results checked against the spec
// interpreter on machines without a GPU (issue 5, "Checking it without a
// GPU"). Force-included (-include) before the kernel source by
// EmulatedKernels (jit_cuda/emulated_kernels.h): the emulation tests and
// BRAZE_CUDA=emulate (Note [Host emulation]).
//
// A launch runs its blocks one after another, and a block's threads as
// fibers (ucontext) on the calling thread, switched only at barriers: so
// `__shared__` variables can be function statics (one block lives at a
// time), threadIdx is a plain global set before each switch, __syncthreads
// is a barrier of the block's fibers, and a warp shuffle exchanges values
// through a slot per thread between two barriers of the warp. (OS threads
// per GPU thread were ~100x slower: every barrier woke 32-512 threads on 2
// cores.) Every thread of a block must reach each barrier, which generated
// code guarantees (its row loops are uniform per block).
#pragma once

#include <ucontext.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "graph/half.h"

#define BRAZE_CUDA_EMULATION 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static

struct BzDim3 {
  unsigned x = 0, y = 1, z = 1;
};
inline BzDim3 threadIdx, blockIdx, blockDim, gridDim;

namespace bz_emu {

struct Fiber {
  ucontext_t context;
  unsigned thread = 0;
  bool done = false;
};
inline ucontext_t scheduler;
inline std::vector<std::unique_ptr<char[]>> stacks;  // kept across launches: no allocation per block
constexpr size_t kStackBytes = 256 << 10;
inline std::vector<Fiber> fibers;
inline unsigned current = 0;
inline void (*entry)(void* const*) = nullptr;
inline void* const* entry_params = nullptr;

inline void yield() { swapcontext(&fibers[current].context, &scheduler); }

// Waits until `count` fibers have arrived; the last one goes straight on.
struct Barrier {
  unsigned count = 0, arrived = 0, generation = 0;
  void wait() {
    unsigned g = generation;
    if (++arrived == count) {
      arrived = 0;
      ++generation;
      return;
    }
    while (generation == g) yield();
  }
};
inline Barrier block_barrier;
inline std::vector<Barrier> warp_barriers;
inline unsigned char warp_slots[1024][16];

inline void run_fiber() {
  entry(entry_params);
  fibers[current].done = true;  // uc_link returns to the scheduler
}

}  // namespace bz_emu

inline void __syncthreads() { bz_emu::block_barrier.wait(); }

template <class T>
T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  static_assert(sizeof(T) <= 16);
  const unsigned t = threadIdx.x, warp = t / 32, lane = t % 32;
  std::memcpy(bz_emu::warp_slots[t], &v, sizeof v);
  bz_emu::warp_barriers[warp].wait();
  T r;
  std::memcpy(&r, bz_emu::warp_slots[warp * 32 + (lane ^ static_cast<unsigned>(lane_mask))], sizeof r);
  bz_emu::warp_barriers[warp].wait();  // nobody overwrites a slot still being read
  return r;
}

inline float __int_as_float(unsigned bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline float __uint_as_float(unsigned bits) { return __int_as_float(bits); }
inline double __longlong_as_double(unsigned long long bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// A vector access (bz::load_vec/store_vec, prelude.cuh) at an address not
// aligned to its size faults on a GPU ("misaligned address"); here it stops
// the process with the address, so emulation catches a wrong alignment
// decision (Note [CUDA vector access]) instead of hiding it.
inline void bz_emu_check_aligned(const void* p, size_t bytes) {
  if (reinterpret_cast<unsigned long long>(p) % bytes == 0) return;
  std::fprintf(stderr, "host emulation: misaligned %zu-byte vector access at %p\n", bytes, p);
  std::abort();
}

// Runs `entry` (a kernel's host trampoline taking cuLaunchKernel-style
// parameter pointers) as a grid of `grid` blocks of `block` threads.
extern "C" void bz_emu_launch(void (*entry)(void* const*), void* const* params, unsigned grid, unsigned block) {
  using namespace bz_emu;
  blockDim = {block, 1, 1};
  gridDim = {grid, 1, 1};
  bz_emu::entry = entry;
  entry_params = params;
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx = {b, 0, 0};
    block_barrier = Barrier{block};
    warp_barriers.assign((block + 31) / 32, Barrier{32});
    fibers.assign(block, Fiber{});
    for (unsigned t = 0; t < block; ++t) {
      Fiber& f = fibers[t];
      f.thread = t;
      if (stacks.size() <= t) stacks.push_back(std::unique_ptr<char[]>(new char[kStackBytes]));
      getcontext(&f.context);
      f.context.uc_stack.ss_sp = stacks[t].get();
      f.context.uc_stack.ss_size = kStackBytes;
      f.context.uc_link = &scheduler;
      makecontext(&f.context, run_fiber, 0);
    }
    for (bool running = true; running;) {
      running = false;
      for (unsigned t = 0; t < block; ++t) {
        if (fibers[t].done) continue;
        current = t;
        threadIdx = {t, 0, 0};
        swapcontext(&scheduler, &fibers[t].context);
        running = true;
      }
    }
  }
}
