// Generated CUDA source compiled by the host C++ compiler against
// device/host_emulation.h into one shared object, loaded with dlopen: the
// piece both host emulation as a user mode (emulated_executor.h) and the
// emulation tests run kernels through.
#pragma once

#include <span>
#include <string>

#include "jit_cuda/cuda_source.h"

namespace braze::cuda {

// $CXX, else `c++`: the compiler emulation runs.
std::string host_compiler();

class EmulatedKernels {
 public:
  // Each kernel gets a host trampoline `<name>_host(void* const* params)`
  // taking cuLaunchKernel-style parameter pointers. Compiles in a fresh
  // temporary directory, removed once the object is loaded. Throws
  // std::runtime_error with the compiler's command and log when it fails,
  // and says so plainly when there is no compiler.
  explicit EmulatedKernels(std::span<const CudaKernelSource> kernels);
  ~EmulatedKernels();
  EmulatedKernels(const EmulatedKernels&) = delete;
  EmulatedKernels& operator=(const EmulatedKernels&) = delete;

  using Entry = void (*)(void* const*);
  Entry entry(const std::string& kernel_name) const;  // throws when absent
  // Runs `entry` as `grid` blocks of `block` threads on the calling thread
  // (the emulation's globals live in this object: one launch at a time).
  void launch(Entry entry, void* const* params, unsigned grid, unsigned block) const;

 private:
  void* handle_ = nullptr;
  void (*launch_)(Entry, void* const*, unsigned, unsigned) = nullptr;
};

}  // namespace braze::cuda
