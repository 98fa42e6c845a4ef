// Which device executor runs `device="cuda"` in this process.
#pragma once

#include <memory>

#include "graph/device.h"
#include "jit_cuda/executor.h"

namespace braze {

// Note [CUDA executors]
// BRAZE_CUDA picks how CUDA tensors run, read at each placement (so a test
// may set it in-process before its first CUDA tensor):
// - unset or "driver": libcuda, NVRTC and device N (runtime/driver_executor.h);
//   when one is missing, the error says which and what was tried;
// - "emulate": host emulation (Note [Host emulation] in
//   jit_cuda/emulated_executor.h), a checking mode for machines without a
//   GPU: CUDA tensors live in host memory and run the generated CUDA
//   kernels compiled by the host C++ compiler. Every cuda:N is the same
//   emulated device.
// One executor per kind and device for the process's life; device arrays
// keep theirs alive, and a program is keyed by the executor it was
// compiled for (runtime/realize.cpp), so switching modes never mixes them.
// A build without jit_cuda (no CUDA headers) has no CUDA backend at all:
// every CUDA placement says so (cuda_executors_none.cpp).
std::shared_ptr<cuda::DeviceExecutor> cuda_executor(Device d);

}  // namespace braze
