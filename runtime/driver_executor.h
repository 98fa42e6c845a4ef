// The CUDA device executor over the driver API: what `device="cuda"` runs
// on where libcuda and a GPU are (Note [Device executors] in
// jit_cuda/executor.h). Built where jit_cuda is.
#pragma once

#include <memory>

#include "jit_cuda/executor.h"

namespace braze {

// Device `index`'s primary context, made current on each calling thread;
// cubins from the process's CubinCache (memory, then the disk cache, then
// NVRTC for the device's architecture). Throws CudaUnavailable when there
// is no libcuda or libnvrtc, CudaError when the driver finds no device.
std::shared_ptr<cuda::DeviceExecutor> make_driver_executor(int index);

}  // namespace braze
