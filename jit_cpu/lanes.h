// What the 32-bit lanes of a value's register hold, by dtype.
#pragma once

#include <optional>

#include "graph/dtype.h"

namespace braze::jit {

// Note [Lanes]
// Generated code keeps every value in 32-bit lanes of one of three kinds:
//   Float  float32; float16 and bfloat16 widen on load and round on store
//          (and on a cast), so they compute in float32 as the reference's
//          "float32 or wider" promises;
//   Int    int8, uint8 and int32 as int32, sign- or zero-extended: a lane
//          always holds the value itself, so int32 instructions (vpaddd,
//          vpcmpgtd, vpmaxsd) compute on every integer dtype alike, uint8
//          compares included. A result of an 8-bit dtype is wrapped back
//          into its range after every op (an int8 127 + 1 is -128 before
//          anything reads it), as the reference stores each value in its
//          dtype; int32 arithmetic wraps by itself;
//   Mask   bool as all ones or zero, what compares produce and blends read.
// An op reads arguments in the lanes of its compute dtype (graph/infer.h
// compute_dtype); arguments in other lanes are converted first (an int8
// added to a float32 becomes float32). int64 and float64 have no lanes:
// kernels that hold such values run on the spec interpreter.
enum class Lanes { Float, Int, Mask };

inline std::optional<Lanes> lanes_of(DType t) {
  switch (t) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16: return Lanes::Float;
    case DType::Int8:
    case DType::UInt8:
    case DType::Int32: return Lanes::Int;
    case DType::Bool: return Lanes::Mask;
    case DType::Int64:
    case DType::Float64: break;
  }
  return std::nullopt;
}

// The dtype whose values fill lanes of kind `l` exactly: what an argument
// is converted to before an op computes in those lanes.
inline DType widest(Lanes l) {
  switch (l) {
    case Lanes::Float: return DType::Float32;
    case Lanes::Int: return DType::Int32;
    case Lanes::Mask: break;
  }
  return DType::Bool;
}

// The lanes an op computes in, given its compute dtype: a bool computes as
// the integers 0 and 1 (true + true is 2, then true on store).
inline Lanes compute_lanes(DType compute) {
  return compute == DType::Bool ? Lanes::Int : *lanes_of(compute);
}

}  // namespace braze::jit
