// The runtime context: the one piece of process-wide mutable state
// (DESIGN.md section 8). It holds the counters of bz.stats(), the backend
// chosen by BRAZE_BACKEND, what BRAZE_DUMP writes and the default-device
// scope.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jit_cpu/isa.h"
#include "runtime/arena_pool.h"
#include "runtime/device.h"
#include "runtime/dump.h"
#include "runtime/program.h"
#include "runtime/storage_versions.h"

namespace braze {

// Each counter is documented in docs/stats.md; names are part of the API.
#define BRAZE_STATS(X)    \
  X(kernels_launched)     \
  X(kernels_compiled)     \
  X(codegen_ns)           \
  X(kernels_interpreted)  \
  X(graphs_captured)      \
  X(graphs_launched)      \
  X(graph_nodes_updated)  \
  X(library_primitives_created) \
  X(library_calls_reference) \
  X(cache_hits_memory)    \
  X(cache_hits_disk)      \
  X(programs_compiled)    \
  X(programs_replayed)    \
  X(programs_evicted)     \
  X(kernels_evicted)      \
  X(library_primitives_evicted) \
  X(allocations)          \
  X(bytes_allocated)      \
  X(arena_bytes)          \
  X(device_bytes_allocated) \
  X(realizations)         \
  X(values_kept)          \
  X(reference_evaluations)

struct Stats {
#define BRAZE_STAT_FIELD(name) std::atomic<int64_t> name{0};
  BRAZE_STATS(BRAZE_STAT_FIELD)
#undef BRAZE_STAT_FIELD
};

// Note [Calls that compute]
// realize() and assign() (and so Tensor::data(), item(), an op that cuts a
// deep lazy graph, ...) compute inside a ComputeScope. A front end that
// holds a lock of its own while it calls braze, as Python's binding holds
// the GIL, installs hooks (set_compute_hooks) that let go of that lock
// when a thread's outermost scope begins and take it back when it ends
// (python/module.cpp), so that the front end's other threads run, and
// realize, meanwhile. Inside a scope braze never calls back into the front
// end, and it takes the front end's lock back only after letting go of
// every lock of its own, so the two cannot deadlock.
struct ComputeHooks {
  void* (*enter)();       // lets go of the front end's lock; returns what leave needs
  void (*leave)(void*);   // takes it back
};
// Installed once, before the threads that use braze start (the Python
// module's import); `hooks` must outlive every scope.
void set_compute_hooks(const ComputeHooks* hooks);

class ComputeScope {
 public:
  ComputeScope();
  ~ComputeScope();
  ComputeScope(const ComputeScope&) = delete;
  ComputeScope& operator=(const ComputeScope&) = delete;

 private:
  const ComputeHooks* hooks_ = nullptr;  // entered by this scope, the outermost
  void* state_ = nullptr;
};

// Cpu: fuse, then run each kernel. Reference: evaluate the whole graph with
// the reference interpreter, node by node (the oracle, for cross-checks).
enum class BackendKind : uint8_t { Cpu, Reference };

class Runtime {
 public:
  static Runtime& get();

  Stats& stats() { return stats_; }
  std::vector<std::pair<std::string, int64_t>> stats_snapshot() const;
  void reset_stats();

  BackendKind backend() const { return backend_; }
  // The vector ISA generated CPU code targets (BRAZE_CPU_ISA, else the best
  // the CPU has).
  jit::Isa cpu_isa() const { return cpu_isa_; }
  // Writes kernels to files as BRAZE_DUMP and BRAZE_DUMP_DIR ask.
  Dumper& dumper() { return dumper_; }
  // Intermediates in one planned arena per program (on unless
  // BRAZE_ARENA=0; BRAZE_POISON=1 also fills dead arena bytes with NaN).
  bool arena() const { return arena_; }
  // Compiled programs by structure (Note [Programs]), bounded by
  // BRAZE_PROGRAM_CACHE_MB (Note [Bounded caches]).
  ProgramCache& programs() { return programs_; }
  // The arenas programs run in (Note [Arena pool]), idle ones bounded by
  // BRAZE_ARENA_POOL_MB.
  ArenaPool& arenas() { return arenas_; }
  bool poison() const { return poison_; }
  // In-place writes into realized storage (Note [Storage versions]).
  StorageVersions& storage_versions() { return storage_versions_; }

  // Tensors created without an explicit device go here. Set by the
  // bz.device(...) scope; per thread, so scopes on different threads nest
  // independently.
  static Device default_device();
  static void set_default_device(Device d);

 private:
  Runtime();
  Stats stats_;
  BackendKind backend_;
  jit::Isa cpu_isa_;
  Dumper dumper_;
  ArenaPool arenas_;  // before programs_: destroyed after them
  ProgramCache programs_;
  StorageVersions storage_versions_;
  bool poison_;
  bool arena_;
};

}  // namespace braze
