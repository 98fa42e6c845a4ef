#include "graph/array.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "graph/check.h"
#include "graph/half.h"
#include "graph/host_memory.h"

namespace braze {

namespace {

template <class T>
T read(const std::byte* base, int64_t i) {
  T v;
  std::memcpy(&v, base + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <class T>
void write(std::byte* base, int64_t i, T v) {
  std::memcpy(base + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

}  // namespace

int64_t float_to_int64(double v) {
  // 2^63 is exactly representable; anything at or past it, or NaN, is out.
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

Array allocate_array(DType dtype, Shape shape) {
  Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  // Not zeroed: every producer writes every element, and a memset would be
  // one more pass over memory than a fused kernel makes.
  a.data = allocate_host_block(a.bytes());
  return a;
}

double load_double(DType t, const std::byte* b, int64_t i) {
  switch (t) {
    case DType::Bool: return read<uint8_t>(b, i) != 0;
    case DType::UInt8: return read<uint8_t>(b, i);
    case DType::Int8: return read<int8_t>(b, i);
    case DType::UInt16: return read<uint16_t>(b, i);
    case DType::Int16: return read<int16_t>(b, i);
    case DType::UInt32: return read<uint32_t>(b, i);
    case DType::Int32: return read<int32_t>(b, i);
    case DType::Int64: return static_cast<double>(read<int64_t>(b, i));
    case DType::Float16: return half_to_float(read<uint16_t>(b, i));
    case DType::BFloat16: return bf16_to_float(read<uint16_t>(b, i));
    case DType::Float32: return read<float>(b, i);
    case DType::Float64: return read<double>(b, i);
  }
  BRAZE_ASSERT(false, "bad dtype");
  return 0;
}

int64_t load_int(DType t, const std::byte* b, int64_t i) {
  switch (t) {
    case DType::Bool: return read<uint8_t>(b, i) != 0;
    case DType::UInt8: return read<uint8_t>(b, i);
    case DType::Int8: return read<int8_t>(b, i);
    case DType::UInt16: return read<uint16_t>(b, i);
    case DType::Int16: return read<int16_t>(b, i);
    case DType::UInt32: return read<uint32_t>(b, i);
    case DType::Int32: return read<int32_t>(b, i);
    case DType::Int64: return read<int64_t>(b, i);
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64: return float_to_int64(load_double(t, b, i));
  }
  BRAZE_ASSERT(false, "bad dtype");
  return 0;
}

void store_int(DType t, std::byte* b, int64_t i, int64_t v) {
  switch (t) {
    case DType::Bool: return write<uint8_t>(b, i, v != 0);
    case DType::UInt8: return write<uint8_t>(b, i, static_cast<uint8_t>(v));
    case DType::Int8: return write<int8_t>(b, i, static_cast<int8_t>(v));
    case DType::UInt16: return write<uint16_t>(b, i, static_cast<uint16_t>(v));
    case DType::Int16: return write<int16_t>(b, i, static_cast<int16_t>(v));
    case DType::UInt32: return write<uint32_t>(b, i, static_cast<uint32_t>(v));
    case DType::Int32: return write<int32_t>(b, i, static_cast<int32_t>(v));
    case DType::Int64: return write<int64_t>(b, i, v);
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64: return store_double(t, b, i, static_cast<double>(v));
  }
  BRAZE_ASSERT(false, "bad dtype");
}

void store_double(DType t, std::byte* b, int64_t i, double v) {
  switch (t) {
    case DType::Bool: return write<uint8_t>(b, i, v != 0);
    case DType::UInt8:
    case DType::Int8:
    case DType::UInt16:
    case DType::Int16:
    case DType::UInt32:
    case DType::Int32:
    case DType::Int64: return store_int(t, b, i, float_to_int64(v));
    // float16 rounds once, as NumPy's astype does; bfloat16 through float32,
    // as ml_dtypes does (Note [Rounding float64 to 16 bits] in graph/half.h).
    case DType::Float16: return write<uint16_t>(b, i, double_to_half(v));
    case DType::BFloat16: return write<uint16_t>(b, i, float_to_bf16(static_cast<float>(v)));
    case DType::Float32: return write<float>(b, i, static_cast<float>(v));
    case DType::Float64: return write<double>(b, i, v);
  }
  BRAZE_ASSERT(false, "bad dtype");
}

}  // namespace braze
