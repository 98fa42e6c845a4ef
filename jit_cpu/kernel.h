// A generated CPU kernel and how it is launched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fusion/kernel_spec.h"
#include "jit_cpu/isa.h"
#include "jit_cpu/row_plan.h"

namespace braze::jit {

// What a launch passes to generated code (Note [Row kernels]).
struct LaunchArgs {
  const std::byte* const* inputs;  // per spec input: base pointer (null for scalars, aranges)
  std::byte* const* outputs;       // per spec output: dense buffer
  // Per spec input, 4 words: {scalar or arange start, arange step}, each as
  // the 32-bit lane it fills (Note [Lanes] in lanes.h: float32 bits, an
  // int32 wrapped to the input's dtype, or a bool's mask) in the low half
  // of a word, then both as the 64-bit lane of a wide kernel (Note [Wide
  // kernels]: float64 bits of the value in its dtype, an integer as its
  // int64, or a bool's mask).
  const uint64_t* values;
  // Note [Split columns]: per unit and part, the part's per-column totals
  // (CompiledKernel::partial_bytes() each), and per unit the parts done,
  // zero at the launch.
  std::byte* partials;
  int64_t* part_counts;
};

// Runs rows [row_begin, row_end); `start_index` is row_begin's multi-index
// over the plan's outer axes; `scratch` is scratch_floats() floats, 64-byte
// aligned, of the calling thread's own.
using KernelFn = void (*)(const LaunchArgs* args, int64_t row_begin, int64_t row_end, const int64_t* start_index,
                          float* scratch);

class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  virtual KernelFn fn() const = 0;
  virtual const uint8_t* code() const = 0;  // the machine code, for disassembly
  virtual size_t code_size() const = 0;
  // The first text_size() bytes are instructions (the last ones nops
  // aligning the pool); the rest, up to code_size(), is the constant pool:
  // data, which a disassembler would print as nonsense.
  virtual size_t text_size() const = 0;
  // What keeping this kernel costs: its executable memory (code and
  // constants, whole pages) and the generator state it holds, estimated
  // (Note [Bounded caches] in runtime/program.h; kernel_cache.h).
  virtual int64_t memory_bytes() const = 0;
  const RowPlan& plan() const { return plan_; }
  // Writes outputs with aligned non-temporal stores (Note [Streaming
  // stores] in gen_analysis.cpp): output buffers must be 64-byte aligned.
  bool streaming_stores() const { return streaming_stores_; }
  int64_t scratch_floats() const { return scratch_floats_; }
  // Note [Split columns]: bytes of one unit-part's partials.
  int64_t partial_bytes() const { return partial_bytes_; }
  // Rows a thread's share of the launch should be a multiple of: a tile
  // group's G (Note [Tiled transposes]; a share of fewer rows reads by
  // gathers), else 1.
  int64_t row_grain() const { return row_grain_; }
  // Its lanes are 64-bit (Note [Wide kernels] in lanes.h).
  bool wide() const { return wide_; }

 protected:
  explicit CompiledKernel(RowPlan plan) : plan_(std::move(plan)) {}
  RowPlan plan_;
  bool streaming_stores_ = false;
  int64_t scratch_floats_ = 0;
  int64_t partial_bytes_ = 0;
  int64_t row_grain_ = 1;
  bool wide_ = false;
};

// Bump when generated code changes for the same spec: part of the cache key.
inline constexpr int kCodegenVersion = 19;

// The generated kernel, or null with `why` set when the spec uses what the
// generator does not emit yet (those specs run on the spec interpreter).
std::unique_ptr<CompiledKernel> compile(const KernelSpec& spec, Isa isa, std::string& why);

}  // namespace braze::jit
