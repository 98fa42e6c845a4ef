// BRAZE_DUMP: writing what braze generates for each kernel to files, for a
// person who wants to read it (DESIGN.md section 7). Note [Dump files].
#pragma once

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "fusion/schedule.h"
#include "graph/graph.h"
#include "memplan/plan.h"
#include "jit_cpu/kernel_cache.h"

namespace braze {

// Note [Dump files]
// BRAZE_DUMP is a comma list of what to write; BRAZE_DUMP_DIR is where
// (default ./braze_dump, created on the first write). One file of each kind
// per compiled kernel, named by the spec's key, so the same program gives
// the same names in every run:
//   fused: <key>.fused.txt   the fused ops and the spec's canonical text, as
//                            explain() shows them, and how the kernel runs
//   asm:   <key>.<isa>.s     the generated machine code in Intel syntax, one
//                            instruction per line at its offset, then the
//                            constant pool as data words; for a kernel the
//                            generator cannot emit yet, a note saying why it
//                            runs on the spec interpreter instead
// and one file of each kind per new program (a lowered graph realize has
// not seen before; replays write nothing), named by a hash of the graph's
// JSON, so again stable between runs:
//   graph: <hash>.graph.json the lowered graph (graph/serialize.h's format,
//                            structure only: no input data), loadable by
//                            `braze graph|fuse|kernels|plan FILE`
//   plan:  <hash>.plan.txt   the program's steps and memory plan (each
//                            intermediate's live steps, bytes and arena
//                            offset), the text `braze plan` prints
// and, per compiled kernel again, what the CUDA backend makes of its spec
// (Note [CUDA dump texts] in dump_cuda.h), whatever device ran it:
//   cuda:  <key>.cu          the CUDA C++ jit_cuda renders, the text of
//                            `braze kernels --target cuda`
//   ptx:   <key>.sm_XX.ptx   NVRTC's PTX of that source for sm_XX (the GPU's
//                            architecture, else sm_90; BRAZE_DUMP_ARCH
//                            overrides), the text of `braze kernels --target
//                            cuda --emit ptx --arch sm_XX`; a source NVRTC
//                            rejects gives a file saying why
// `cuda` and `ptx` in a build without the CUDA backend, and `ptx` without a
// loadable libnvrtc, are errors when the options are read (the first op),
// naming what is missing.
// Files are written when the kernel cache compiles a kernel, not on cache
// hits, so a loop dumps its kernels once; a later run overwrites them. A
// program on a CUDA device writes `cuda` and `ptx` when it loads a kernel
// for the first time in the process (compiled, or from the disk cache).
// Dumping happens where kernels are compiled, so BRAZE_BACKEND=reference
// dumps nothing.
struct DumpOptions {
  bool fused = false;
  bool assembly = false;
  bool graph = false;
  bool plan = false;
  bool cuda = false;
  bool ptx = false;
  int ptx_arch = 0;  // 90 for sm_90; set by dump_options_from_env when ptx
  std::filesystem::path dir = "braze_dump";
  bool any() const { return fused || assembly || graph || plan || cuda || ptx; }
};

// The words BRAZE_DUMP accepts, in the order an error lists them.
inline constexpr const char* kDumpWords = "fused, asm, graph, plan, cuda, ptx";

// `what` and `dir` are the variables' values (null: unset). Words of `what`
// that name nothing to dump are appended to `unknown`.
DumpOptions parse_dump_options(const char* what, const char* dir, std::vector<std::string>& unknown);

// parse_dump_options on the environment; an unknown word is an error that
// lists the known ones, and `cuda` / `ptx` are checked and the PTX
// architecture chosen (check_cuda_dumps). The runtime context calls it when
// first used, so the first op raises the error.
DumpOptions dump_options_from_env();

class Dumper {
 public:
  explicit Dumper(DumpOptions options) { configure(std::move(options)); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // Replaces the options (tests; the runtime context sets them from the
  // environment once).
  void configure(DumpOptions options);
  DumpOptions options();

  // Writes the files for a kernel step of `s` that the CPU kernel cache has
  // just compiled into `found` (and its CUDA texts, when asked). Thread-safe. A failure to write is a warning
  // on stderr and turns dumping off: it must never fail a realize.
  void kernel(const Schedule& s, const Step& step, const jit::Lookup& found, jit::Isa isa);
  // Writes the CUDA texts (`cuda`, `ptx`) of a kernel step that a CUDA
  // device program has just loaded for the first time in this process
  // (compiled, or found in the disk cache). Thread-safe, as kernel().
  void device_kernel(const Step& step);
  // Writes the files for a program just made from `graph` (the lowered
  // graph) with schedule `s`, liveness `l` and memory plan `p`. Thread-safe;
  // a failed write turns dumping off, as for kernels.
  void program(const Graph& graph, const Schedule& s, const memplan::Liveness& l, const memplan::MemoryPlan& p);

 private:
  bool write(const std::filesystem::path& path, const std::string& text);  // under mu_
  // A step's CUDA source and PTX as the options ask (empty when not).
  struct CudaTexts {
    std::string source, ptx;
  };
  static CudaTexts cuda_texts(const DumpOptions& o, const Step& step);
  void write_cuda_texts(const DumpOptions& o, const KernelKey& key, const CudaTexts& texts);  // under mu_

  std::mutex mu_;  // guards options_ and the files
  DumpOptions options_;
  std::atomic<bool> enabled_ = false;
};

// The text of the files, for tests.
std::string fused_text(const Schedule& s, const Step& step, const jit::Lookup& found, jit::Isa isa);
std::string asm_text(const KernelKey& key, const jit::Lookup& found, jit::Isa isa);
// The steps (each by the nodes it writes, "Exp#2") and then the memory plan
// (memplan::to_string): the text of `braze plan` and of plan dumps.
std::string plan_text(const Schedule& s, const memplan::Liveness& l, const memplan::MemoryPlan& p);

}  // namespace braze
