// The program's side of Note [Programs as CUDA graphs]
// (jit_cuda/executor.h): when a device program runs as one CUDA graph, and
// what it remembers between runs to launch, patch or capture it again.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "jit_cuda/executor.h"

namespace braze {

// Note [When a program is a graph]
// A device program is captured at its second run (a program run once never
// pays for instantiating a graph) and runs as its graph from then on, with
// these exceptions, each run step by step:
//   - a library step that is not a device library call: host emulation
//     runs matmul and conv2d on the host's library, which no graph holds;
//   - a library call scaled by a 0-d value computed on the device (alpha
//     is read on the host as the call is made, which a capture cannot do);
//   - a run with a 0-d input on the device (a scalar parameter is read on
//     the host at each run: Note [Scalar parameters]);
//   - a run that times its steps (profile) or poisons the arena, and a
//     program without an arena (its intermediates are allocated at each
//     run, at addresses the graph would not know);
//   - BRAZE_CUDA_GRAPHS=0 when the program was made (benchmarks compare);
//   - a program whose capture failed once (said in BRAZE_LOG), from then on.
struct DeviceGraphState {
  bool possible = false;  // the program's steps allow a graph, and BRAZE_CUDA_GRAPHS did
  bool failed = false;
  int64_t runs = 0;
  std::unique_ptr<cuda::DeviceGraph> graph;
  // What the last launch of the graph was made for: the inputs', outputs'
  // and arena's addresses, the 0-d inputs' values. The same again: the
  // graph is launched as it is.
  std::vector<uint64_t> signature;
  std::vector<int64_t> node;                   // per step: its kernel's node in the graph, or -1
  std::vector<std::vector<uint64_t>> params;   // per kernel step: the parameter values its node holds
  std::vector<std::vector<uint64_t>> library;  // per library step: the addresses and values it was captured with
};

// BRAZE_CUDA_GRAPHS: unset or anything but "0" runs device programs as
// CUDA graphs (docs/environment.md).
bool cuda_graphs_enabled();

}  // namespace braze
