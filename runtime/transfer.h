// Arrays on devices: allocation, copies between host and device, and
// moving tensors (`t.to("cuda")`).
#pragma once

#include "graph/array.h"
#include "runtime/tensor.h"

namespace braze {

// Note [Device arrays]
// An Array says where its bytes are (Array::device). A CUDA array's `data`
// is device memory from the device's executor (Note [CUDA executors] in
// runtime/cuda_executors.h), freed by it when the last owner lets go; host
// code never dereferences it, except through to_host(). A tensor's device
// is fixed when it is made and every op keeps it (ops with inputs on two
// devices are an error at the op: runtime/tensor.cpp), so a graph runs on
// one device. Bytes cross between devices only where the user asks:
// from_array with a device (bz.tensor(a, device=)), to() (t.to(...)) and
// to_host() (.numpy(), .item()); never per op. CPU arrays and CPU code
// paths are unchanged. Every allocation is counted in bz.stats()
// (allocations, bytes_allocated; device_bytes_allocated for device memory).

// An array of `dtype` and `shape` on `device`, counted in bz.stats().
Array allocate_on(Device device, DType dtype, Shape shape);
// allocate_on bound to a device: what a program on that device allocates with.
ArrayAllocator counted_allocator(Device device);

// The array's bytes in host memory: `a` itself when it is already there.
Array to_host(const Array& a);
// A copy of `a` on `device` (a itself when it is there already).
Array copy_to(const Array& a, Device device);
// dst's bytes := src's (same dtype and shape), whichever devices they are on.
void copy_array(const Array& dst, const Array& src);
// dst's bytes := `bytes` bytes of host memory at `host` (dst.bytes() of them),
// wherever dst is: how bz.copyto refreshes a device tensor without a temporary.
void copy_from_host(const Array& dst, const void* host, size_t bytes);

// `t` on `device`: realizes it where it is and copies the result; `t`
// itself when it is there already.
Tensor to(const Tensor& t, Device device);

// Waits until every kernel launched on `device` has finished: a launch
// returns before its kernel ends (Note [Device executors]), which only a
// timer notices. Nothing to wait for on the CPU, whose kernels return done.
void synchronize(Device device);

}  // namespace braze
