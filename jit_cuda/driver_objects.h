// Owners of driver objects: each releases what it holds on destruction
// and is movable, not copyable. Every failing call throws CudaError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

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

// The driver's release calls, for Owned; errors ignored (driver_objects.cpp).
void release_module(CUmodule m) noexcept;
void release_stream(CUstream s) noexcept;
void release_event(CUevent e) noexcept;
void release_memory(CUdeviceptr p) noexcept;

// A driver handle, released by `Release` when its owner goes: movable, not
// copyable. The owners below set `handle_` in their constructors.
template <class Handle, void (*Release)(Handle) noexcept>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle h) : handle_(h) {}  // adopts a handle made elsewhere
  ~Owned() {
    if (handle_) Release(handle_);
  }
  Owned(Owned&& o) noexcept : handle_(take(o.handle_)) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  Handle get() const { return handle_; }

 protected:
  Handle handle_{};
};

// A loaded cubin (no PTX JIT: the image is already machine code).
class Module : public Owned<CUmodule, release_module> {
 public:
  Module(std::span<const std::byte> cubin, const std::string& what);
  CUfunction function(const std::string& name) const;
};

class Stream : public Owned<CUstream, release_stream> {
 public:
  Stream();
  void synchronize() const;
};

class Event : public Owned<CUevent, release_event> {
 public:
  Event();
  void record(const Stream& s) const;
  void synchronize() const;
  float milliseconds_since(const Event& start) const;
};

// Device memory of a fixed size.
class DeviceBuffer : public Owned<CUdeviceptr, release_memory> {
 public:
  explicit DeviceBuffer(size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept : Owned(std::move(o)), bytes_(take(o.bytes_)) {}

  void upload(std::span<const std::byte> host);  // host.size() <= bytes()
  void download(std::span<std::byte> host) const;
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

}  // namespace braze::cuda
