// float16 and bfloat16 conversions (graph/half.h): exact widening, round to
// nearest even when narrowing, and the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "graph/half.h"

namespace braze {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; }

// The value of a half bit pattern from its definition, independent of half.h:
// (-1)^s * 2^(e-15) * (1 + m/1024), or 2^-14 * m/1024 for subnormals.
double half_value(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return s ? -v : v;
}

TEST(Half, WideningIsExactForEveryFinitePattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    auto x = static_cast<uint16_t>(h);
    if (((x >> 10) & 0x1f) == 0x1f) continue;  // inf and NaN below
    ASSERT_EQ(static_cast<double>(half_to_float(x)), half_value(x)) << std::hex << h;
  }
}

TEST(Half, RoundTripOfEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    auto x = static_cast<uint16_t>(h);
    float f = half_to_float(x);
    uint16_t back = float_to_half(f);
    if (half_is_nan(x)) {
      // NaN stays NaN with its sign, quieted (bit 9 set), payload kept.
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(back, x | 0x200u) << std::hex << h;
    } else {
      ASSERT_EQ(back, x) << std::hex << h;
    }
  }
}

TEST(Half, SpecialValues) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(kInf), 0x7c00);
  EXPECT_EQ(float_to_half(-kInf), 0xfc00);
  EXPECT_TRUE(half_is_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(half_is_nan(float_to_half(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(float_to_half(-std::numeric_limits<float>::quiet_NaN()) & 0x8000);
  // A float NaN whose payload lives only in the bits a half drops stays NaN.
  EXPECT_TRUE(half_is_nan(float_to_half(bits_float(0x7f800001u))));
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);                // the largest half
  EXPECT_EQ(float_to_half(6.103515625e-05f), 0x0400);        // the smallest normal, 2^-14
  EXPECT_EQ(float_to_half(5.9604644775390625e-08f), 0x0001);  // the smallest subnormal, 2^-24
  EXPECT_EQ(half_to_float(0x7c00), kInf);
  EXPECT_EQ(half_to_float(0xfc00), -kInf);
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(Half, OverflowAndUnderflow) {
  // 65520 is the midpoint between 65504 and 2^16; ties go to even, which is inf.
  EXPECT_EQ(float_to_half(65519.996f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);
  EXPECT_EQ(float_to_half(-1e6f), 0xfc00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::max()), 0x7c00);
  // Below half the smallest subnormal: zero with the sign kept.
  EXPECT_EQ(float_to_half(2e-8f), 0x0000);
  EXPECT_EQ(float_to_half(-2e-8f), 0x8000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::denorm_min()), 0x8000);
  // 2^-25 is the tie between 0 and 2^-24: even is 0. A hair above goes up.
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_half(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
}

// For every pair of adjacent finite halves (subnormals included, and the
// largest half against inf), the float midpoint rounds to the even one and
// the floats just beside it round to the nearer one.
TEST(Half, RoundsToNearestEvenBetweenEveryAdjacentPair) {
  for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
    for (uint32_t m = 0; m < 0x7c00; ++m) {
      auto lo = static_cast<uint16_t>(sign | m), hi = static_cast<uint16_t>(sign | (m + 1));
      float a = half_to_float(lo);
      float c = m + 1 == 0x7c00 ? (sign ? -65536.0f : 65536.0f) : half_to_float(hi);
      float mid = (a + c) / 2;  // exact: a half has 11 significant bits, a float 24
      uint16_t even = (lo & 1) ? hi : lo;
      ASSERT_EQ(float_to_half(mid), even) << std::hex << lo;
      float toward_zero = std::nextafter(mid, 0.0f), away = std::nextafter(mid, sign ? -kInf : kInf);
      ASSERT_EQ(float_to_half(toward_zero), lo) << std::hex << lo;
      ASSERT_EQ(float_to_half(away), hi) << std::hex << lo;
    }
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own float -> _Float16 conversion is an independent oracle;
// a prime stride visits every exponent and many mantissas.
TEST(Half, AgreesWithCompilerFloat16OnASampleOfAllFloats) {
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 1021) {
    float f = bits_float(static_cast<uint32_t>(u));
    _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    uint16_t got = float_to_half(f);
    if (std::isnan(f)) ASSERT_TRUE(half_is_nan(got)) << std::hex << u;
    else ASSERT_EQ(got, want) << std::hex << "float bits " << u;
  }
}
#endif

TEST(BFloat16, WideningIsTheTopHalfOfAFloat) {
  for (uint32_t h = 0; h < 65536; ++h)
    ASSERT_EQ(float_bits(bf16_to_float(static_cast<uint16_t>(h))), h << 16) << std::hex << h;
}

TEST(BFloat16, RoundTripOfEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    auto x = static_cast<uint16_t>(h);
    uint16_t back = float_to_bf16(bf16_to_float(x));
    if (bf16_is_nan(x)) ASSERT_EQ(back, x | 0x40u) << std::hex << h;  // quieted, payload and sign kept
    else ASSERT_EQ(back, x) << std::hex << h;
  }
}

TEST(BFloat16, SpecialValues) {
  EXPECT_EQ(float_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(kInf), 0x7f80);
  EXPECT_EQ(float_to_bf16(-kInf), 0xff80);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  // NaN whose payload is only in the low 16 bits must not become inf.
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(bits_float(0x7f800001u))));
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(bits_float(0xff800001u))));
  // The largest float is past the midpoint of the largest bf16 and inf.
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  // Float subnormals round like any other value.
  EXPECT_EQ(float_to_bf16(bits_float(0x00008000u)), 0x0000);  // tie, even is 0
  EXPECT_EQ(float_to_bf16(bits_float(0x00008001u)), 0x0001);
  EXPECT_EQ(float_to_bf16(bits_float(0x00018000u)), 0x0002);  // tie, even is 2
}

TEST(BFloat16, RoundsToNearestEvenBetweenEveryAdjacentPair) {
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t m = 0; m < 0x7f80; ++m) {
      uint32_t lo = sign | m, hi = sign | (m + 1);
      uint32_t mid = (lo << 16) | 0x8000u;  // the float halfway between them
      ASSERT_EQ(float_to_bf16(bits_float(mid)), (lo & 1) ? hi : lo) << std::hex << lo;
      ASSERT_EQ(float_to_bf16(bits_float(mid - 1)), lo) << std::hex << lo;
      ASSERT_EQ(float_to_bf16(bits_float(mid + 1)), hi) << std::hex << lo;
    }
  }
}

}  // namespace
}  // namespace braze
