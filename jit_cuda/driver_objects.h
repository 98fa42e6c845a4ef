// Owners of driver objects: each releases what it holds on destruction
// and is movable, not copyable. Every failing call throws CudaError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "jit_cuda/driver_api.h"

namespace braze::cuda {

int device_count();  // 0 when the driver loads but finds no device

// Moves a handle out, leaving the moved-from owner empty.
template <class T>
T take(T& h) {
  T v = h;
  h = T{};
  return v;
}

// A device's primary context (the one the runtime API shares), retained
// for this object's life and made current on the calling thread.
class Context {
 public:
  explicit Context(int device = 0);
  ~Context();
  Context(Context&& o) noexcept : device_(o.device_), ctx_(take(o.ctx_)) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context& operator=(Context&&) = delete;

  void make_current() const;
  CUdevice device() const { return device_; }
  CUcontext get() const { return ctx_; }
  std::string device_name() const;
  int compute_capability() const;  // 90 for sm_90

 private:
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

// A loaded cubin (no PTX JIT: the image is already machine code).
class Module {
 public:
  Module(std::span<const std::byte> cubin, const std::string& what);
  ~Module();
  Module(Module&& o) noexcept : mod_(take(o.mod_)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  CUfunction function(const std::string& name) const;
  CUmodule get() const { return mod_; }

 private:
  CUmodule mod_ = nullptr;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(Stream&& o) noexcept : stream_(take(o.stream_)) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void synchronize() const;
  CUstream get() const { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(Event&& o) noexcept : event_(take(o.event_)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(const Stream& s) const;
  void synchronize() const;
  float milliseconds_since(const Event& start) const;
  CUevent get() const { return event_; }

 private:
  CUevent event_ = nullptr;
};

// Device memory of a fixed size.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(take(o.ptr_)), bytes_(take(o.bytes_)) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void upload(std::span<const std::byte> host);  // host.size() <= bytes()
  void download(std::span<std::byte> host) const;
  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

}  // namespace braze::cuda
