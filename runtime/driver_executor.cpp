#include "runtime/driver_executor.h"

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "jit_cuda/driver_objects.h"
#include "jit_cuda/library_calls.h"
#include "jit_cuda/library_epilogue.h"
#include "jit_cuda/nvrtc_api.h"
#include "runtime/cubin_cache.h"

namespace braze {

namespace {

using cuda::DeviceExecutor;
using cuda::DeviceKernel;
using cuda::KernelOrigin;
using cuda::LoadedKernel;

CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// One cache of cubins per process: the disk cache behind it is shared with
// other processes (Note [Disk cache entries]).
CubinCache& cubins() {
  static CubinCache cache{DiskCache(DiskCache::default_dir())};
  return cache;
}

struct DriverKernel final : DeviceKernel {
  std::shared_ptr<const cuda::Module> module;
  CUfunction function = nullptr;
};

class DriverExecutor final : public DeviceExecutor {
 public:
  explicit DriverExecutor(int index)
      : context_(index), arch_(context_.compute_capability()), libraries_(stream_) {
    cuda::nvrtc();  // no NVRTC, no kernels: say so now rather than at the first realize
  }

  std::string describe() const override {
    return context_.device_name() + " (sm_" + std::to_string(arch_) + ")";
  }
  bool emulated() const override { return false; }

  void* allocate(size_t bytes) override {
    context_.make_current();
    CUdeviceptr p = 0;
    BRAZE_CU(cuMemAlloc, (&p, bytes), "allocating " + std::to_string(bytes) + " bytes of device memory");
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  void free(void* p) noexcept override {
    // Errors ignored: this may run while unwinding from a failed kernel.
    if (!p || cuda::driver().cuCtxSetCurrent(context_.get()) != CUDA_SUCCESS) return;
    cuda::driver().cuMemFree(dptr(p));
  }
  void copy_to_device(void* dst, const void* host, size_t bytes) override {
    context_.make_current();
    if (bytes) BRAZE_CU(cuMemcpyHtoD, (dptr(dst), host, bytes), "copying to the device");
  }
  void copy_to_host(void* host, const void* src, size_t bytes) override {
    context_.make_current();
    if (bytes) BRAZE_CU(cuMemcpyDtoH, (host, dptr(src), bytes), "copying from the device");
  }
  void copy_on_device(void* dst, const void* src, size_t bytes) override {
    context_.make_current();
    if (bytes) BRAZE_CU(cuMemcpyDtoD, (dptr(dst), dptr(src), bytes), "copying on the device");
  }
  void fill(void* dst, uint8_t byte, size_t bytes) override {
    context_.make_current();
    if (bytes) BRAZE_CU(cuMemsetD8, (dptr(dst), byte, bytes), "filling device memory");
  }

  std::vector<LoadedKernel> load(std::span<const KernelSpec* const> specs) override {
    context_.make_current();
    std::vector<LoadedKernel> out;
    for (const KernelSpec* spec : specs) {
      CubinCache::Lookup c = cubins().get(*spec, arch_);
      out.push_back({function(*c.cubin),
                     c.source == CubinCache::Source::Memory ? KernelOrigin::Memory
                     : c.source == CubinCache::Source::Disk ? KernelOrigin::Disk
                                                            : KernelOrigin::Compiled,
                     c.evicted});
    }
    return out;
  }

  void launch(const DeviceKernel& kernel, void** params) override {
    const auto& k = static_cast<const DriverKernel&>(kernel);
    const cuda::CudaLaunch& shape = k.source.launch;
    if (shape.work == 0) return;
    context_.make_current();
    // The loops are grid-stride: more blocks than the grid's x limit is
    // never needed, and a few waves over the SMs saturate the device.
    auto blocks = static_cast<unsigned>(shape.blocks(int64_t{1} << 20));
    BRAZE_CU(cuLaunchKernel,
             (k.function, blocks, 1, 1, static_cast<unsigned>(shape.threads), 1, 1, 0, stream_, params, nullptr),
             "launching " + k.source.name);
  }

  void synchronize() override {
    // The stream, not the context: every kernel, copy and library call
    // goes to stream_. (cuCtxSynchronize resolved through cuGetProcAddress
    // on a CUDA 13.0 driver came back as cuCtxSynchronize_v2, which takes a
    // context: called without one it failed with "context is destroyed".)
    context_.make_current();
    BRAZE_CU(cuStreamSynchronize, (stream_), "waiting for the device");
  }

  const LibraryRules& library_rules() const override { return cuda::cuda_library_rules(); }

  cuda::PreparedLibraryCall prepare_library(const Graph& g, const FusedGroup& group,
                                            const cuda::LibraryOptions& o) override {
    context_.make_current();
    return libraries_.prepare(g, group, o);
  }

  void run_library(const cuda::DeviceLibraryCall& call, const std::function<const Array&(NodeId)>& buffer, Array& out,
                   void* workspace) override {
    context_.make_current();
    libraries_.run(call, buffer, out, workspace);
  }

 private:
  // The loaded function of a cubin, once per kernel (a module per kernel).
  std::shared_ptr<const DeviceKernel> function(const Cubin& cubin) {
    std::lock_guard lock(mutex_);
    auto it = loaded_.find(cubin.kernel.name);
    if (it != loaded_.end()) return it->second;
    auto k = std::make_shared<DriverKernel>();
    k->source = cubin.kernel;
    k->module = std::make_shared<const cuda::Module>(cubin.image, cubin.kernel.name);
    k->function = k->module->function(cubin.kernel.name);
    loaded_.emplace(cubin.kernel.name, k);
    return k;
  }

  cuda::Context context_;
  int arch_;
  // Kernels and library calls all go to the legacy default stream, which
  // orders them with each other and with the synchronous copies (Note
  // [Device executors]).
  CUstream stream_ = nullptr;
  cuda::LibraryCalls libraries_;  // Note [CUDA library calls]
  std::mutex mutex_;
  // Keyed by the kernel's name, which is unique per spec key (the
  // CubinCache may drop a cubin from memory and read it again from disk:
  // the same kernel, not loaded twice). Modules stay loaded for the
  // executor's life (Note [Bounded caches] in runtime/program.h): a
  // module is a kernel's code on the device, kilobytes, and unloading one
  // that a launch still queued on the stream may run would need a
  // synchronization of the device.
  std::unordered_map<std::string, std::shared_ptr<const DeviceKernel>> loaded_;
};

}  // namespace

std::shared_ptr<cuda::DeviceExecutor> make_driver_executor(int index) {
  return std::make_shared<DriverExecutor>(index);
}

}  // namespace braze
