#include "jit_cuda/emulated_executor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "graph/check.h"
#include "jit_cuda/emulated_kernels.h"
#include "jit_cuda/library_calls.h"
#include "jit_cuda/library_epilogue.h"

namespace braze::cuda {

namespace {

struct EmulatedKernel final : DeviceKernel {
  std::shared_ptr<const EmulatedKernels> object;  // shared by the kernels compiled with it
  EmulatedKernels::Entry entry = nullptr;
};

}  // namespace

void* EmulatedExecutor::allocate(size_t bytes) {
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) throw std::bad_alloc();
  return p;
}

void EmulatedExecutor::free(void* p, bool) noexcept { std::free(p); }

void EmulatedExecutor::copy_to_device(void* dst, const void* host, size_t bytes) { std::memcpy(dst, host, bytes); }
void EmulatedExecutor::copy_to_host(void* host, const void* src, size_t bytes) { std::memcpy(host, src, bytes); }
void EmulatedExecutor::copy_on_device(void* dst, const void* src, size_t bytes) { std::memmove(dst, src, bytes); }
void EmulatedExecutor::fill(void* dst, uint8_t byte, size_t bytes) { std::memset(dst, byte, bytes); }

const LibraryRules& EmulatedExecutor::library_rules() const { return cuda_library_rules(); }

PreparedLibraryCall EmulatedExecutor::prepare_library(const Graph& g, const FusedGroup& group, const LibraryOptions&) {
  check_library_call(g, group);  // refused here as on a GPU
  return {};                     // then run by the host's library
}

void EmulatedExecutor::run_library(const DeviceLibraryCall&, const std::function<const Array&(NodeId)>&, Array&,
                                   void*) {
  BRAZE_ASSERT(false, "host emulation runs library calls on the host's library");
}

std::vector<LoadedKernel> EmulatedExecutor::load(std::span<const KernelSpec* const> specs) {
  std::vector<LoadedKernel> out(specs.size());
  std::vector<Future> waits(specs.size());
  // The misses this call compiles, each with the promise its waiters hold.
  std::vector<size_t> mine;
  std::vector<std::string> keys(specs.size());
  std::vector<std::promise<std::shared_ptr<const DeviceKernel>>> promises;
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < specs.size(); ++i) {
      keys[i] = kernel_key(*specs[i]).hex();
      if (auto it = kernels_.find(keys[i]); it != kernels_.end()) {
        waits[i] = it->second;
        out[i].origin = KernelOrigin::Memory;
        continue;
      }
      promises.emplace_back();
      kernels_.emplace(keys[i], promises.back().get_future().share());
      waits[i] = kernels_.at(keys[i]);
      mine.push_back(i);
    }
  }
  if (!mine.empty()) {
    try {
      std::vector<CudaKernelSource> sources;
      for (size_t i : mine) sources.push_back(render_cuda(*specs[i]));
      auto object = std::make_shared<const EmulatedKernels>(sources);
      for (size_t j = 0; j < mine.size(); ++j) {
        auto k = std::make_shared<EmulatedKernel>();
        k->source = sources[j];
        k->object = object;
        k->entry = object->entry(sources[j].name);
        promises[j].set_value(std::move(k));
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      for (size_t j = 0; j < mine.size(); ++j) {
        promises[j].set_exception(std::current_exception());
        kernels_.erase(keys[mine[j]]);  // the next caller tries again
      }
      throw;
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) out[i].kernel = waits[i].get();  // rethrows a racing compile's error
  return out;
}

void EmulatedExecutor::launch(const DeviceKernel& kernel, void** params) {
  const auto& k = static_cast<const EmulatedKernel&>(kernel);
  const CudaLaunch& shape = k.source.launch;
  if (shape.work == 0) return;
  std::lock_guard lock(launch_mutex_);
  k.object->launch(k.entry, params, static_cast<unsigned>(shape.blocks(kEmulatedMaxBlocks)),
                   static_cast<unsigned>(shape.threads_up_to(kEmulatedMaxThreads)));
}

}  // namespace braze::cuda
