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

// The loops are grid-stride: more blocks than the grid's x limit is never
// needed, and a few waves over the SMs saturate the device.
unsigned grid_of(const cuda::CudaLaunch& shape) { return static_cast<unsigned>(shape.blocks(int64_t{1} << 20)); }

// Note [Programs as CUDA graphs]: an instantiated graph, its kernel nodes
// in the order they were captured, and the stream and context it runs on.
class DriverGraph final : public cuda::DeviceGraph {
 public:
  DriverGraph(CUgraph graph, CUgraphExec exec, std::vector<CUgraphNode> nodes, const cuda::Context& context,
              CUstream stream)
      : graph_(graph), exec_(exec), nodes_(std::move(nodes)), context_(context), stream_(stream) {}
  ~DriverGraph() override {
    const cuda::DriverApi& d = cuda::driver();
    if (d.cuCtxSetCurrent(context_.get()) != CUDA_SUCCESS) return;
    d.cuGraphExecDestroy(exec_);
    d.cuGraphDestroy(graph_);
  }

  void set_params(size_t node, const DeviceKernel& kernel, void** params) override {
    const auto& k = static_cast<const DriverKernel&>(kernel);
    BRAZE_ASSERT(node < nodes_.size(), "kernel node ", node, " of a graph of ", nodes_.size());
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = k.function;
    p.gridDimX = grid_of(k.source.launch);
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = static_cast<unsigned>(k.source.launch.threads);
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = params;
    context_.make_current();
    BRAZE_CU(cuGraphExecKernelNodeSetParams, (exec_, nodes_[node], &p), "updating " + k.source.name + "'s graph node");
  }

  void launch() override {
    context_.make_current();
    BRAZE_CU(cuGraphLaunch, (exec_, stream_), "launching a program's CUDA graph");
  }

 private:
  CUgraph graph_;
  CUgraphExec exec_;
  std::vector<CUgraphNode> nodes_;
  const cuda::Context& context_;
  CUstream stream_;
};

// Note [Stream-ordered device memory]
// The driver executor allocates from a memory pool of its own
// (cuMemPoolCreate) on its stream (cuMemAllocFromPoolAsync) and frees into
// it on the same stream (cuMemFreeAsync). A free is then ordered after
// every kernel, library call and copy queued before it, so memory a queued
// kernel still reads is never handed out again early (cuMemFree would
// have freed it at once, or synchronized the device to be safe), and a
// later allocation on the stream reuses it without waiting. The pool's
// release threshold is unbounded: freed memory stays in the pool, so a
// program's outputs, kept and dropped every iteration, cost no driver
// allocation after the first (a caching allocator, as PyTorch's). When an
// allocation fails for lack of memory, the pool gives back what it holds
// (cuMemPoolTrimTo, after the stream drains) and the allocation is tried
// once more. Memory another library was given (mark_exported) may still be
// read on that library's streams: freeing it waits for the whole context
// first. A device without memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED
// 0) gets cuMemAlloc, and each free waits for the stream before cuMemFree.
class DriverExecutor final : public DeviceExecutor {
 public:
  explicit DriverExecutor(int index) : context_(index), arch_(context_.compute_capability()), libraries_(stream_.get()) {
    cuda::nvrtc();  // no NVRTC, no kernels: say so now rather than at the first realize
    int pools = 0;
    BRAZE_CU(cuDeviceGetAttribute, (&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, context_.device()),
             "asking whether the device has memory pools");
    if (pools) {
      CUmemPoolProps props{};
      props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      props.location.id = context_.device();
      BRAZE_CU(cuMemPoolCreate, (&pool_, &props), "creating braze's device memory pool");
      cuuint64_t keep_all = ~cuuint64_t{0};
      BRAZE_CU(cuMemPoolSetAttribute, (pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all),
               "letting braze's device memory pool keep freed memory");
    }
  }

  std::string describe() const override {
    return context_.device_name() + " (sm_" + std::to_string(arch_) + ")";
  }
  bool emulated() const override { return false; }

  void* allocate(size_t bytes) override {
    context_.make_current();
    CUdeviceptr p = 0;
    const std::string what = "allocating " + std::to_string(bytes) + " bytes of device memory";
    if (!pool_) {
      BRAZE_CU(cuMemAlloc, (&p, bytes), what);
    } else if (CUresult r = cuda::driver().cuMemAllocFromPoolAsync(&p, bytes, pool_, stream_.get());
               r == CUDA_ERROR_OUT_OF_MEMORY) {
      stream_.synchronize();  // what was freed is back in the pool: give it all to the driver, then once more
      BRAZE_CU(cuMemPoolTrimTo, (pool_, 0), "returning braze's pooled device memory to the driver");
      BRAZE_CU(cuMemAllocFromPoolAsync, (&p, bytes, pool_, stream_.get()), what);
    } else {
      cuda::check_driver(r, "cuMemAllocFromPoolAsync", what);
    }
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  void free(void* p, bool exported) noexcept override {
    // Errors ignored: this may run while unwinding from a failed kernel.
    const cuda::DriverApi& d = cuda::driver();
    if (!p || d.cuCtxSetCurrent(context_.get()) != CUDA_SUCCESS) return;
    if (exported) d.cuCtxSynchronize();  // the consumer's streams too (Note [Stream-ordered device memory])
    if (pool_) {
      d.cuMemFreeAsync(dptr(p), stream_.get());
    } else {
      d.cuStreamSynchronize(stream_.get());
      d.cuMemFree(dptr(p));
    }
  }
  void copy_to_device(void* dst, const void* host, size_t bytes) override {
    not_capturing("a copy to the device");
    context_.make_current();
    if (bytes) BRAZE_CU(cuMemcpyHtoDAsync, (dptr(dst), host, bytes, stream_.get()), "copying to the device");
  }
  void copy_to_host(void* host, const void* src, size_t bytes) override {
    not_capturing("a copy from the device");
    context_.make_current();
    if (!bytes) return;
    BRAZE_CU(cuMemcpyDtoHAsync, (host, dptr(src), bytes, stream_.get()), "copying from the device");
    stream_.synchronize();  // the caller reads `host` next
  }
  void copy_on_device(void* dst, const void* src, size_t bytes) override {
    not_capturing("a copy on the device");
    context_.make_current();
    if (bytes) BRAZE_CU(cuMemcpyDtoDAsync, (dptr(dst), dptr(src), bytes, stream_.get()), "copying on the device");
  }
  void fill(void* dst, uint8_t byte, size_t bytes) override {
    not_capturing("a fill");
    context_.make_current();
    if (bytes) BRAZE_CU(cuMemsetD8Async, (dptr(dst), byte, bytes, stream_.get()), "filling device memory");
  }

  std::vector<LoadedKernel> load(std::span<const KernelSpec* const> specs) override {
    context_.make_current();
    std::vector<LoadedKernel> out;
    // Note [Compiling a program's kernels together]
    for (const CubinCache::Lookup& c : cubins().get_many(specs, arch_, compile_threads())) {
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
    BRAZE_CU(cuLaunchKernel,
             (k.function, grid_of(shape), 1, 1, static_cast<unsigned>(shape.threads), 1, 1, 0, stream(), params, nullptr),
             "launching " + k.source.name);
    if (capturing_ != this) return;
    // The node just captured: the one the capture's next node depends on.
    CUstreamCaptureStatus status{};
    const CUgraphNode* last = nullptr;
    size_t n = 0;
    BRAZE_CU(cuStreamGetCaptureInfo, (capture_stream_.get(), &status, nullptr, nullptr, &last, nullptr, &n),
             "finding the graph node of " + k.source.name);
    BRAZE_ASSERT(status == CU_STREAM_CAPTURE_STATUS_ACTIVE && n == 1, "a capture lost its kernel node");
    nodes_.push_back(last[0]);
  }

  void synchronize() override {
    // The stream, not the context: every kernel, copy and library call
    // goes to stream_. (cuCtxSynchronize resolved through cuGetProcAddress
    // on a CUDA 13.0 driver came back as cuCtxSynchronize_v2, which takes a
    // context: called without one it failed with "context is destroyed".)
    context_.make_current();
    stream_.synchronize();
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
    libraries_.run(call, buffer, out, workspace, stream());
  }

  // Note [Programs as CUDA graphs]. The capture goes to a stream of its
  // own, so that other threads' work on the device's stream meanwhile runs
  // and is not captured; one capture at a time.
  void begin_capture() override {
    std::unique_lock lock(capture_mutex_);
    context_.make_current();
    BRAZE_CU(cuStreamBeginCapture, (capture_stream_.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
             "capturing a program as a CUDA graph");
    capturing_ = this;
    nodes_.clear();
    capture_lock_ = std::move(lock);
  }
  std::unique_ptr<cuda::DeviceGraph> end_capture() override {
    BRAZE_ASSERT(capturing_ == this, "end_capture without begin_capture on this thread");
    std::unique_lock lock = std::move(capture_lock_);
    capturing_ = nullptr;
    context_.make_current();
    CUgraph graph = nullptr;
    BRAZE_CU(cuStreamEndCapture, (capture_stream_.get(), &graph), "capturing a program as a CUDA graph");
    CUgraphExec exec = nullptr;
    if (CUresult r = cuda::driver().cuGraphInstantiateWithFlags(&exec, graph, 0); r != CUDA_SUCCESS) {
      cuda::driver().cuGraphDestroy(graph);
      cuda::check_driver(r, "cuGraphInstantiateWithFlags", "instantiating a program's CUDA graph");
    }
    return std::make_unique<DriverGraph>(graph, exec, std::move(nodes_), context_, stream_.get());
  }
  void abort_capture() noexcept override {
    if (capturing_ != this) return;
    std::unique_lock lock = std::move(capture_lock_);
    capturing_ = nullptr;
    const cuda::DriverApi& d = cuda::driver();
    if (d.cuCtxSetCurrent(context_.get()) != CUDA_SUCCESS) return;
    CUgraph graph = nullptr;
    d.cuStreamEndCapture(capture_stream_.get(), &graph);
    if (graph) d.cuGraphDestroy(graph);
  }

 private:
  // Where this thread's work goes: the capture's stream while it captures.
  CUstream stream() const { return capturing_ == this ? capture_stream_.get() : stream_.get(); }
  void not_capturing(const char* what) const {
    BRAZE_ASSERT(capturing_ != this, what, " while capturing a graph: it would run now, not in the graph");
  }

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
  // Everything this executor does goes to its own stream, in order (Note
  // [Device executors]); made after the context, which it needs current.
  cuda::Stream stream_;
  cuda::Stream capture_stream_;  // Note [Programs as CUDA graphs]
  std::mutex capture_mutex_;
  std::unique_lock<std::mutex> capture_lock_;  // held from begin_capture to end_capture
  std::vector<CUgraphNode> nodes_;             // the kernel nodes captured so far
  static thread_local const DriverExecutor* capturing_;
  CUmemoryPool pool_ = nullptr;  // Note [Stream-ordered device memory]; null: cuMemAlloc
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

thread_local const DriverExecutor* DriverExecutor::capturing_ = nullptr;

}  // namespace

std::shared_ptr<cuda::DeviceExecutor> make_driver_executor(int index) {
  return std::make_shared<DriverExecutor>(index);
}

}  // namespace braze
