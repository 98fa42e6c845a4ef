// The plan verifier: checks any MemoryPlan against the lives it was made
// from, trusting nothing the planner computed.
#pragma once

#include <string>

#include "memplan/liveness.h"
#include "memplan/plan.h"

namespace braze::memplan {

// The first thing wrong with `p`, in words, or "" when nothing is:
//   - one placement per scratch buffer, for the same node, in the same order;
//   - each reserves at least the buffer's bytes;
//   - offsets are multiples of the plan's alignment;
//   - every buffer ends inside the arena;
//   - no two buffers whose lives overlap share a byte, except an output
//     written over its dead input in place (Note [In-place outputs]: equal
//     offsets and bytes, the input's life ending where the output's begins);
//   - no user-visible buffer (graph input or output) is in the arena.
std::string plan_problem(const Liveness& l, const MemoryPlan& p);

// BRAZE_ASSERT that plan_problem is "": a failing plan is a planner bug.
void verify_plan(const Liveness& l, const MemoryPlan& p);

}  // namespace braze::memplan
