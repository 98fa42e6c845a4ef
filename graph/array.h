// A dense row-major array, on the host or on a device (Note [Device
// arrays] in runtime/transfer.h), and element loads/stores in every dtype
// (host arrays only).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "graph/device.h"
#include "graph/dtype.h"
#include "graph/shape.h"

namespace braze {

struct Array {
  DType dtype = DType::Float32;
  Shape shape;
  std::shared_ptr<std::byte[]> data;  // 64-byte aligned; a device address when `device` is not the CPU
  Device device{};                    // where `data` points; the CPU unless a device executor made it

  int64_t numel() const { return braze::numel(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * itemsize(dtype); }
};

// Where arrays come from; the runtime passes one that counts allocations.
using ArrayAllocator = std::function<Array(DType, Shape)>;
Array allocate_array(DType dtype, Shape shape);  // 64-byte aligned, uninitialised (graph/host_memory.h)

// Element access by element index. Loads widen to the compute type
// (double for floats, int64_t for ints and bool); stores narrow and round.
// A float stored into an integer type truncates toward zero; NaN and values
// out of int64 range become INT64_MIN (as x86's cvttsd2si) before wrapping.
double load_double(DType t, const std::byte* base, int64_t i);
int64_t float_to_int64(double v);  // that truncation, without undefined behaviour
int64_t load_int(DType t, const std::byte* base, int64_t i);
void store_double(DType t, std::byte* base, int64_t i, double v);
void store_int(DType t, std::byte* base, int64_t i, int64_t v);

template <class T>
T load(DType t, const std::byte* base, int64_t i) {
  if constexpr (std::is_same_v<T, double>) return load_double(t, base, i);
  else return load_int(t, base, i);
}
template <class T>
void store(DType t, std::byte* base, int64_t i, T v) {
  if constexpr (std::is_same_v<T, double>) store_double(t, base, i, v);
  else store_int(t, base, i, v);
}

}  // namespace braze
