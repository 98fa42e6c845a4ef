// The device side of a program: loading its CUDA kernels once and
// launching a kernel step with device pointers (runtime/execute.cpp calls
// these when Prepared::device is set).
#pragma once

#include <span>

#include "fusion/schedule.h"
#include "graph/array.h"
#include "jit_cuda/executor.h"
#include "memplan/plan.h"
#include "runtime/execute.h"

namespace braze {

// Note [Device programs]
// A program whose tensors are on a CUDA device is the CPU's program with
// three things swapped (runtime/execute.cpp): each kernel step's spec is
// rendered to CUDA (render_cuda) and loaded by the device's executor once,
// when the program is made (Prepared::device_kernels, as
// Prepared::kernels on the CPU); the arena and every output come from
// device memory (the allocator realize passes), so a replay allocates only
// the outputs the user keeps, on the device; and a step is a launch with
// the device addresses of its inputs and outputs. What stays the same: the
// schedule, the memory plan (256-byte aligned, as the GPU wants, and with
// no output written over an input: generated kernels mark every pointer
// __restrict__), the program cache (keyed by device and executor too), and
// the scalar parameters (Note [Scalar parameters]), which live in host
// memory and reach a kernel by value. Library calls (matmul, conv2d) are
// cuBLASLt and cuDNN calls on a GPU (Note [CUDA library calls] in
// jit_cuda/executor.h), prepared once with the program, their workspaces
// in its arena; the schedule gives them only the post-ops those libraries
// apply (the executor's library_rules(), Note [Library
// capabilities]). Under host emulation the device memory is host memory,
// so they run on the CPU library against it, with the same schedule.
memplan::PlanOptions device_plan_options();

// Fills p.device_kernels from p.device (counting kernels_compiled,
// cache_hits_memory, cache_hits_disk).
void load_device_kernels(const Schedule& s, Prepared& p);

// A library group's call on `ex`, with the options of this process
// (BRAZE_ALLOW_TF32: cuda::allow_tf32()).
cuda::PreparedLibraryCall prepare_device_library(cuda::DeviceExecutor& ex, const Graph& g, const FusedGroup& group);

// A 0-d array's value as a kernel's by-value argument, wherever it lives.
void read_scalar(const Array& a, KernelArg& arg);

// The parameter values of `kernel` for `spec`, 8 bytes each, in the order
// of CudaKernelSource: per input a pointer (device addresses for buffers),
// a value, or start and step; then per output a pointer.
std::vector<uint64_t> kernel_parameters(const cuda::DeviceKernel& kernel, const KernelSpec& spec,
                                        std::span<const KernelArg> args, std::span<std::byte* const> outs);
// A pointer to each (cuLaunchKernel's form).
std::vector<void*> parameter_pointers(std::vector<uint64_t>& values);

}  // namespace braze
