#include "runtime/transfer.h"

#include <cstring>

#include "runtime/context.h"
#include "runtime/cuda_executors.h"

namespace braze {

namespace {

void count(const Array& a) {
  Stats& stats = Runtime::get().stats();
  stats.allocations.fetch_add(1, std::memory_order_relaxed);
  stats.bytes_allocated.fetch_add(static_cast<int64_t>(a.bytes()), std::memory_order_relaxed);
  if (!a.device.is_cpu())
    stats.device_bytes_allocated.fetch_add(static_cast<int64_t>(a.bytes()), std::memory_order_relaxed);
}

// The executor that owns a device array's memory.
cuda::DeviceExecutor& owner(const Array& a) {
  cuda::DeviceExecutor* ex = cuda::executor_of(a.data);
  BRAZE_ASSERT(ex, "a ", a.device.str(), " array whose memory no device executor owns");
  return *ex;
}

}  // namespace

Array allocate_on(Device device, DType dtype, Shape shape) {
  Array a;
  if (device.is_cpu()) {
    a = allocate_array(dtype, std::move(shape));
  } else {
    a.dtype = dtype;
    a.shape = std::move(shape);
    a.device = device;
    a.data = cuda::device_block(cuda_executor(device), a.bytes());
  }
  count(a);
  return a;
}

ArrayAllocator counted_allocator(Device device) {
  return [device](DType dtype, Shape shape) { return allocate_on(device, dtype, std::move(shape)); };
}

Array to_host(const Array& a) { return copy_to(a, Device{}); }

Array copy_to(const Array& a, Device device) {
  if (a.device == device) return a;
  Array out = allocate_on(device, a.dtype, a.shape);
  copy_array(out, a);
  return out;
}

void copy_array(const Array& dst, const Array& src) {
  BRAZE_ASSERT(dst.bytes() == src.bytes(), "copy of ", src.bytes(), " bytes into ", dst.bytes());
  if (dst.data == src.data || src.bytes() == 0) return;
  if (dst.device.is_cpu() && src.device.is_cpu()) {
    std::memmove(dst.data.get(), src.data.get(), src.bytes());
  } else if (src.device.is_cpu()) {
    owner(dst).copy_to_device(dst.data.get(), src.data.get(), src.bytes());
  } else if (dst.device.is_cpu()) {
    owner(src).copy_to_host(dst.data.get(), src.data.get(), src.bytes());
  } else if (&owner(dst) == &owner(src)) {
    owner(dst).copy_on_device(dst.data.get(), src.data.get(), src.bytes());
  } else {  // two devices: through the host (peer copies are not worth their setup here)
    copy_array(dst, to_host(src));
  }
}

void copy_from_host(const Array& dst, const void* host, size_t bytes) {
  BRAZE_ASSERT(dst.bytes() == bytes, "copy of ", bytes, " bytes into ", dst.bytes());
  if (bytes == 0) return;
  if (dst.device.is_cpu()) std::memmove(dst.data.get(), host, bytes);
  else owner(dst).copy_to_device(dst.data.get(), host, bytes);
}

Tensor to(const Tensor& t, Device device) {
  BRAZE_CHECK(t.defined(), "to: an empty Tensor handle");
  if (t.device() == device) return t;
  check_available(device);
  return from_array(copy_to(t.data(), device), device);
}

void synchronize(Device device) {
  if (device.is_cpu()) return;
  check_available(device);
  cuda_executor(device)->synchronize();
}

}  // namespace braze
