// A realized tensor's memory handed to other libraries without a copy:
// DLPack (`__dlpack__`, through nanobind's ndarray) and the numbers
// `__cuda_array_interface__` needs. Host-emulated CUDA memory is refused:
// a consumer would take host memory for device memory.
#pragma once

#include "jit_cuda/executor.h"
#include "runtime/context.h"
#include "python/convert.h"

namespace braze::py {

inline nb::dlpack::dtype dlpack_dtype(DType t) {
  using nb::dlpack::dtype_code;
  auto d = [](dtype_code c, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1};
  };
  switch (t) {
    case DType::Bool: return d(dtype_code::Bool, 8);
    case DType::UInt8: return d(dtype_code::UInt, 8);
    case DType::Int8: return d(dtype_code::Int, 8);
    case DType::UInt16: return d(dtype_code::UInt, 16);
    case DType::Int16: return d(dtype_code::Int, 16);
    case DType::UInt32: return d(dtype_code::UInt, 32);
    case DType::Int32: return d(dtype_code::Int, 32);
    case DType::Int64: return d(dtype_code::Int, 64);
    case DType::Float16: return d(dtype_code::Float, 16);
    case DType::BFloat16: return d(dtype_code::Bfloat, 16);
    case DType::Float32: return d(dtype_code::Float, 32);
    case DType::Float64: return d(dtype_code::Float, 64);
  }
  BRAZE_ASSERT(false, "bad dtype");
  return {};
}

// The realized array of `t` (realizing it), checked to be memory that a
// consumer can read where it says it is; on a device, its work finished
// (consumers read on streams of their own).
inline const Array& exportable(const Tensor& t, const char* protocol) {
  const Array& a = t.data();
  if (!a.device.is_cpu()) {
    cuda::DeviceExecutor* ex = cuda::executor_of(a.data);
    BRAZE_ASSERT(ex, "a device array without its executor");
    if (ex->emulated())
      throw std::runtime_error(std::string(protocol) + ": this " + a.device.str() +
                               " tensor is emulated host memory (BRAZE_CUDA=emulate), not device memory; "
                               "use .numpy() or .to('cpu')");
    nb::gil_scoped_release waiting;  // Note [The GIL]
    ex->synchronize();
    cuda::mark_exported(a.data);  // the consumer's streams may read it after braze lets go
  }
  // The consumer may write it: nothing braze derives from it is kept
  // (Note [Storage versions]).
  Runtime::get().storage_versions().exported(a.data);
  return a;
}

// nanobind's ndarray over the tensor's memory, which reaches Python as a
// DLPack capsule ("dltensor") keeping the memory alive: what __dlpack__
// returns. Writable, as DLPack 0.x has no read-only flag.
inline nb::ndarray<> dlpack_view(const Tensor& t) {
  const Array& a = exportable(t, "__dlpack__");
  auto* keep = new std::shared_ptr<std::byte[]>(a.data);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<std::byte[]>*>(p); });
  std::vector<size_t> shape(a.shape.begin(), a.shape.end());
  int device_type = a.device.is_cpu() ? nb::device::cpu::value : nb::device::cuda::value;
  return nb::ndarray<>(a.data.get(), shape.size(), shape.data(), owner, nullptr, dlpack_dtype(a.dtype), device_type,
                       a.device.index);
}

// The device address of a realized CUDA tensor, for __cuda_array_interface__.
inline uintptr_t cuda_pointer(const Tensor& t) {
  BRAZE_CHECK(t.device().kind == DeviceKind::CUDA, "__cuda_array_interface__: the tensor is on ", t.device().str(),
              ", not a CUDA device");
  return reinterpret_cast<uintptr_t>(exportable(t, "__cuda_array_interface__").data.get());
}

}  // namespace braze::py
