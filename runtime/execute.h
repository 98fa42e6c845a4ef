// Runs a schedule on the CPU: kernel steps, then library calls, in order.
#pragma once

#include <span>
#include <vector>

#include "fusion/schedule.h"
#include "graph/array.h"

namespace braze {

// `inputs` bound by input number; returns one dense array per graph output.
// Counts kernels_launched.
std::vector<Array> execute(const Schedule& s, std::span<const Array> inputs, const ArrayAllocator& allocate);

}  // namespace braze
