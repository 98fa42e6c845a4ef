// Which device executor runs `device="cuda"` in this process.
#pragma once

#include <memory>
#include <optional>
#include <string>

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

// Why this process has no CUDA device to run on: no libcuda at all (no
// NVIDIA driver), a driver that finds no device (cuInit's
// CUDA_ERROR_NO_DEVICE, or a count of 0), BRAZE_CUDA=emulate, or a build
// without jit_cuda. nullopt when a driver and a device are there, even if
// making the executor then fails (a driver too old, NVRTC missing or newer
// than the driver): that is a broken setup, which a test that needs a GPU
// reports as a failure rather than skipping (tests/cpp/cuda_test_env.h,
// tests/python/conftest.py).
std::optional<std::string> cuda_absent();

}  // namespace braze
