// Where a tensor lives (graph/device.h), and whether this process can put
// tensors there.
#pragma once

#include "graph/device.h"

namespace braze {

// Throws std::runtime_error saying why `d` cannot hold tensors in this
// process: no CUDA backend in this build, no libcuda, no device, ...
// (Note [CUDA executors] in runtime/cuda_executors.h).
void check_available(Device d);

}  // namespace braze
