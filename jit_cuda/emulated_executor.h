// Host emulation as a device (BRAZE_CUDA=emulate): a checking mode for
// machines without a GPU, where everything above the driver runs as it
// would on one: device arrays, transfers, the program's arena, rendering
// and launching generated CUDA kernels.
#pragma once

#include <future>
#include <mutex>
#include <string>
#include <unordered_map>

#include "jit_cuda/executor.h"

namespace braze::cuda {

// Note [Host emulation]
// Device memory is host memory (256-byte aligned, like cuMemAlloc's), so a
// copy is a memcpy, and a kernel is the generated CUDA source compiled by
// the host C++ compiler against device/host_emulation.h (EmulatedKernels):
// the same text NVRTC compiles, run on CPU fibers. load() compiles all of
// its misses into one shared object (the compiler's start-up, ~1 s, is most
// of the cost) and keeps every kernel in memory by its key for the life of
// the process; nothing goes to disk. A launch runs at most
// kEmulatedMaxBlocks blocks of at most kEmulatedMaxThreads threads (all of
// a block's where the kernel needs them: CudaLaunch::exact_threads): the
// generated loops are grid- and block-stride, so this covers every index,
// still checks the strides, and two warps check block_reduce's shared
// memory step, at a fraction of the fibers a full grid would need.
// Launches are serialised (the emulation's globals are per object and
// one block runs at a time). Library calls (matmul, conv2d) are planned as
// on a GPU, with its epilogue rules (so the schedule, and what is refused,
// is the GPU's), then run on the host's library against the same memory
// (runtime/execute.cpp; Note [CUDA library calls]).
inline constexpr int kEmulatedMaxBlocks = 4;
inline constexpr int kEmulatedMaxThreads = 64;

class EmulatedExecutor final : public DeviceExecutor {
 public:
  std::string describe() const override { return "host emulation (BRAZE_CUDA=emulate)"; }
  bool emulated() const override { return true; }

  void* allocate(size_t bytes) override;
  void free(void* p, bool exported) noexcept override;
  void copy_to_device(void* dst, const void* host, size_t bytes) override;
  void copy_to_host(void* host, const void* src, size_t bytes) override;
  void copy_on_device(void* dst, const void* src, size_t bytes) override;
  void fill(void* dst, uint8_t byte, size_t bytes) override;

  std::vector<LoadedKernel> load(std::span<const KernelSpec* const> specs) override;
  void launch(const DeviceKernel& kernel, void** params) override;
  void synchronize() override {}

  const LibraryRules& library_rules() const override;
  PreparedLibraryCall prepare_library(const Graph& g, const FusedGroup& group, const LibraryOptions& o) override;
  void run_library(const DeviceLibraryCall& call, const std::function<const Array&(NodeId)>& buffer, Array& out,
                   void* workspace) override;

  // Note [Programs as CUDA graphs], as a list: the launches captured (with
  // copies of their parameters) run in order at each launch of the graph.
  void begin_capture() override;
  std::unique_ptr<DeviceGraph> end_capture() override;
  void abort_capture() noexcept override;

  struct Recorded {
    const DeviceKernel* kernel;
    std::vector<uint64_t> params;  // every parameter is 8 bytes (runtime/device_program.cpp)
  };

 private:
  using Future = std::shared_future<std::shared_ptr<const DeviceKernel>>;
  std::mutex mutex_;
  std::unordered_map<std::string, Future> kernels_;  // by kernel key
  std::mutex launch_mutex_;
  std::mutex capture_mutex_;
  std::unique_lock<std::mutex> capture_lock_;  // held from begin_capture to end_capture
  std::vector<Recorded> recorded_;
  static thread_local const EmulatedExecutor* capturing_;
};

}  // namespace braze::cuda
