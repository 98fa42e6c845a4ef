// What the lanes of a value's register hold, by dtype (32-bit lanes, or the
// 64-bit lanes of wide kernels).
#pragma once

#include <optional>

#include "graph/dtype.h"

namespace braze::jit {

// Note [Lanes]
// Generated code keeps every value in 32-bit lanes of one of three kinds:
//   Float  float32; float16 and bfloat16 widen on load and round on store
//          (and on a cast), so they compute in float32 as the reference's
//          "float32 or wider" promises;
//   Int    int8, uint8, int16, uint16 and int32 as int32, sign- or
//          zero-extended: a lane always holds the value itself, so int32
//          instructions (vpaddd, vpcmpgtd, vpmaxsd) compute on every integer
//          dtype alike, unsigned compares included. A result of an 8- or
//          16-bit dtype is wrapped back into its range after every op (an
//          int8 127 + 1 is -128 before
//          anything reads it), as the reference stores each value in its
//          dtype; int32 arithmetic wraps by itself;
//   Mask   bool as all ones or zero, what compares produce and blends read.
// An op reads arguments in the lanes of its compute dtype (graph/infer.h
// compute_dtype); arguments in other lanes are converted first (an int8
// added to a float32 becomes float32). float64 and int64 values live in
// the 64-bit lanes of a wide kernel (Note [Wide kernels]).
//
// Note [Wide kernels]
// A spec with a float64, int64 or uint32 input or value (other than an int64 row
// total that a 32-bit kernel only stores, Note [Integer sums]) is emitted
// as a wide kernel: every register holds half as many 64-bit lanes (4 per
// ymm, 8 per zmm), each of kind
//   Double  a float64; float32 values too, widened exactly on load;
//   Long    an integer as the int64 it is: int64, and the narrower
//           integers sign- or zero-extended on load, so that, as in Int
//           lanes, one set of 64-bit instructions serves every integer
//           dtype and a narrower result wraps back into its range after
//           each op (int32 + int32 is added in 64 bits, then wrapped);
//   Mask    a bool, all 64 bits set or clear.
// The reference computes an integer op in int64 and a float op in double
// (graph/reference.cpp), which is what Long and Double lanes compute: an
// int64 argument of a float op is rounded to float64 once (vcvtqq2pd, on
// AVX2 two exact biased halves added once), a float cast to an integer
// truncates through int64 (NaN and |x| >= 2^63 give INT64_MIN), and an
// integer remainder divides lane by lane (idiv: no vector instruction
// divides integers, and a float64 quotient is not exact past 2^53). A
// float32 result is computed in float64 and rounded once, admitted only
// for the ops where that is what the reference computes (+ - * / % sqrt
// min max abs rounding, casts, where, sums and products along the row) and for
// the math functions (their float64 versions, rounded once, are within
// 0.5 ulp + 2^-28 of the exact float32 result). AVX2 has no 64-bit
// multiply, max, min or abs; those are sequences (jit_cpu/int_ops.h,
// long_ops.h). float16 and bfloat16 values compute as float32 values do
// (rounds_to_float32) and round to their dtype, through float32 as the
// reference rounds, on a cast or a store.
enum class Lanes { Float, Int, Mask, Double, Long };

inline std::optional<Lanes> lanes_of(DType t) {
  switch (t) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16: return Lanes::Float;
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:
    case DType::Int32: return Lanes::Int;
    case DType::Bool: return Lanes::Mask;
    case DType::UInt32:  // past int32: in 64-bit lanes (Note [Wide kernels])
    case DType::Int64:
    case DType::Float64: break;
  }
  return std::nullopt;
}

// Whether every value of integer dtype `from` is one of `to` (bool's 0
// and 1 are every integer's): wrapping lanes of `from` to `to` changes
// nothing.
inline bool holds_all(DType to, DType from) {
  if (from == to || from == DType::Bool) return true;
  if (is_signed(from) == is_signed(to)) return itemsize(from) <= itemsize(to);
  return !is_signed(from) && itemsize(from) < itemsize(to);
}

// The dtype whose values fill lanes of kind `l` exactly: what an argument
// is converted to before an op computes in those lanes.
inline DType widest(Lanes l) {
  switch (l) {
    case Lanes::Float: return DType::Float32;
    case Lanes::Int: return DType::Int32;
    case Lanes::Double: return DType::Float64;
    case Lanes::Long: return DType::Int64;
    case Lanes::Mask: break;
  }
  return DType::Bool;
}

// A float value that a wide kernel computes in float64 and rounds to
// float32 after every op: float32, and float16 and bfloat16, which compute
// in float32 as in 32-bit lanes (Note [Lanes]) and round to their own
// dtype only on a cast or a store.
inline bool rounds_to_float32(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}

// Note [Wide kernels]: the lanes of a value of dtype t in a wide kernel.
inline Lanes wide_lanes_of(DType t) {
  if (t == DType::Bool) return Lanes::Mask;
  return is_float(t) ? Lanes::Double : Lanes::Long;
}

// The lanes an op computes in, given its compute dtype, in a 32-bit or a
// wide kernel: a bool computes as the integers 0 and 1 (true + true is 2,
// then true on store).
inline Lanes compute_lanes(DType compute, bool wide) {
  if (compute == DType::Bool) return wide ? Lanes::Long : Lanes::Int;
  return wide ? wide_lanes_of(compute) : *lanes_of(compute);
}

}  // namespace braze::jit
