// float16 and bfloat16 <-> float32, round to nearest even, NaN kept quiet.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace braze {

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline float bf16_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // inf, NaN
  if (exp == 0) {                                                        // zero, subnormal
    float f = static_cast<float>(man) * 5.9604644775390625e-8f;          // man * 2^-24
    return sign ? -f : f;
  }
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t float_to_half(float f) {
  uint32_t u = float_bits(f);
  auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x3ffu);  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (a < 0x38800000u) {                        // below 2^-14: subnormal half or zero
    // Adding 0.5 (2^-1) shifts the mantissa so the FPU rounds it at 2^-24.
    float r = bits_float(a) + 0.5f;
    return sign | static_cast<uint16_t>(float_bits(r) - float_bits(0.5f));
  }
  uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u) - (112u << 23);
  return sign | static_cast<uint16_t>(rounded >> 13);
}

// Note [Rounding float64 to 16 bits]
// Rounding a double to float32 and then to float16 rounds twice: a double
// just above a float16 tie becomes the tie in float32, which then goes to
// even, one ulp off (1 in 10^4 random doubles). NumPy rounds float64 ->
// float16 once, so braze does too: the double goes to float32 rounded to
// odd (truncated, then the last bit set if anything was dropped), which
// keeps every bit float16 rounding looks at (float32 has 13 more), and then
// to float16 as usual. The CPU kernels do the same in vector registers
// (jit_cpu/gen_wide.cpp). ml_dtypes rounds float64 -> bfloat16 through
// float32, twice; braze matches that, since bfloat16 is ml_dtypes' type.
inline float double_to_float_odd(double d) {
  float f = static_cast<float>(d);  // nearest
  double back = f;
  if (back == d || d != d) return f;  // exact, or NaN
  uint32_t u = float_bits(f);
  if (std::fabs(back) > std::fabs(d)) --u;  // rounded away from zero: step back toward it
  return bits_float(u | 1u);
}

inline uint16_t double_to_half(double d) { return float_to_half(double_to_float_odd(d)); }

}  // namespace braze
