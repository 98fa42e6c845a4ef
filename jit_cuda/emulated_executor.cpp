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

std::vector<uint64_t> copy_params(const DeviceKernel& kernel, void** params) {
  std::vector<uint64_t> values(kernel.source.param_types.size());
  for (size_t i = 0; i < values.size(); ++i) std::memcpy(&values[i], params[i], sizeof values[i]);
  return values;
}

class EmulatedGraph final : public DeviceGraph {
 public:
  EmulatedGraph(EmulatedExecutor& ex, std::vector<EmulatedExecutor::Recorded> nodes)
      : ex_(ex), nodes_(std::move(nodes)) {}
  void set_params(size_t node, const DeviceKernel& kernel, void** params) override {
    BRAZE_ASSERT(node < nodes_.size() && nodes_[node].kernel == &kernel, "node ", node, " is not ",
                 kernel.source.name);
    nodes_[node].params = copy_params(kernel, params);
  }
  void launch() override {
    for (EmulatedExecutor::Recorded& n : nodes_) {
      std::vector<void*> params(n.params.size());
      for (size_t i = 0; i < params.size(); ++i) params[i] = &n.params[i];
      ex_.launch(*n.kernel, params.data());
    }
  }

 private:
  EmulatedExecutor& ex_;
  std::vector<EmulatedExecutor::Recorded> nodes_;
};

}  // namespace

thread_local const EmulatedExecutor* EmulatedExecutor::capturing_ = nullptr;

void EmulatedExecutor::begin_capture() {
  std::unique_lock lock(capture_mutex_);
  capturing_ = this;
  recorded_.clear();
  capture_lock_ = std::move(lock);
}

std::unique_ptr<DeviceGraph> EmulatedExecutor::end_capture() {
  BRAZE_ASSERT(capturing_ == this, "end_capture without begin_capture on this thread");
  std::unique_lock lock = std::move(capture_lock_);
  capturing_ = nullptr;
  return std::make_unique<EmulatedGraph>(*this, std::move(recorded_));
}

void EmulatedExecutor::abort_capture() noexcept {
  if (capturing_ != this) return;
  std::unique_lock lock = std::move(capture_lock_);
  capturing_ = nullptr;
  recorded_.clear();
}

void* EmulatedExecutor::allocate(size_t bytes) {
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) throw std::bad_alloc();
  return p;
}

void EmulatedExecutor::free(void* p, bool) noexcept { std::free(p); }

// As on the driver: a copy while capturing would run now, not in the graph.
#define BRAZE_NOT_CAPTURING(what) BRAZE_ASSERT(capturing_ != this, what, " while capturing a graph")
void EmulatedExecutor::copy_to_device(void* dst, const void* host, size_t bytes) {
  BRAZE_NOT_CAPTURING("a copy to the device");
  std::memcpy(dst, host, bytes);
}
void EmulatedExecutor::copy_to_host(void* host, const void* src, size_t bytes) {
  BRAZE_NOT_CAPTURING("a copy from the device");
  std::memcpy(host, src, bytes);
}
void EmulatedExecutor::copy_on_device(void* dst, const void* src, size_t bytes) {
  BRAZE_NOT_CAPTURING("a copy on the device");
  std::memmove(dst, src, bytes);
}
void EmulatedExecutor::fill(void* dst, uint8_t byte, size_t bytes) {
  BRAZE_NOT_CAPTURING("a fill");
  std::memset(dst, byte, bytes);
}
#undef BRAZE_NOT_CAPTURING

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
  if (capturing_ == this) {
    recorded_.push_back({&kernel, copy_params(kernel, params)});
    return;
  }
  std::lock_guard lock(launch_mutex_);
  k.object->launch(k.entry, params, static_cast<unsigned>(shape.blocks(kEmulatedMaxBlocks)),
                   static_cast<unsigned>(shape.threads_up_to(kEmulatedMaxThreads)));
}

}  // namespace braze::cuda
