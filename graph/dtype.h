// Element types and NumPy/array-API type promotion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace braze {

// Ordered by kind (bool < unsigned/signed int < float) so that loops over
// all dtypes read naturally; promotion does not depend on this order.
enum class DType : uint8_t {
  Bool,
  UInt8,
  Int8,
  UInt16,
  Int16,
  UInt32,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
};

inline constexpr DType kAllDTypes[] = {
    DType::Bool,    DType::UInt8,   DType::Int8,     DType::UInt16,  DType::Int16,   DType::UInt32,
    DType::Int32,   DType::Int64,   DType::Float16,  DType::BFloat16, DType::Float32, DType::Float64,
};

enum class DTypeKind : uint8_t { Bool, Int, Float };

size_t itemsize(DType t);
std::string_view name(DType t);        // NumPy spelling: "float32", "bool", ...
DType parse_dtype(std::string_view s);  // accepts NumPy names and short forms (f32, i64, bf16)
DTypeKind kind(DType t);
inline bool is_float(DType t) { return kind(t) == DTypeKind::Float; }
inline bool is_integral(DType t) { return kind(t) != DTypeKind::Float; }  // bool counts
bool is_signed(DType t);

// The result type of a binary op on two tensors. Follows the array API
// lattice; where it is silent (mixed kinds, or a type braze lacks) braze picks
// what PyTorch and JAX pick, see Note [Type promotion].
DType promote(DType a, DType b);

// The type of `tensor op python_scalar`: a Python scalar is "weak" and never
// widens the tensor's type within its kind (x_f16 * 2.0 stays float16).
DType promote_with_scalar(DType tensor, DTypeKind scalar);

// The default float type (float32): what int / int and exp(int) produce.
inline constexpr DType kDefaultFloat = DType::Float32;
// The default integer type, that of arange(5), sum of ints and argmax.
inline constexpr DType kDefaultInt = DType::Int64;

}  // namespace braze
