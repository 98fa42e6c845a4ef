// Program: a lowered graph compiled once and run many times; the program
// cache that finds it again by the graph's structure.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fusion/schedule.h"
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
// @bz.jit's out= does). The arena lives as long as the program; the cache
// keeps the kMaxPrograms most recently used programs.
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

 private:
  Schedule schedule_;
  Prepared prepared_;
  std::vector<Array> params_;  // per input number: the 0-d array a parameter is bound into, or empty
  std::mutex mu_;
};

// How many programs the cache keeps (least recently used goes first): each
// holds its arena, so a loop over ever new shapes must not keep them all.
inline constexpr size_t kMaxPrograms = 256;

// Thread-safe. A program is made once however many threads ask for its
// key at once: the first makes it, outside the lock (other programs replay
// meanwhile), and the others wait for it and replay it. An exception from
// make() reaches every thread that waited for it and is not kept: the
// next find_or_make of the key makes it again.
class ProgramCache {
 public:
  struct Found {
    std::shared_ptr<Program> program;
    bool compiled;  // made now, not replayed
  };
  Found find_or_make(const std::string& key, const std::function<std::shared_ptr<Program>()>& make);
  void clear();
  size_t size();

 private:
  std::mutex mu_;
  // Keys being made, each with what its waiters get.
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<Program>>> making_;
  std::list<std::string> recent_;  // most recent first
  struct Entry {
    std::shared_ptr<Program> program;
    std::list<std::string>::iterator place;
  };
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace braze
