// The subcommands, each a function from its options to text on `out`.
// They throw std::exception subclasses on bad input; run_cli turns those
// into a one-line reason and an exit code.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tools/graph_source.h"

namespace braze::cli {

// `braze graph`: nodes, shapes and dtypes. format: text, json, dot.
void show_graph(const GraphSource& src, const std::string& format, std::ostream& out);

// `braze fuse`: the fused groups and every edge not fused, with why.
// format: text (explain()), json.
void show_fusion(const GraphSource& src, const std::string& format, std::ostream& out);

// `braze kernels --target cpu`: per kernel, its fused text and its x86-64
// assembly for `isa` ("avx2", "avx512"; "" = what this CPU would run).
// format: text, json.
void show_kernels(const GraphSource& src, const std::string& isa, const std::string& format, std::ostream& out);

// `braze kernels --target cuda`: per kernel, its CUDA C++ (emit "cuda"),
// PTX ("ptx"), cubin size with registers and shared memory ("cubin") or
// that and the cubin's SASS ("sass", tools/sass.h) for `arch` ("sm_90";
// "" = the GPU's, else sm_90). Needs NVRTC, no GPU. format: text, json.
void show_cuda_kernels(const GraphSource& src, const std::string& emit, const std::string& arch,
                       const std::string& format, std::ostream& out);

struct RunOptions {
  std::string device = "cpu";  // Device::parse's words: cpu, cuda, cuda:N
  std::vector<std::string> npy_inputs;  // by input number; empty: saved data, else random
  uint64_t seed = 0;
  int repeat = 10;  // timed runs after the first
  std::string format = "text";
};

// `braze run`: realizes the graph on the CPU, checks every output against
// the reference interpreter and prints per step and whole-run times.
// Throws (exit 1) when an output disagrees with the reference, and for a
// CUDA device (the runtime's reason when it has none; else that `run` does
// not drive CUDA execution yet).
void run_graph(const GraphSource& src, const RunOptions& options, std::ostream& out);

struct PlanOptions {
  std::string format = "text";
  int64_t alignment = 64;         // the CPU's; the GPU wants 256
  std::string strategy = "greedy";  // or "heap" (Note [Placement strategies])
};

// `braze plan`: the memory plan of the graph's intermediates: per buffer,
// the steps it lives over, its bytes and arena offset; then the arena, the
// lower bound and the no-reuse total. format: text, json.
void show_plan(const GraphSource& src, const PlanOptions& options, std::ostream& out);

// `braze doctor`: the CPU ISA, threads, disassembler, CUDA libraries and
// caches. format: text, json.
void doctor(const std::string& format, std::ostream& out);

// `braze cache`: the disk cache's directory (and which variable chose it),
// entries, bytes, size bound and whether it is writable; this process's
// in-memory caches and hit counts. An unreadable cache path, or one that is
// not a directory, is an error. format: text, json.
void show_cache(const std::string& format, std::ostream& out);

// `braze cache clear`: removes braze's entry files (and writers' leftover
// temporaries) from the disk cache, nothing else, and says how many.
void clear_cache(const std::string& format, std::ostream& out);

}  // namespace braze::cli
