// The device executor: what running a program on a CUDA device needs from
// the device (memory, copies, kernels, launches), behind one interface with
// two implementations: the driver (runtime/driver_executor.cpp) and host
// emulation (jit_cuda/emulated_executor.h). Header-only and free of cuda.h,
// so the runtime calls it in every build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fusion/library_rules.h"
#include "fusion/kernel_spec.h"
#include "fusion/partition.h"
#include "graph/array.h"
#include "jit_cuda/cuda_source.h"

namespace braze::cuda {

// A kernel ready to launch; each executor derives its own (a CUfunction and
// the module that holds it, or an entry point in a dlopened object).
struct DeviceKernel {
  CudaKernelSource source;  // name, launch shape and parameter types
  virtual ~DeviceKernel() = default;
};

// Where load() found a kernel: bz.stats() counts cache_hits_memory,
// cache_hits_disk and kernels_compiled from it.
enum class KernelOrigin { Memory, Disk, Compiled };

struct LoadedKernel {
  std::shared_ptr<const DeviceKernel> kernel;
  KernelOrigin origin = KernelOrigin::Compiled;
  int64_t evicted = 0;  // kernels dropped from memory to make room for it (kernels_evicted)
};

// Note [CUDA library calls]
// A matmul or conv2d step on a CUDA device is one library call: cuBLASLt
// (matmul_plan.h, cublaslt_matmul.h) or cuDNN (conv_plan.h,
// cudnn_conv.h), with the post-ops those take (Note [CUDA library
// epilogues]). prepare_library, once per program step, plans the call from
// the group (which operand is which matrix, layouts, batches, epilogue) and
// finds or makes its descriptors and algorithm, which the executor caches
// by shape (two programs of one shape share them, and a replay makes
// nothing); the call says how much workspace it needs, which the program
// plans into its device arena like any step workspace (Note [Step
// workspaces]), so no call allocates. run_library enqueues the call on the
// executor's stream with its operands' device addresses. Each executor
// (one device context) makes one cuBLASLt and one cuDNN handle, bound to
// its stream, when the first call needs it; a library that is missing
// is an error then, naming it, while everything that does not need it
// keeps working. Host emulation plans each call too (so a call a GPU
// would refuse is refused there) but runs it on the CPU library against
// the emulated memory: prepare_library gives no call.
struct DeviceLibraryCall {
  int64_t workspace_bytes = 0;
  virtual ~DeviceLibraryCall() = default;
};

struct LibraryOptions {
  bool allow_tf32 = false;  // float32 matmul/conv2d may round inputs to TF32 (allow_tf32())
};

struct PreparedLibraryCall {
  std::shared_ptr<const DeviceLibraryCall> call;  // null: the host's library runs it (emulation)
  bool created = false;                           // its descriptors and algorithm were made now
};

// BRAZE_ALLOW_TF32=1: float32 matmul and conv2d on a CUDA device may use
// TF32 tensor cores (inputs rounded to 10 mantissa bits, ~1e-3 relative
// error; several times faster on sm_80 and later). Off by default, as in
// PyTorch. Read when a program is made; part of its key.
inline bool allow_tf32() {
  const char* v = std::getenv("BRAZE_ALLOW_TF32");
  return v && std::string(v) == "1";
}

// Note [Programs as CUDA graphs]
// A replayed program is a fixed sequence of kernel launches and library
// calls: launched one by one, each costs the host a few microseconds in
// braze and the driver, which for a program of small kernels is longer
// than the GPU's work. So a device program runs as one CUDA graph
// (runtime/device_graph.h says when): its first run records every launch
// and library call on the executor's stream into a graph (stream capture:
// begin_capture .. end_capture, the kernel launches numbered in order),
// which is instantiated and launched whole. A later run whose inputs,
// outputs, arena and scalar values are the addresses and values of the
// last one launches the graph again and nothing else (cuGraphLaunch); one
// where they changed goes through the steps, and each kernel whose
// parameters differ has its node's parameters set anew
// (cuGraphExecKernelNodeSetParams, set_params) before the launch; a library
// call cannot be patched (its kernels are cuBLASLt's), so a change of its
// addresses records the graph again. Memory is never allocated while
// capturing: a graphed run takes its outputs before its steps.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  // Kernel launch `node` (the node-th recorded, from 0) takes `params`
  // (launch()'s form) in the launches after this call.
  virtual void set_params(size_t node, const DeviceKernel& kernel, void** params) = 0;
  // Enqueues the whole graph once on the executor's stream.
  virtual void launch() = 0;
};

// Note [Device executors]
// Device addresses are `void*` (a CUdeviceptr fits; emulated memory is host
// memory), owned by the Arrays that hold them (device_block below). All of
// an executor's work goes to one stream it owns, in order: launches,
// library calls, copies, fills and frees. The driver's is a non-blocking
// stream (never the legacy default stream, which would order braze's work
// with every other library's in the process); its copies are asynchronous
// (a copy from the host returns once the host bytes are staged, a copy to
// the host once they have arrived: copy_to_host waits for the stream), and
// its memory is stream-ordered (cuMemAllocAsync/cuMemFreeAsync from the
// device's memory pool, which keeps freed memory for reuse instead of
// returning it to the driver: Note [Stream-ordered device memory] in
// runtime/driver_executor.cpp). So the caller sees every call as done in
// order, and only timing needs synchronize(). load() finds or compiles
// each spec's kernel once per key, even when threads race (they wait for
// the one compile), and compiles its misses together (emulation builds one
// shared object; the driver compiles them on several threads).
class DeviceExecutor {
 public:
  virtual ~DeviceExecutor() = default;

  // "NVIDIA H100 80GB HBM3 (sm_90)", "host emulation (BRAZE_CUDA=emulate)"
  virtual std::string describe() const = 0;
  // Device memory is host memory in disguise (no DLPack or CUDA array
  // interface: a consumer would take it for real device memory).
  virtual bool emulated() const = 0;

  virtual void* allocate(size_t bytes) = 0;
  // `exported`: the memory was handed to another library (DLPack,
  // __cuda_array_interface__), which may still use it on its own streams.
  virtual void free(void* p, bool exported) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* host, size_t bytes) = 0;
  virtual void copy_to_host(void* host, const void* src, size_t bytes) = 0;
  virtual void copy_on_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void fill(void* dst, uint8_t byte, size_t bytes) = 0;

  virtual std::vector<LoadedKernel> load(std::span<const KernelSpec* const> specs) = 0;
  // `params`: one pointer per kernel parameter to its value, in the order
  // of CudaKernelSource::param_types (as cuLaunchKernel takes them).
  virtual void launch(const DeviceKernel& kernel, void** params) = 0;
  virtual void synchronize() = 0;

  // Note [CUDA library calls]. The post-ops a library call takes on this
  // device (Note [Library capabilities]).
  virtual const LibraryRules& library_rules() const = 0;
  // Throws std::invalid_argument for a call the CUDA libraries cannot
  // make, CudaUnavailable when the library is missing.
  virtual PreparedLibraryCall prepare_library(const Graph& g, const FusedGroup& group, const LibraryOptions& o) = 0;
  // `buffer` gives the arrays of the bases library_reads() lists; `out`
  // is the dense result; `workspace` holds call.workspace_bytes.
  virtual void run_library(const DeviceLibraryCall& call, const std::function<const Array&(NodeId)>& buffer,
                           Array& out, void* workspace) = 0;

  // Note [Programs as CUDA graphs]: from begin_capture to end_capture,
  // launch() and run_library() record into a graph instead of running;
  // launches of no work (CudaLaunch::work 0) record nothing. After a
  // failure in between, abort_capture ends the capture and drops it.
  virtual void begin_capture() = 0;
  virtual std::unique_ptr<DeviceGraph> end_capture() = 0;
  virtual void abort_capture() noexcept = 0;
};

// The deleter of device memory: it keeps the executor that made the memory
// alive, and says which one that is (executor_of).
struct DeviceFree {
  std::shared_ptr<DeviceExecutor> executor;
  bool exported = false;  // mark_exported
  void operator()(std::byte* p) const { executor->free(p, exported); }
};

// `bytes` of device memory, freed when the last owner lets go.
inline std::shared_ptr<std::byte[]> device_block(const std::shared_ptr<DeviceExecutor>& ex, size_t bytes) {
  // cuMemAlloc refuses 0 bytes; an empty array still needs a distinct address.
  void* p = ex->allocate(bytes == 0 ? 1 : bytes);
  return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p), DeviceFree{ex});
}

// Marks the device memory `data` is (or points into) as handed to another
// library: freeing it then waits for the whole device, not only the
// executor's stream. Set before the consumer holds it; read by the
// deleter, after the last owner let go.
inline void mark_exported(const std::shared_ptr<std::byte[]>& data) {
  if (DeviceFree* d = std::get_deleter<DeviceFree>(data)) d->exported = true;
}

// The executor whose memory `data` is (or points into: aliasing owners
// share the deleter), or null for host memory.
inline DeviceExecutor* executor_of(const std::shared_ptr<std::byte[]>& data) {
  const DeviceFree* d = std::get_deleter<DeviceFree>(data);
  return d ? d->executor.get() : nullptr;
}

}  // namespace braze::cuda
