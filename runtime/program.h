// Program: a lowered graph compiled once and run many times; the program
// cache that finds it again by the graph's structure.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fusion/schedule.h"
#include "graph/lru.h"
#include "runtime/execute.h"
#include "runtime/lower.h"

namespace braze {

// Note [Programs]
// realize() walks the lazy DAG (walk() in lower.h) and asks the program
// cache for its structure key: every node's op, dtype, shape, attrs (which
// include the special constants) and inputs, which nodes are data and
// which are scalar parameters, and the roots; not the data and not the
// values of the parameters (Note [Scalar parameters]). Equal keys lower to
// identical graphs. The first time, the DAG is lowered to a Graph and a
// Program is made: the pass
// pipeline and partition (the Schedule), every kernel found or compiled
// once (Prepared::kernels), the memory plan verified once and its arena
// allocated once. Every later realize of the same structure replays it:
// no fusion, no kernel lookup, no planning, no allocation but the outputs
// the user keeps (and none when the caller gives the output arrays, as
// @bz.jit's out= does). Each run borrows its arena from the arena pool
// (Note [Arena pool]); the cache keeps the most recently used programs up
// to a bound in bytes (Note [Bounded caches]).
//
// Inputs are never written, so which of them share memory does not change
// what a program does and is not in the key; an output array given by the
// caller that shares memory with an input is detected at every run
// (run_prepared's staging).
class Program {
 public:
  // With `device`, a program on that CUDA device (Note [Device programs]):
  // `allocate` gives its memory; the scalar parameters stay on the host.
  Program(const Lowered& lowered, KernelMode mode, MemoryOptions memory, const ArrayAllocator& allocate,
          std::shared_ptr<cuda::DeviceExecutor> device = nullptr);

  // `inputs` by input number, as walk() or lower() gives them for a DAG of
  // this program's structure: the parameters' entries are bound to the
  // program's own 0-d arrays holding `scalars`. One run at a time (the
  // arena is shared).
  std::vector<Array> run(std::vector<Array>& inputs, std::span<const ScalarParam> scalars,
                         const ArrayAllocator& allocate, std::span<const Array> out = {},
                         std::vector<int64_t>* step_ns = nullptr);

  const Schedule& schedule() const { return schedule_; }
  const Prepared& prepared() const { return prepared_; }

  // What keeping this program costs (Note [Bounded caches]): bytes of its
  // own (workspaces, kept packed weights, staging, scalar slots, and an
  // estimate of its schedule and plan), and the kernels and library
  // primitives it holds, which it may share with other programs and the
  // kernel caches, each by identity and bytes. `own` grows when a run
  // first stages an output (Executor::bind_out).
  int64_t own_bytes() const { return own_bytes_.load(std::memory_order_relaxed); }
  std::vector<std::pair<const void*, int64_t>> shared_parts() const;

 private:
  int64_t count_own_bytes() const;

  Schedule schedule_;
  Prepared prepared_;
  std::vector<Array> params_;  // per input number: the 0-d array a parameter is bound into, or empty
  std::atomic<int64_t> own_bytes_{0};
  std::mutex mu_;
};

// Note [Bounded caches]
// What braze keeps between realizes is bounded in bytes, each cache
// dropping its least recently used entries past its bound:
//   - the program cache (BRAZE_PROGRAM_CACHE_MB): a program's own bytes
//     plus, once however many cached programs share them, the kernels and
//     primitives they hold (ProgramCache::shared_): so a kernel evicted
//     from the kernel cache but alive in a program is still counted, and
//     300 programs of one structure sharing their kernels count them once;
//   - the kernel caches (BRAZE_KERNEL_CACHE_MB, each): generated CPU
//     kernels by their code pages and generator state
//     (jit_cpu/kernel_cache.h), oneDNN primitives by an estimate (Note
//     [Owning oneDNN primitives]), CUDA cubins by their image and source
//     (runtime/cubin_cache.h);
//   - the idle arenas (BRAZE_ARENA_POOL_MB; Note [Arena pool]): programs
//     keep no arena, so 300 cached programs need one arena, not 300.
// A cache always keeps its newest entry, however large, so a program or
// kernel bigger than its bound still replays. An entry dropped while in
// use lives on (shared_ptr) until the run or the program holding it ends.
// So what braze holds after any sequence of realizes is at most
// PROGRAM + 2 x KERNEL (CPU code and oneDNN primitives; on a GPU also the
// cubins) + ARENA_POOL bytes, plus one program, kernel and arena each over
// its bound, plus what runs now (its arena, its outputs), plus the freed
// host blocks graph/host_memory.h keeps (BRAZE_HOST_POOL_MB), plus a fixed
// overhead. tests/python/test_memory_bound.py holds a loop of 2,000 new
// shapes to it; docs/stats.md has the numbers.

// The default of BRAZE_PROGRAM_CACHE_MB: programs are small once their arenas
// are pooled (a transformer block of width 512 keeps 12 MB of packed
// weights, one of width 128 a megabyte), so this keeps hundreds.
inline constexpr int64_t kDefaultProgramCacheMegabytes = 1024;

// Thread-safe. A program is made once however many threads ask for its
// key at once: the first makes it, outside the lock (other programs replay
// meanwhile), and the others wait for it and replay it. An exception from
// make() reaches every thread that waited for it and is not kept: the
// next find_or_make of the key makes it again.
class ProgramCache {
 public:
  explicit ProgramCache(int64_t limit_bytes) : limit_(limit_bytes) {}
  struct Found {
    std::shared_ptr<Program> program;
    bool compiled;      // made now, not replayed
    int64_t evicted;    // programs dropped to make room (programs_evicted)
  };
  Found find_or_make(const std::string& key, const std::function<std::shared_ptr<Program>()>& make);
  void clear();
  size_t size();
  int64_t bytes();  // charged now: the programs' own and their shared parts once
  int64_t limit() const { return limit_; }

 private:
  // The cached program under `key`, made the most recent, its charge
  // brought up to date; null if absent. Under mu_.
  std::shared_ptr<Program> touch(const std::string& key);
  // Adds `program`, then drops the least recently used others while over
  // the limit; returns how many, their programs moved to `dropped`. Under mu_.
  int64_t keep(const std::string& key, std::shared_ptr<Program> program,
               std::vector<std::shared_ptr<Program>>& dropped);
  int64_t total() const { return entries_.bytes() + shared_bytes_; }
  void charge_shared(const Program& p, int sign);

  std::mutex mu_;
  // Keys being made, each with what its waiters get.
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<Program>>> making_;
  struct Entry {
    std::shared_ptr<Program> program;
    int64_t own;  // own_bytes() when last charged
  };
  LruMap<Entry> entries_;  // charged by own bytes
  // The kernels and primitives of cached programs: bytes and how many
  // cached programs hold each.
  struct Shared {
    int64_t bytes;
    int64_t users;
  };
  std::unordered_map<const void*, Shared> shared_;
  int64_t shared_bytes_ = 0;
  const int64_t limit_;
};

}  // namespace braze
