// Runs a KernelSpec with the reference interpreter's per-node code: the
// oracle the generated kernels are checked against, value for value. Each
// body value is stored in its dtype exactly as the graph interpreter stores
// the node, so a fused run and an unfused one agree bit for bit.
#pragma once

#include <span>

#include "fusion/kernel_spec.h"

namespace braze {

// `inputs` one per spec input; `outputs` one dense buffer per spec output,
// of the shape of the output's space.
void interpret_spec(const KernelSpec& spec, std::span<const KernelArg> inputs, std::span<std::byte* const> outputs);

}  // namespace braze
