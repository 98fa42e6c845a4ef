// ArenaPool: the arenas programs run in, lent for a run and given back,
// so that programs of one structure at many sizes share a few arenas.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "graph/array.h"

namespace braze {

// Note [Arena pool]
// A program's intermediates live in one arena placed by its memory plan
// (memplan/). An arena kept by each program made a loop over ever new
// shapes hold one per cached program: 256 arenas of a transformer block,
// gigabytes, of which only the running program's is in use. So a program
// keeps its plan, not its memory: each run borrows an arena of at least
// the plan's size from this pool and gives it back when it ends (a RAII
// Lease, so an exception gives it back too). The pool lends the smallest
// idle arena that fits (on the same memory: host, or a device executor's);
// only when none fits does it obtain one from the run's allocator
// (counted: allocations, bytes_allocated, arena_bytes), rounded up to a
// size class (a quarter of the power of two below it) so that a loop whose
// shapes grow step by step obtains one every ~20% of growth rather than
// every step; that miss drops the idle arenas smaller than the new one,
// which a loop of growing shapes would never use again. Idle arenas beyond
// BRAZE_ARENA_POOL_MB are dropped smallest first, but the pool always
// keeps one, so a program bigger than the bound still replays without
// allocating. A replay of one structure thus allocates nothing, as
// before (the same arena comes back), threads running programs at once
// get an arena each, and a cycle of 300 shapes runs in one arena, the
// largest. What it costs a replay, a lock and a map lookup, was not
// measurable beside the rest (bench/program_loop.py: the same times).
class ArenaPool {
 public:
  // Idle arenas are kept up to `idle_limit` bytes (and always one).
  explicit ArenaPool(int64_t idle_limit) : limit_(idle_limit) {}
  ~ArenaPool() { clear(); }
  ArenaPool(const ArenaPool&) = delete;
  ArenaPool& operator=(const ArenaPool&) = delete;

  // An arena on loan; gives it back when destroyed.
  class Lease {
   public:
    Lease() = default;
    Lease(ArenaPool* pool, const void* where, Array arena) : pool_(pool), where_(where), arena_(std::move(arena)) {}
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), where_(o.where_), arena_(std::move(o.arena_)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->give_back(where_, std::move(arena_));
    }
    const Array& arena() const { return arena_; }

   private:
    ArenaPool* pool_ = nullptr;
    const void* where_ = nullptr;
    Array arena_;
  };

  // An arena of at least `bytes` bytes in the memory `where` names (null:
  // the host; else the device executor whose memory `allocate` gives).
  Lease lend(const void* where, int64_t bytes, const ArrayAllocator& allocate);

  struct Figures {
    size_t idle = 0;         // arenas waiting to be lent
    int64_t idle_bytes = 0;  // their bytes
    int64_t limit = 0;
  };
  Figures figures();
  // Drops the idle arenas (tests; programs' runs keep the ones they hold).
  void clear();

  // The size class an arena of `bytes` is obtained at.
  static int64_t size_class(int64_t bytes);

 private:
  void give_back(const void* where, Array arena);

  std::mutex mu_;
  std::multimap<std::pair<const void*, int64_t>, Array> idle_;  // by memory, then bytes
  int64_t idle_bytes_ = 0;
  const int64_t limit_;
};

// The default of BRAZE_ARENA_POOL_MB.
inline constexpr int64_t kDefaultArenaPoolMegabytes = 512;

}  // namespace braze
