// Integer and bool values through the CPU JIT (Note [Lanes] in
// jit_cpu/lanes.h), on both ISAs, against the spec interpreter: every
// element-wise op of the table x dtype x layout, then the edges where
// integers differ from floats (wrapping, INT32_MIN, casts of NaN and of
// out-of-range floats, unsigned compares, empty tensors). On a CPU without
// AVX-512 its kernels are generated but not run (Checked::not_run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <iterator>
#include <cstdint>
#include <limits>
#include <random>

#include "tests/cpp/jit_check.h"
#include "tests/cpp/jit_values.h"

namespace braze {
namespace {

using testing::check_both;
using testing::Checked;
using testing::expect_all_generated;
using testing::in_layout;
using testing::kLayoutNames;
using testing::kLayouts;
using testing::Layout;
using testing::values_of;

constexpr DType kIntegral[] = {DType::Bool,  DType::UInt8,  DType::Int8, DType::UInt16,
                               DType::Int16, DType::UInt32, DType::Int32};

// Every element-wise op on every integral dtype in every layout runs as
// generated code wherever the same op on float32 does: integers add no
// interpreted kernels.
TEST(JitCpuDtypes, EveryElementwiseOpDtypeAndLayout) {
  int compiled = 0, interpreted = 0;
  for (size_t o = 0; o < kNumOps; ++o) {
    const Op op = static_cast<Op>(o);
    if (!is_elementwise(op) || info(op).builder != Builder::Auto) continue;
    for (size_t li = 0; li < std::size(kLayouts); ++li) {
      const Layout l = kLayouts[li];
      auto apply = [&](DType t) {
        std::vector<Operand> xs;
        for (int i = 0; i < info(op).arity; ++i) {
          DType ti = op == Op::Where && i == 0 ? DType::Bool : t;
          // Exponents small and mostly non-negative, as power's are.
          Tensor x = in_layout(l, ti, static_cast<uint32_t>(17 * o + 3 * i));
          if (op == Op::Pow && i == 1 && t != DType::Bool && !is_float(t)) x = x % 5 - 1;
          // Shift counts on both sides of the width, some negative (Note [Shift counts]).
          if ((op == Op::LeftShift || op == Op::RightShift) && i == 1 && t != DType::Bool && !is_float(t))
            x = x % static_cast<int64_t>(8 * itemsize(t) + 3);
          xs.push_back(x);
        }
        if (xs.size() == 1) return record(op, {xs[0]});
        if (xs.size() == 2) return record(op, {xs[0], xs[1]});
        return record(op, {xs[0], xs[1], xs[2]});
      };
      SCOPED_TRACE(std::string(info(op).api) + " " + kLayoutNames[li]);
      Checked f;
      try {
        f = check_both({apply(DType::Float32)}, 1e-5);
      } catch (const std::invalid_argument&) {  // integers and bools only (bitwise ops)
      }
      for (DType t : kIntegral) {
        SCOPED_TRACE(name(t));
        Tensor y;
        try {
          y = apply(t);
        } catch (const std::invalid_argument&) {  // the op rejects the dtype (negative of bool)
          continue;
        }
        Checked c = check_both({y}, 1e-5);
        // An op on the integers themselves is always generated; one that
        // computes in float32 (erf, sin, exp2 of an int) wherever it is for floats.
        DTypeRule rule = info(op).dtype_rule;
        if (rule == DTypeRule::ToFloat || rule == DTypeRule::PromoteFloat)
          EXPECT_LE(c.interpreted, f.interpreted) << ::testing::PrintToString(c.why);
        else
          EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
        compiled += c.compiled;
        interpreted += c.interpreted;
      }
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(compiled, 4 * interpreted) << compiled << " generated, " << interpreted << " interpreted";
  std::printf("integral op x dtype x layout: %d kernels generated, %d interpreted\n", compiled, interpreted);
}

// Every element-wise op on float64 in every layout (Note [Wide kernels] in
// jit_cpu/lanes.h) is generated.
TEST(JitCpuDtypes, EveryElementwiseOpOnFloat64InEveryLayout) {
  int compiled = 0;
  for (size_t o = 0; o < kNumOps; ++o) {
    const Op op = static_cast<Op>(o);
    if (!is_elementwise(op) || info(op).builder != Builder::Auto) continue;
    for (size_t li = 0; li < std::size(kLayouts); ++li) {
      SCOPED_TRACE(std::string(info(op).api) + " " + kLayoutNames[li]);
      std::vector<Operand> xs;
      for (int i = 0; i < info(op).arity; ++i)
        xs.push_back(in_layout(kLayouts[li], op == Op::Where && i == 0 ? DType::Bool : DType::Float64,
                               static_cast<uint32_t>(17 * o + 3 * i)));
      Tensor y;
      try {
        y = record(op, std::span<const Operand>(xs.data(), xs.size()));
      } catch (const std::invalid_argument&) {  // integers and bools only (bitwise ops)
        continue;
      }
      Checked c = check_both({y}, 1e-13);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
      compiled += c.compiled;
      if (HasFailure()) return;
    }
  }
  std::printf("float64 op x layout: %d kernels generated\n", compiled);
}

// Python's % of floats (Note [Exact remainder] in jit_cpu/remainder_f64.h)
// bit for bit as the reference's fmod-based one, signed zeros included:
// every pair of edges, quotients from 0 to 2^2098 (every step count of the
// reduction), and dividends a multiple of the divisor give or take an ulp,
// where a quotient rounds to the integer next to the true one.
TEST(JitCpuDtypes, FloatRemainderIsExact) {
  for (DType t : {DType::Float64, DType::Float32, DType::Float16}) {
    SCOPED_TRACE(name(t));
    const bool f64 = t == DType::Float64, f32 = t == DType::Float32;
    const double top = f64 ? DBL_MAX : f32 ? FLT_MAX : 65504.0, tiny = f64 ? 0x1p-1074 : f32 ? 0x1p-149 : 0x1p-24;
    const std::vector<double> edges = {0.0, -0.0, 1.0, -1.0, 3.0, -7.5, 0.1, top, -top, tiny, -tiny, 0x1p-14,
                                       INFINITY, -INFINITY, NAN};
    std::vector<double> a, b;
    for (double x : edges)
      for (double y : edges) a.push_back(x), b.push_back(y);
    std::mt19937_64 rng(7);
    const int span = f64 ? 2098 : f32 ? 277 : 40;
    std::uniform_real_distribution<double> unit(1.0, 2.0);
    for (int i = 0; i < 600; ++i) {
      const int ey = -static_cast<int>(rng() % (span / 2 + 1)), ex = ey + static_cast<int>(rng() % (span / 2 + 1));
      double y = std::ldexp(unit(rng), ey) * (rng() % 2 ? 1 : -1), x = std::ldexp(unit(rng), ex) * (rng() % 2 ? 1 : -1);
      if (i % 3 == 0) x = y * static_cast<double>(rng() % 100000 + 1) * (i % 2 ? 1 : -1);  // a multiple, rounded
      if (i % 3 == 1) x = std::nextafter(y * static_cast<double>(rng() % (uint64_t{1} << 40) + 1), 0.0);
      a.push_back(x), b.push_back(y);
    }
    const int64_t n = static_cast<int64_t>(a.size());
    Tensor x = from_vector<double>(a, {n}, DType::Float64), y = from_vector<double>(b, {n}, DType::Float64);
    if (!f64) {
      x = astype(x, t), y = astype(y, t);
      realize({x, y});
    }
    expect_all_generated(check_both({x % y, y % x, x % 2.5, full({n}, Scalar(-1.0), t) % y}, 0));
  }
}

Tensor ints(std::vector<int64_t> v, DType t) {
  int64_t n = static_cast<int64_t>(v.size());
  return from_vector<int64_t>(v, {1, n}, t);
}

TEST(JitCpuDtypes, ArithmeticWrapsAndLaterOpsSeeTheWrappedValue) {
  Tensor i8 = ints({127, -128, 100, -100, 0, 1, -1, 64, -65, 50, 127, -128, 3, 99, -99, 12, 127}, DType::Int8);
  expect_all_generated(check_both({i8 + 1, i8 * 3, -i8, abs(i8), square(i8), i8 - 100, (i8 + 1) < 0, (i8 * 2) / 3,
                                   astype(i8 + i8, DType::Float32), maximum(i8 + 100, 0)}));
  Tensor u8 = ints({0, 1, 100, 127, 128, 200, 255, 254, 3, 17, 255, 0, 128, 129, 64, 250, 5}, DType::UInt8);
  expect_all_generated(check_both({u8 + 100, u8 * 2, -u8, (u8 + 100) > u8, u8 - 1, u8 % 7, u8 > 100}));
  Tensor i32 = ints({INT32_MIN, INT32_MAX, 65536, -65536, 0, 1, -1, 46341, -7, 7, INT32_MIN + 1}, DType::Int32);
  expect_all_generated(check_both({i32 + 1, i32 - 1, i32 * 65536, -i32, abs(i32), sign(i32), square(i32),
                                   i32 * i32 < 0, minimum(i32, -i32)}));
}

TEST(JitCpuDtypes, RemainderAndPowerOfIntegers) {
  Tensor a = ints({INT32_MIN, INT32_MIN, INT32_MAX, 7, -7, 7, -7, 0, 5, -5, 100, INT32_MIN, 13, 1, -1, -1, 2}, DType::Int32);
  Tensor b = ints({-1, 7, -2, 3, 3, -3, -3, 5, 0, 0, 1, INT32_MAX, -13, -5, -5, -4, 31}, DType::Int32);
  expect_all_generated(check_both({a % b, b % a, power(a, b), power(b, a % 40), power(a, 3)}));
  Tensor c = ints({-128, 127, -7, 7, 0, 100, -100, 3, 2, -1, 1, 5, -2, 9, -128, 127, 64}, DType::Int8);
  Tensor d = ints({-1, 2, 3, -3, 7, 0, 7, -128, 7, -3, -4, 2, 3, 2, -128, 127, 2}, DType::Int8);
  expect_all_generated(check_both({c % d, power(c, d), power(astype(c, DType::UInt8), astype(d, DType::UInt8) % 9)}));
}

TEST(JitCpuDtypes, CastsMatchTheReferenceAtEveryEdge) {
  // The reference truncates toward zero through int64, then wraps:
  // NaN, infinities and |x| >= 2^63 give 0 in 32 bits and less.
  const float big = 2147483648.0f;
  std::vector<float> v = {NAN, INFINITY, -INFINITY, 3e9f, -3e9f, big, -big, 2147483520.0f, -2147483520.0f, 1e20f,
                          -1e20f, 9.3e18f, -9.3e18f, 127.9f, -128.5f, 255.9f, 256.0f, -1.5f, -0.0f, 0.5f, 1e-30f,
                          4294967296.0f, 6442450944.0f, 16777217.0f, -0.99f};
  Tensor f = from_vector<float>(v, {1, static_cast<int64_t>(v.size())});
  for (DType from : {DType::Float32, DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(name(from));
    Tensor x = astype(f, from);
    realize({x});
    expect_all_generated(check_both({astype(x, DType::Int32), astype(x, DType::Int8), astype(x, DType::UInt8),
                                     astype(x, DType::Int16), astype(x, DType::UInt16), astype(x, DType::UInt32),
                                     astype(x, DType::Bool)}));
  }
  Tensor i = ints({16777217, INT32_MAX, INT32_MIN, 65520, 65519, -65536, 300, -129, 255, 256, 0, 1, -1, 33554435,
                   16777215, 2049, -2049},
                  DType::Int32);
  for (DType to : {DType::Float32, DType::Float16, DType::BFloat16, DType::Int8, DType::UInt8, DType::Int16,
                   DType::UInt16, DType::UInt32, DType::Bool}) {
    SCOPED_TRACE(name(to));
    expect_all_generated(check_both({astype(i, to), astype(astype(i, DType::Int8), to),
                                     astype(astype(i, DType::UInt8), to), astype(astype(i, DType::Int16), to),
                                     astype(astype(i, DType::UInt16), to), astype(astype(i, DType::UInt32), to),
                                     astype(i > 0, to)}));
  }
}

TEST(JitCpuDtypes, ComparisonsAcrossSignednessAndKinds) {
  Tensor u = ints({200, 100, 0, 255, 128, 127, 1, 250, 3, 4, 5, 6, 7, 8, 9, 10, 255}, DType::UInt8);
  Tensor s = ints({-56, 100, 0, -1, -128, 127, 1, -6, 3, -4, 5, -6, 7, -8, 9, -10, 127}, DType::Int8);
  expect_all_generated(check_both({u > 100, u < 200, u >= s, equal(u, astype(s, DType::UInt8)), s <= u, not_equal(u, s),
                                   maximum(u, s), minimum(u, s), u + s, equal(u > 3, s > 3), (u > 3) < (s > 3)}));
  // Wider: uint16 with int16 computes in int32, uint32 with int32 in int64
  // (the values reach both ends of each range).
  Tensor u16 = astype(u, DType::UInt16) * 257, s16 = astype(s, DType::Int16) * 257;
  Tensor u32 = astype(u16, DType::UInt32) * 65537, s32 = astype(s16, DType::Int32) * 65537;
  expect_all_generated(check_both({u16 > s16, maximum(u16, s16), u16 + s16, u16 * u16, u32 > s32, minimum(u32, s32),
                                   u32 - s32, u32 < int64_t{3000000000}, u32 * u32, u32 / u16, u32 % u16}));
  // Mixed with floats: the integers are converted (exactly, for 8 bits).
  Tensor f = values_of(DType::Float32, {1, 17}, 5);
  expect_all_generated(check_both({s + f, u * astype(f, DType::Float16), s < f, where(u > 100, s, f), exp(s),
                                   sqrt(u), s / u, logical_and(s, f), logical_or(u, s), logical_not(s)},
                                  1e-5));
  // An int32 compared with a float would round in float32 lanes (16777217
  // is 16777216.0f); the reference compares exactly, and so does the wide
  // kernel such a comparison makes, in float64.
  Tensor i = ints({16777217, 1, 2, 3, 2147483647, -2147483647 - 1, -16777217, 7}, DType::Int32);
  Tensor g = astype(i, DType::Float32);
  expect_all_generated(check_both({i > g, i >= g, equal(i, g), not_equal(g, i), i < g * 1.5, i <= exp(g * 0.0)}, 0));
}

TEST(JitCpuDtypes, ScalarsAndAranges) {
  Tensor i8 = values_of(DType::Int8, {3, 33}, 1), u8 = values_of(DType::UInt8, {3, 33}, 2);
  Tensor i32 = values_of(DType::Int32, {3, 33}, 3);
  expect_all_generated(check_both({i8 + 3, u8 * 200, i32 - 2000000000, i32 * 2.5, i8 > 1.5, where(u8 > 9, i8, 7),
                                   full({3, 33}, Scalar(int64_t{-5}), DType::Int8) + i8, logical_and(i8, true)},
                                  1e-6));
  for (DType t : {DType::Int32, DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::UInt32}) {
    SCOPED_TRACE(name(t));
    // Past the dtype's range the elements wrap; the start must fit it
    // (Note [NumPy's arange]: uint8 from -70 is an OverflowError).
    Tensor a = arange(Scalar(int64_t{is_signed(t) ? -70 : 0}), Scalar(int64_t{300}), Scalar(int64_t{3}), t);
    expect_all_generated(check_both({a, a + 1, reshape(arange(Scalar(int64_t{5}), Scalar(int64_t{605}), Scalar(int64_t{2}), t), {20, 15}) * 3}));
  }
}

// float16 and bfloat16 beside float64 (Note [Wide kernels]): widened
// exactly on load in every layout, rounded through float32 as the
// reference rounds on a cast or a store, summed in float64.
TEST(JitCpuDtypes, HalfFloatsBesideFloat64) {
  for (DType t : {DType::Float16, DType::BFloat16})
    for (size_t li = 0; li < std::size(kLayouts); ++li) {
      SCOPED_TRACE(std::string(name(t)) + " " + kLayoutNames[li]);
      const Layout other = kLayouts[li] == Layout::Empty ? Layout::Empty : kLayouts[(li + 1) % 5];
      Tensor h = in_layout(kLayouts[li], t, 41), d = in_layout(other, DType::Float64, 42);
      expect_all_generated(check_both({h + d, astype(h, DType::Float64), where(h > d, h, d), astype(d * 300.0, t),
                                       astype(d, t) + h},
                                      0));
      if (kLayouts[li] == Layout::Empty || kLayouts[li] == Layout::Scalar) continue;
      expect_all_generated(check_both({sum(h * d, std::vector<int64_t>{1}), max(h - d, std::vector<int64_t>{0})}, 1e-12));
      // Rounded to t once, from float64 totals that may differ in their last bits.
      expect_all_generated(check_both({sum(astype(d, t), std::vector<int64_t>{1})}, 1e-2));
    }
}

// Float aranges beside float64: start + i * step in float64, as the
// reference computes it, then rounded to the arange's dtype; along the
// row, and one value per row.
TEST(JitCpuDtypes, FloatArangesBesideFloat64) {
  Tensor d = values_of(DType::Float64, {14, 31}, 43), col = values_of(DType::Float64, {434, 1}, 44);
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    SCOPED_TRACE(name(t));
    Tensor along = arange(Scalar(-3.5), Scalar(300.0), Scalar(0.7), t);  // 434 elements
    Tensor per_row = reshape(arange(Scalar(0.1), Scalar(1.5), Scalar(0.1), t), {14, 1});
    expect_all_generated(check_both({reshape(along, {14, 31}) + d, per_row - d, along * col}, 0));
  }
}

TEST(JitCpuDtypes, MaxAndMinOverRowsAndColumns) {
  for (int64_t n : {1, 7, 8, 9, 17, 33, 100}) {
    SCOPED_TRACE("length " + std::to_string(n));
    for (DType t : {DType::UInt8, DType::Int8, DType::UInt16, DType::Int16, DType::UInt32, DType::Int32}) {
      Tensor x = values_of(t, {5, n}, static_cast<uint32_t>(n));
      expect_all_generated(check_both({max(x, Axes{{-1}}), min(x, Axes{{-1}}), x - max(x, Axes{{-1}}, true),
                                       max(x, Axes{{0}}), min(transpose(x), Axes{{-1}})}));
    }
    Tensor m = values_of(DType::Bool, {5, n}, static_cast<uint32_t>(n));
    expect_all_generated(check_both({max(m, Axes{{-1}}), min(m, Axes{{-1}}), max(m, Axes{{0}}), min(m, Axes{{0}})}));
  }
}

TEST(JitCpuDtypes, EmptyIntegerTensors) {
  Tensor e = values_of(DType::Int8, {3, 0}, 1), u = values_of(DType::UInt8, {0}, 2);
  check_both({e + 1, astype(e, DType::Float32), e > 0, u * 2, max(values_of(DType::Int32, {0, 4}, 3), Axes{{1}})});
}

// Note [Integer sums]: row sums of integers and bools are int64, exact
// past int32 (a row of INT32_MAX); what computes with an int64 further,
// products and column sums run in the Long lanes of wide kernels.
TEST(JitCpuDtypes, IntegerRowSumsAreInt64) {
  // An empty sum folds to a constant 0, and a sum over a size-1 axis is
  // the value widened per element: int64 values, in Long lanes.
  expect_all_generated(
      check_both({sum(values_of(DType::Int8, {5, 0}, 1), Axes{{-1}}), sum(values_of(DType::Int8, {5, 1}, 1), Axes{{-1}})}));
  for (int64_t n : {2, 7, 8, 9, 17, 33, 100}) {
    SCOPED_TRACE("length " + std::to_string(n));
    for (DType t : kIntegral) {
      Tensor x = values_of(t, {5, n}, static_cast<uint32_t>(n));
      expect_all_generated(check_both({sum(x, Axes{{-1}}), sum(x, Axes{{-1}}, true)}));
    }
    Tensor f = values_of(DType::Float32, {5, n}, 7);
    expect_all_generated(check_both({sum(f > 0.5, Axes{{-1}}), sum(astype(f, DType::Int8), Axes{{-1}})}));
  }
  Tensor big = full({2, 40}, Scalar(int64_t{INT32_MAX}), DType::Int32);
  realize({big});
  expect_all_generated(check_both({sum(big, Axes{{-1}}), sum(-big - 1, Axes{{-1}}), sum(big)}));
  Tensor x = values_of(DType::Int32, {4, 9}, 1);
  expect_all_generated(check_both({prod(x, Axes{{-1}}), sum(x, Axes{{-1}}) + 1, sum(x, Axes{{0}})}));
}

}  // namespace
}  // namespace braze
