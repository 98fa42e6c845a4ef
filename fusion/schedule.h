// A schedule: the graph after the pass pipeline, cut into steps that run in
// order. What a backend executes and what explain() prints.
#pragma once

#include <string>
#include <vector>

#include "fusion/kernel_spec.h"
#include "fusion/partition.h"
#include "graph/graph.h"

namespace braze {

struct Step {
  FusedGroup group;
  // Kernel steps only: the spec, and per spec input the node it reads (the
  // base node of a buffer, a Const, an Arange). The spec's outputs are the
  // group's outputs, in order.
  KernelSpec spec;
  std::vector<NodeId> reads;
  // Memory the step uses while it runs and never after: a library call's
  // scratchpad and packed operand (Note [Step workspaces] in
  // memplan/liveness.h). Only the backend knows the size, so the partition
  // leaves 0 and the runtime fills it in (size_workspaces, runtime/execute.h).
  int64_t workspace_bytes = 0;
};

struct Schedule {
  Graph graph;  // after the pass pipeline; steps refer to its node ids
  std::vector<Step> steps;
  std::vector<UnfusedEdge> unfused;
};

// The spec of one kernel group; `reads` receives the node behind each input.
// The nodes `inlined` marks are computed where read (Note [Index
// expressions are recomputed], partition.cpp).
KernelSpec build_spec(const Graph& g, const FusedGroup& group, const std::vector<Space>& space,
                      const std::vector<bool>& inlined, std::vector<NodeId>& reads);

// Runs the pass pipeline, copies the library operands `rules` cannot read
// densely, partitions (library calls taking the post-ops `rules` allow:
// Note [Library capabilities]), and builds a spec per kernel group.
Schedule make_schedule(const Graph& g, const LibraryRules& rules = cpu_library_rules());

// Human-readable: each group with its ops, inputs (with strides) and
// outputs, then every edge that was not fused and why.
std::string explain(const Schedule& s);
// One kernel step as explain() shows it: its key and the nodes it fuses,
// then its canonical text with the node behind each input and output.
std::string explain_kernel(const Schedule& s, const Step& step);

}  // namespace braze
