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
// added to a float32 becomes float32). float64 values live in the 64-bit
// lanes of a wide kernel (Note [Wide kernels]); int64 values have no lanes:
// kernels that compute with them run on the spec interpreter.
//
// Note [Wide kernels]
// A spec with a float64 input or value is emitted as a wide kernel: every
// register holds half as many 64-bit lanes (4 per ymm, 8 per zmm), each of
// kind Double (a number) or Mask (a bool, all 64 bits set or clear). The
// narrower numbers it reads (float32, int32) are widened to float64 on
// load, exactly, so they are Double lanes too; a float32 result (a cast,
// or + - * / sqrt min max ... of float32 values) is computed in float64
// and rounded to float32 once, which is what float32 arithmetic gives (a
// double holds more than twice float32's precision). Everything else a
// wide kernel would need (integer results, float32 math functions, int64
// arithmetic, 8- and 16-bit dtypes) is left to the spec interpreter
// (jit_cpu/README.md); an int64 input is admitted only as an argument of
// float64 ops, rounded to float64 on load as the reference converts it.
enum class Lanes { Float, Int, Mask, Double };

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
    case Lanes::Double: return DType::Float64;
    case Lanes::Mask: break;
  }
  return DType::Bool;
}

// The lanes an op computes in, given its compute dtype: a bool computes as
// the integers 0 and 1 (true + true is 2, then true on store).
inline Lanes compute_lanes(DType compute) {
  return compute == DType::Bool ? Lanes::Int : *lanes_of(compute);
}

// Note [Wide kernels]: the lanes of a value of dtype t in a wide kernel.
inline Lanes wide_lanes_of(DType t) { return t == DType::Bool ? Lanes::Mask : Lanes::Double; }

}  // namespace braze::jit
