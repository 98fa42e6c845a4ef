// A stand-in for libcuda.so.1, for checking braze's driver path on machines
// without a GPU (tests/cpp/jit_cuda_fake_driver_checks.cpp; CTest
// cuda_fake_driver, BRAZE_LIBCUDA pointing here). It answers the driver API
// entry points braze resolves through cuGetProcAddress: device memory is
// host memory (copies and fills really happen), kernels are accepted but
// never run, and every call that orders work (launches, copies, fills,
// frees, captures, graph launches) is appended to a trace with the stream
// it went to, which the checks read (braze_fake_cuda_trace). Stream
// capture is modelled: work enqueued on a capturing stream becomes nodes of
// the graph instead of running, and cuStreamGetCaptureInfo names the last.
// BRAZE_FAKE_CUDA_VERSION sets what cuDriverGetVersion says (default
// 13000), BRAZE_FAKE_CUDA_DEVICES the device count (default 1; 0 makes
// cuInit answer CUDA_ERROR_NO_DEVICE, as a driver on a machine without a GPU).
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// Never destroyed, as the real driver's state is not: braze frees device
// memory from its own static destructors at exit (Note [Tables live until
// exit]), which may run after this library's would have.
std::mutex& mutex = *new std::mutex;
std::string& trace = *new std::string;                        // one line per ordered call
std::set<CUdeviceptr>& live = *new std::set<CUdeviceptr>;     // allocations not yet freed
std::map<CUstream, CUgraph>& capturing = *new std::map<CUstream, CUgraph>;  // streams in capture, and their graph

struct Graph {
  std::vector<std::string> nodes;  // "kernel NAME", "memcpy", "memset"
};
struct Exec {
  Graph graph;
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

std::string hex(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}

// The work `what` enqueued on `stream`: a node when the stream captures,
// else a line of the trace. Called with the mutex held.
void enqueue(CUstream stream, const std::string& what) {
  if (auto it = capturing.find(stream); it != capturing.end()) {
    reinterpret_cast<Graph*>(it->second)->nodes.push_back(what);
    trace += "captured " + what + " stream=" + hex(stream) + "\n";
    return;
  }
  trace += what + " stream=" + hex(stream) + "\n";
}

// The graph node braze sees for node i of a graph: a fake address.
CUgraphNode node_handle(CUgraph g, size_t i) {
  return reinterpret_cast<CUgraphNode>(reinterpret_cast<uintptr_t>(g) + 16 * (i + 1));
}

struct Function {
  std::string name;
};

CUresult fake_cuInit(unsigned) { return env_int("BRAZE_FAKE_CUDA_DEVICES", 1) > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE; }
CUresult fake_cuDriverGetVersion(int* v) {
  *v = env_int("BRAZE_FAKE_CUDA_VERSION", 13000);
  return CUDA_SUCCESS;
}
CUresult fake_cuGetErrorName(CUresult r, const char** s) {
  *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : r == CUDA_ERROR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult fake_cuGetErrorString(CUresult r, const char** s) {
  *s = r == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable device is detected" : "an error of the fake driver";
  return CUDA_SUCCESS;
}
CUresult fake_cuDeviceGetCount(int* n) {
  *n = env_int("BRAZE_FAKE_CUDA_DEVICES", 1);
  return CUDA_SUCCESS;
}
CUresult fake_cuDeviceGet(CUdevice* d, int i) {
  *d = i;
  return CUDA_SUCCESS;
}
CUresult fake_cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "braze fake GPU", static_cast<size_t>(len));
  return CUDA_SUCCESS;
}
CUresult fake_cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *v = env_int("BRAZE_FAKE_CUDA_POOLS", 1); break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult fake_cuDeviceTotalMem(size_t* b, CUdevice) {
  *b = size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult fake_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  static int context;
  *c = reinterpret_cast<CUcontext>(&context);
  return CUDA_SUCCESS;
}
CUresult fake_cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult fake_cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult fake_cuCtxSynchronize() {
  std::lock_guard lock(mutex);
  trace += "cuCtxSynchronize\n";
  return CUDA_SUCCESS;
}
// What a CUDA 13 driver hands out for cuCtxSynchronize asked for at 13000
// (Note [Entry points at an older version] in jit_cuda/driver_api.h).
CUresult fake_cuCtxSynchronize_v2(CUcontext) {
  std::lock_guard lock(mutex);
  trace += "cuCtxSynchronize_v2\n";
  return CUDA_ERROR_CONTEXT_IS_DESTROYED;
}
CUresult fake_cuModuleLoadData(CUmodule* m, const void* image) {
  if (!image) return CUDA_ERROR_INVALID_VALUE;
  *m = reinterpret_cast<CUmodule>(new int(0));
  return CUDA_SUCCESS;
}
CUresult fake_cuModuleUnload(CUmodule m) {
  delete reinterpret_cast<int*>(m);
  return CUDA_SUCCESS;
}
CUresult fake_cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  *f = reinterpret_cast<CUfunction>(new Function{name});  // one per lookup; braze looks each kernel up once
  return CUDA_SUCCESS;
}
CUresult fake_cuFuncGetAttribute(int* v, CUfunction_attribute, CUfunction) {
  *v = 0;
  return CUDA_SUCCESS;
}
CUresult fake_cuLaunchKernel(CUfunction f, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned, unsigned,
                             CUstream s, void** params, void**) {
  if (!params) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(mutex);
  enqueue(s, "cuLaunchKernel " + reinterpret_cast<Function*>(f)->name + " grid=" + std::to_string(gx) + " block=" +
                 std::to_string(bx));
  return CUDA_SUCCESS;
}
CUresult alloc(CUdeviceptr* p, size_t bytes, CUstream s, const char* call) {
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* m = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(m);
  std::lock_guard lock(mutex);
  live.insert(*p);
  trace += std::string(call) + " " + std::to_string(bytes) + (s ? " stream=" + hex(s) : std::string()) + "\n";
  return CUDA_SUCCESS;
}
CUresult release(CUdeviceptr p, CUstream s, const char* call) {
  std::lock_guard lock(mutex);
  if (!live.erase(p)) {
    trace += std::string(call) + " of an unknown address " + hex(reinterpret_cast<void*>(p)) + "\n";
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::free(reinterpret_cast<void*>(p));
  trace += std::string(call) + (s ? " stream=" + hex(s) : std::string()) + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuMemAlloc(CUdeviceptr* p, size_t bytes) { return alloc(p, bytes, nullptr, "cuMemAlloc"); }
CUresult fake_cuMemFree(CUdeviceptr p) { return release(p, nullptr, "cuMemFree"); }
CUresult fake_cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  static int pools[8];
  static int made;
  if (!props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || made == 8) return CUDA_ERROR_INVALID_VALUE;
  *pool = reinterpret_cast<CUmemoryPool>(&pools[made++]);
  std::lock_guard lock(mutex);
  trace += "cuMemPoolCreate\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t bytes, CUmemoryPool pool, CUstream s) {
  return pool ? alloc(p, bytes, s, "cuMemAllocFromPoolAsync") : CUDA_ERROR_INVALID_VALUE;
}
CUresult fake_cuMemFreeAsync(CUdeviceptr p, CUstream s) { return release(p, s, "cuMemFreeAsync"); }
CUresult fake_cuMemPoolTrimTo(CUmemoryPool, size_t) { return CUDA_SUCCESS; }
CUresult fake_cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute a, void* v) {
  std::lock_guard lock(mutex);
  if (a == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
    trace += "cuMemPoolSetAttribute release_threshold=" + std::to_string(*static_cast<cuuint64_t*>(v)) + "\n";
  return CUDA_SUCCESS;
}
CUresult copy(void* dst, const void* src, size_t n, CUstream s, const char* call) {
  std::lock_guard lock(mutex);
  enqueue(s, call);
  if (!capturing.count(s)) std::memcpy(dst, src, n);
  return CUDA_SUCCESS;
}
void* host(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
CUresult fake_cuMemcpyHtoD(CUdeviceptr d, const void* h, size_t n) { return copy(host(d), h, n, nullptr, "cuMemcpyHtoD"); }
CUresult fake_cuMemcpyDtoH(void* h, CUdeviceptr d, size_t n) { return copy(h, host(d), n, nullptr, "cuMemcpyDtoH"); }
CUresult fake_cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
  return copy(host(d), host(s), n, nullptr, "cuMemcpyDtoD");
}
CUresult fake_cuMemcpyHtoDAsync(CUdeviceptr d, const void* h, size_t n, CUstream s) {
  return copy(host(d), h, n, s, "cuMemcpyHtoDAsync");
}
CUresult fake_cuMemcpyDtoHAsync(void* h, CUdeviceptr d, size_t n, CUstream s) {
  return copy(h, host(d), n, s, "cuMemcpyDtoHAsync");
}
CUresult fake_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  return copy(host(d), host(src), n, s, "cuMemcpyDtoDAsync");
}
CUresult fill(CUdeviceptr d, unsigned char v, size_t n, CUstream s, const char* call) {
  std::lock_guard lock(mutex);
  enqueue(s, call);
  if (!capturing.count(s)) std::memset(host(d), v, n);
  return CUDA_SUCCESS;
}
CUresult fake_cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) { return fill(d, v, n, nullptr, "cuMemsetD8"); }
CUresult fake_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  return fill(d, v, n, s, "cuMemsetD8Async");
}
CUresult fake_cuStreamCreate(CUstream* s, unsigned flags) {
  *s = reinterpret_cast<CUstream>(new unsigned(flags));
  std::lock_guard lock(mutex);
  trace += "cuStreamCreate stream=" + hex(*s) + (flags & CU_STREAM_NON_BLOCKING ? " non-blocking" : "") + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuStreamDestroy(CUstream s) {
  delete reinterpret_cast<unsigned*>(s);
  return CUDA_SUCCESS;
}
CUresult fake_cuStreamSynchronize(CUstream s) {
  std::lock_guard lock(mutex);
  trace += "cuStreamSynchronize stream=" + hex(s) + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuEventCreate(CUevent* e, unsigned) {
  *e = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}
CUresult fake_cuEventDestroy(CUevent e) {
  delete reinterpret_cast<int*>(e);
  return CUDA_SUCCESS;
}
CUresult fake_cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult fake_cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult fake_cuEventElapsedTime(float* ms, CUevent, CUevent) {
  *ms = 0;
  return CUDA_SUCCESS;
}
CUresult fake_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode) {
  std::lock_guard lock(mutex);
  if (!s || capturing.count(s)) return CUDA_ERROR_ILLEGAL_STATE;  // the legacy stream cannot capture
  capturing[s] = reinterpret_cast<CUgraph>(new Graph);
  trace += "cuStreamBeginCapture stream=" + hex(s) + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuStreamEndCapture(CUstream s, CUgraph* g) {
  std::lock_guard lock(mutex);
  auto it = capturing.find(s);
  if (it == capturing.end()) return CUDA_ERROR_ILLEGAL_STATE;
  *g = it->second;
  capturing.erase(it);
  trace += "cuStreamEndCapture nodes=" + std::to_string(reinterpret_cast<Graph*>(*g)->nodes.size()) + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                                     const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* n) {
  std::lock_guard lock(mutex);
  auto it = capturing.find(s);
  static thread_local CUgraphNode last;
  if (status) *status = it == capturing.end() ? CU_STREAM_CAPTURE_STATUS_NONE : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (id) *id = 1;
  if (graph) *graph = it == capturing.end() ? nullptr : it->second;
  if (edges) *edges = nullptr;
  size_t count = it == capturing.end() ? 0 : reinterpret_cast<Graph*>(it->second)->nodes.size();
  if (count) last = node_handle(it->second, count - 1);
  if (deps) *deps = count ? &last : nullptr;
  if (n) *n = count ? 1 : 0;
  return CUDA_SUCCESS;
}
// Asked for by this name: "cuGraphInstantiate" is another call at 13000
// (Note [Entry points at an older version]), which the fake does not
// answer, so a driver table asking for it fails here as it crashed on a GPU.
CUresult fake_cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g, unsigned long long) {
  *e = reinterpret_cast<CUgraphExec>(new Exec{*reinterpret_cast<Graph*>(g)});
  std::lock_guard lock(mutex);
  trace += "cuGraphInstantiateWithFlags nodes=" + std::to_string(reinterpret_cast<Graph*>(g)->nodes.size()) + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuGraphLaunch(CUgraphExec e, CUstream s) {
  std::lock_guard lock(mutex);
  trace += "cuGraphLaunch nodes=" + std::to_string(reinterpret_cast<Exec*>(e)->graph.nodes.size()) + " stream=" +
           hex(s) + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuGraphExecKernelNodeSetParams(CUgraphExec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS* p) {
  std::lock_guard lock(mutex);
  if (!p || !p->kernelParams) return CUDA_ERROR_INVALID_VALUE;
  trace += "cuGraphExecKernelNodeSetParams " + reinterpret_cast<Function*>(p->func)->name + " node=" +
           hex(node) + "\n";
  return CUDA_SUCCESS;
}
CUresult fake_cuGraphDestroy(CUgraph g) {
  delete reinterpret_cast<Graph*>(g);
  return CUDA_SUCCESS;
}
CUresult fake_cuGraphExecDestroy(CUgraphExec e) {
  delete reinterpret_cast<Exec*>(e);
  return CUDA_SUCCESS;
}

#define FAKE_ENTRY_POINTS(X) \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleUnload) \
  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) \
  X(cuMemAllocFromPoolAsync) X(cuMemFreeAsync) X(cuMemPoolCreate) X(cuMemPoolTrimTo) X(cuMemPoolSetAttribute) \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy) \
  X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) \
  X(cuEventElapsedTime) X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuStreamGetCaptureInfo) \
  X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecKernelNodeSetParams) X(cuGraphDestroy) \
  X(cuGraphExecDestroy)

// Each entry point has the signature cuda.h declares for the version braze asks for.
#define FAKE_CHECK(name) \
  static_assert(std::is_same_v<decltype(&fake_##name), decltype(&::name)>, #name " differs from cuda.h's");
FAKE_ENTRY_POINTS(FAKE_CHECK)
#undef FAKE_CHECK

#define FAKE_ENTRY(name) {#name, reinterpret_cast<void*>(&fake_##name)},
const std::map<std::string, void*> entry_points = {FAKE_ENTRY_POINTS(FAKE_ENTRY)};
#undef FAKE_ENTRY

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* name, void** fn, int version,
                                                                     cuuint64_t,
                                                                     CUdriverProcAddressQueryResult* status) {
  if (std::string(name) == "cuCtxSynchronize" && version >= 13000) {  // as the real driver
    *fn = reinterpret_cast<void*>(&fake_cuCtxSynchronize_v2);
    if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  auto it = entry_points.find(name);
  *fn = it == entry_points.end() ? nullptr : it->second;
  if (status) *status = it == entry_points.end() ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND : CU_GET_PROC_ADDRESS_SUCCESS;
  return it == entry_points.end() ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
}

// The trace so far (one call a line), and how many allocations are live.
__attribute__((visibility("default"))) const char* braze_fake_cuda_trace() {
  static thread_local std::string copy;
  std::lock_guard lock(mutex);
  copy = trace;
  return copy.c_str();
}
__attribute__((visibility("default"))) void braze_fake_cuda_clear_trace() {
  std::lock_guard lock(mutex);
  trace.clear();
}
__attribute__((visibility("default"))) size_t braze_fake_cuda_live_allocations() {
  std::lock_guard lock(mutex);
  return live.size();
}

}  // extern "C"
