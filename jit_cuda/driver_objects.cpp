#include "jit_cuda/driver_objects.h"

#include "graph/check.h"

namespace braze::cuda {

// Destructors ignore errors: they run during unwinding, and a context torn
// down by a failed kernel makes every release fail the same way.

int device_count() {
  int n = 0;
  BRAZE_CU(cuDeviceGetCount, (&n), "counting CUDA devices");
  return n;
}

Context::Context(int device) {
  int n = device_count();
  BRAZE_CHECK(device >= 0 && device < n, "CUDA device ", device, " does not exist: this machine has ", n,
              " CUDA device(s)");
  BRAZE_CU(cuDeviceGet, (&device_, device), "opening CUDA device " + std::to_string(device));
  BRAZE_CU(cuDevicePrimaryCtxRetain, (&ctx_, device_), "creating a context on CUDA device " + std::to_string(device));
  make_current();
}

Context::~Context() {
  if (ctx_) driver().cuDevicePrimaryCtxRelease(device_);
}

void Context::make_current() const { BRAZE_CU(cuCtxSetCurrent, (ctx_), "making the CUDA context current"); }

std::string Context::device_name() const {
  char name[256] = {};
  BRAZE_CU(cuDeviceGetName, (name, sizeof name - 1, device_), "asking the CUDA device's name");
  return name;
}

int Context::compute_capability() const {
  int major = 0, minor = 0;
  BRAZE_CU(cuDeviceGetAttribute, (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
           "asking the compute capability");
  BRAZE_CU(cuDeviceGetAttribute, (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
           "asking the compute capability");
  return major * 10 + minor;
}

void release_module(CUmodule m) noexcept { driver().cuModuleUnload(m); }
void release_stream(CUstream s) noexcept { driver().cuStreamDestroy(s); }
void release_event(CUevent e) noexcept { driver().cuEventDestroy(e); }
void release_memory(CUdeviceptr p) noexcept { driver().cuMemFree(p); }

Module::Module(std::span<const std::byte> cubin, const std::string& what) {
  BRAZE_CU(cuModuleLoadData, (&handle_, cubin.data()), "loading the cubin of " + what);
}

CUfunction Module::function(const std::string& name) const {
  CUfunction f = nullptr;
  BRAZE_CU(cuModuleGetFunction, (&f, handle_, name.c_str()), "finding kernel " + name + " in its module");
  return f;
}

Stream::Stream() { BRAZE_CU(cuStreamCreate, (&handle_, CU_STREAM_NON_BLOCKING), "creating a CUDA stream"); }

void Stream::synchronize() const { BRAZE_CU(cuStreamSynchronize, (handle_), "waiting for a CUDA stream"); }

Event::Event() { BRAZE_CU(cuEventCreate, (&handle_, CU_EVENT_DEFAULT), "creating a CUDA event"); }

void Event::record(const Stream& s) const { BRAZE_CU(cuEventRecord, (handle_, s.get()), "recording a CUDA event"); }

void Event::synchronize() const { BRAZE_CU(cuEventSynchronize, (handle_), "waiting for a CUDA event"); }

float Event::milliseconds_since(const Event& start) const {
  float ms = 0;
  BRAZE_CU(cuEventElapsedTime, (&ms, start.get(), handle_), "timing between CUDA events");
  return ms;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  // cuMemAlloc refuses 0 bytes; an empty tensor still gets a distinct buffer.
  BRAZE_CU(cuMemAlloc, (&handle_, bytes == 0 ? 1 : bytes),
           "allocating " + std::to_string(bytes) + " bytes of device memory");
}

void DeviceBuffer::upload(std::span<const std::byte> host) {
  BRAZE_CHECK(host.size() <= bytes_, "upload of ", host.size(), " bytes into a device buffer of ", bytes_);
  if (!host.empty()) BRAZE_CU(cuMemcpyHtoD, (handle_, host.data(), host.size()), "copying to the device");
}

void DeviceBuffer::download(std::span<std::byte> host) const {
  BRAZE_CHECK(host.size() <= bytes_, "download of ", host.size(), " bytes from a device buffer of ", bytes_);
  if (!host.empty()) BRAZE_CU(cuMemcpyDtoH, (host.data(), handle_, host.size()), "copying from the device");
}

}  // namespace braze::cuda
