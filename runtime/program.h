// Program: a lowered graph compiled once and run many times; the program
// cache that finds it again by the graph's structure.
#pragma once

#include <cstdint>
#include <functional>
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
// realize() lowers the lazy DAG to a Graph and asks the program cache for
// it by its structure key (program_key: every node's op, dtype, view,
// inputs and attrs, which include the special constants, and the graph's
// outputs; not the data and not the values of scalar parameters, Note
// [Scalar parameters]). The first time, a Program is made: the pass
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
  Program(const Lowered& lowered, KernelMode mode, MemoryOptions memory, const ArrayAllocator& allocate);

  // `lowered` must have this program's key; its parameters' values are
  // bound and its arrays read. One run at a time (the arena is shared).
  std::vector<Array> run(Lowered& lowered, const ArrayAllocator& allocate, std::span<const Array> out = {},
                         std::vector<int64_t>* step_ns = nullptr);

  const Schedule& schedule() const { return schedule_; }
  const Prepared& prepared() const { return prepared_; }

 private:
  Schedule schedule_;
  Prepared prepared_;
  std::vector<Array> params_;  // per input number: the 0-d array a parameter is bound into, or empty
  std::mutex mu_;
};

// The structure of a lowered graph, as a byte string: equal keys, identical
// graphs (and so the same program).
std::string program_key(const Graph& g, MemoryOptions memory);

// How many programs the cache keeps (least recently used goes first): each
// holds its arena, so a loop over ever new shapes must not keep them all.
inline constexpr size_t kMaxPrograms = 256;

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
  std::list<std::string> recent_;  // most recent first
  struct Entry {
    std::shared_ptr<Program> program;
    std::list<std::string>::iterator place;
  };
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace braze
