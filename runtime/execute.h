// Runs a schedule: kernel steps and library calls, in order, on the CPU or
// on a CUDA device (Note [Device programs] in runtime/device_program.h).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "fusion/schedule.h"
#include "graph/array.h"
#include "jit_cpu/dnn.h"
#include "jit_cpu/kernel.h"
#include "memplan/plan.h"
#include "runtime/device_graph.h"  // and jit_cuda/executor.h, header-only: every build

namespace braze {

// How kernel steps run: generated machine code (what realize uses; a spec
// the generator cannot emit falls back to the interpreter), or the spec
// interpreter only (bit-identical to the reference: for testing fusion).
enum class KernelMode { Generated, Interpreted };

// Where the schedule's intermediate buffers live.
struct MemoryOptions {
  // Off: each intermediate is its own allocation. On: one arena, placed by
  // memplan/ and verified, holds them all; it is one allocation (counted
  // in allocations, bytes_allocated and arena_bytes). Graph outputs are
  // allocated on their own either way: the user keeps them.
  bool arena = false;
  // With the arena: every arena byte is set to 0xFF (a NaN in every float
  // dtype, -1 in every signed int) before the first step and each buffer's
  // bytes again after its last read, so that a planner bug shows up as a
  // wrong answer instead of a stale but plausible value.
  bool poison = false;
  // With the arena: prepare() plans it but leaves Prepared::arena empty,
  // and whoever runs the schedule sets it to an arena of at least
  // plan.arena_bytes for each run (a Program, from the arena pool: Note
  // [Arena pool] in runtime/arena_pool.h).
  bool lend = false;
};

// Note [Kept packed weights]
// A matmul whose right operand oneDNN reads packed (Note [Packed matmul
// weights] in jit_cpu/dnn_packing.cpp) would copy it at every run: for
// the mlp workload's 16 MB weights that is a fifth of the call. When that
// operand is a graph input (a weight the caller passes in, the same
// storage run after run), the program packs it once into a buffer it
// keeps (allocated when the program is made, counted) and stamps it with
// the storage it came from (a weak_ptr, so a freed and reused address is
// not mistaken for it) and that storage's version (Note [Storage
// versions]); a run packs again only when the input is another storage or
// was written in place since (bz.copyto, assign, out=). An operand the
// program computes is packed at every run, into the step's workspace.

// What running a schedule needs that stays the same from run to run: each
// kernel step's compiled kernel, looked up once, and the memory plan with
// its arena, allocated once (Note [Programs] in runtime/program.h).
struct Prepared {
  KernelMode mode = KernelMode::Generated;
  MemoryOptions memory;
  // Per step: the generated kernel; null for library calls and for specs
  // that run on the spec interpreter.
  std::vector<std::shared_ptr<const jit::CompiledKernel>> kernels;
  // Per step: a library call's oneDNN primitive, looked up once here like
  // the kernels (why_not says when the reference interpreter runs it
  // instead); default for kernel steps. Each holds its primitive cache
  // entry, which stays valid after the cache drops it (Note [Owning oneDNN
  // primitives] in jit_cpu/dnn.h).
  std::vector<dnn::Prepared> library;
  // On a CUDA device: its executor, per kernel step the loaded kernel
  // (null for library calls), and per library step its cuBLASLt/cuDNN call
  // (Note [CUDA library calls]; null under host emulation, where `library`
  // runs it). Null/empty on the CPU.
  std::shared_ptr<cuda::DeviceExecutor> device;
  std::vector<std::shared_ptr<const cuda::DeviceKernel>> device_kernels;
  std::vector<std::shared_ptr<const cuda::DeviceLibraryCall>> device_library;
  memplan::Liveness lives;  // with the arena only
  memplan::MemoryPlan plan;
  Array arena;  // at least plan.arena_bytes; empty when nothing is shared (or, with memory.lend, between runs)
  std::vector<int64_t> offset;                          // per graph node: its arena offset, or -1
  std::vector<std::vector<memplan::Placement>> dying;   // poison mode, per step: what it reads last
  std::vector<Array> staging;                           // per output: where it is written when `out` aliases an input
  std::vector<std::vector<NodeId>> in_place;            // per output: the inputs it may overwrite (Note [In-place outputs])
  // Per step: where a library call's workspace is (Note [Step workspaces]):
  // its arena offset, or -1 and then workspace[k], allocated here once
  // (no arena, or a schedule whose workspaces size_workspaces did not fill).
  std::vector<int64_t> workspace_offset;
  std::vector<Array> workspace;
  // Per step: its packed right operand when the program keeps it (Note
  // [Kept packed weights]); `packed` empty otherwise.
  struct KeptPacked {
    Array packed;
    std::weak_ptr<std::byte[]> source;
    const std::byte* source_data = nullptr;
    uint64_t version = 0;
  };
  std::vector<KeptPacked> kept;
  // On a CUDA device: the program as one graph (Note [When a program is a
  // graph]); last, so it goes before the kernels and executor it uses.
  DeviceGraphState device_graph;
};

// Fills each library step's Step::workspace_bytes from its oneDNN
// primitive, or with `device` its CUDA library call (either created now if
// new, counted in library_primitives_created), so that the memory plan of
// `s` holds the workspaces. Program schedules are sized
// (program_schedule); explain and `braze plan` show them.
void size_workspaces(Schedule& s, cuda::DeviceExecutor* device = nullptr);

// Compiles (or finds in the kernel cache) every kernel, plans and allocates
// the arena; counts kernels_compiled, cache_hits_memory, arena_bytes. With
// a device executor, the kernels are CUDA kernels it loads and `allocate`
// must give that device's memory (the arena is on the device).
Prepared prepare(const Schedule& s, KernelMode mode, MemoryOptions memory, const ArrayAllocator& allocate,
                 std::shared_ptr<cuda::DeviceExecutor> device = nullptr);

// Runs a prepared schedule. `inputs` bound by input number (a 0-d input
// that a kernel reads as a scalar is passed by value); returns one dense
// array per graph output, from `allocate` or, when `out` is not empty,
// written into out[i] (its dtype and shape must match; an `out` that
// shares memory with an input is written over it where Note [In-place
// outputs] allows, else computed into `p.staging` and copied, so an
// in-place update reads the old values). Counts kernels_launched.
// `step_ns`, when given, receives each step's wall time in nanoseconds, in
// schedule order (what `braze run` prints).
std::vector<Array> run_prepared(const Schedule& s, Prepared& p, std::span<const Array> inputs,
                                const ArrayAllocator& allocate, std::span<const Array> out = {},
                                std::vector<int64_t>* step_ns = nullptr);

// How many times prepare() has looked a library call up in the oneDNN
// primitive cache, process-wide: a replay adds nothing (tests check it).
int64_t library_lookups();

// prepare + run_prepared, once.
std::vector<Array> execute(const Schedule& s, std::span<const Array> inputs, const ArrayAllocator& allocate,
                           KernelMode mode = KernelMode::Generated, MemoryOptions memory = {},
                           std::vector<int64_t>* step_ns = nullptr);

}  // namespace braze
