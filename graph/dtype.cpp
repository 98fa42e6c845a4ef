#include "graph/dtype.h"

#include <algorithm>
#include <string>

#include "graph/check.h"

namespace braze {

// Note [Type promotion]
// Same kind: the wider type wins (int8+int32 -> int32, float16+float32 ->
// float32). Mixed signedness: the smallest signed type holding both
// (uint8+int8 -> int16, uint16+int8 -> int32), as NumPy. float16+bfloat16 ->
// float32 (neither holds the other). Integer or bool with float: the float
// type (PyTorch, JAX); NumPy would widen int32+float32 to float64, which on
// accelerators is the wrong default. bool with int: the int.

namespace {

struct DTypeInfo {
  std::string_view name;
  std::string_view short_name;
  size_t size;
  DTypeKind kind;
  bool is_signed;
};

constexpr DTypeInfo kInfo[] = {
    {"bool", "b1", 1, DTypeKind::Bool, false},
    {"uint8", "u8", 1, DTypeKind::Int, false},
    {"int8", "i8", 1, DTypeKind::Int, true},
    {"uint16", "u16", 2, DTypeKind::Int, false},
    {"int16", "i16", 2, DTypeKind::Int, true},
    {"uint32", "u32", 4, DTypeKind::Int, false},
    {"int32", "i32", 4, DTypeKind::Int, true},
    {"int64", "i64", 8, DTypeKind::Int, true},
    {"float16", "f16", 2, DTypeKind::Float, true},
    {"bfloat16", "bf16", 2, DTypeKind::Float, true},
    {"float32", "f32", 4, DTypeKind::Float, true},
    {"float64", "f64", 8, DTypeKind::Float, true},
};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

size_t itemsize(DType t) { return info(t).size; }
std::string_view name(DType t) { return info(t).name; }
DTypeKind kind(DType t) { return info(t).kind; }
bool is_signed(DType t) { return info(t).is_signed; }

DType parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes)
    if (s == info(t).name || s == info(t).short_name) return t;
  if (s == "float") return DType::Float32;
  if (s == "int") return DType::Int64;
  if (s == "half") return DType::Float16;
  if (s == "double") return DType::Float64;
  BRAZE_CHECK(false, "unknown dtype '", s,
              "'; expected one of bool, uint8, int8, uint16, int16, uint32, int32, "
              "int64, float16, bfloat16, float32, float64");
  return DType::Float32;  // unreachable
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  DTypeKind ka = kind(a), kb = kind(b);
  if (ka != kb) {
    // The higher kind wins outright: bool < int < float.
    return static_cast<int>(ka) > static_cast<int>(kb) ? a : b;
  }
  if (ka == DTypeKind::Float) {
    bool has_f16 = a == DType::Float16 || b == DType::Float16;
    bool has_bf16 = a == DType::BFloat16 || b == DType::BFloat16;
    if (has_f16 && has_bf16) return DType::Float32;
    return itemsize(a) >= itemsize(b) ? a : b;
  }
  // Integers of one signedness: the wider. Mixed: the smallest signed type
  // holding both, as NumPy (uint8 + int8 -> int16, uint32 + int32 ->
  // int64); braze has no uint64, so a signed type wider than the unsigned
  // one always exists.
  if (is_signed(a) == is_signed(b)) return itemsize(a) >= itemsize(b) ? a : b;
  DType s = is_signed(a) ? a : b, u = is_signed(a) ? b : a;
  if (itemsize(s) > itemsize(u)) return s;
  switch (itemsize(u)) {
    case 1: return DType::Int16;
    case 2: return DType::Int32;
    default: return DType::Int64;
  }
}

DType promote_with_scalar(DType tensor, DTypeKind scalar) {
  if (static_cast<int>(scalar) <= static_cast<int>(kind(tensor))) return tensor;
  return scalar == DTypeKind::Float ? kDefaultFloat : kDefaultInt;
}

}  // namespace braze
