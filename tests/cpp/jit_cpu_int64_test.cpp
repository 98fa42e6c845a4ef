// int64 values through the CPU JIT, in the Long lanes of wide kernels (Note
// [Wide kernels] in jit_cpu/lanes.h), on both ISAs, against the spec
// interpreter, bit for bit: every element-wise op of the table in every
// layout, int64 beside every other dtype, the edges (INT64_MIN and MAX, -1,
// 0, past 2^53 where float64 rounds), casts, aranges, scalars, and
// reductions along rows and columns. On a CPU without AVX-512 its kernels
// are generated but not run (Checked::not_run).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "tests/cpp/jit_check.h"
#include "tests/cpp/jit_values.h"

namespace braze {
namespace {

using namespace testing;  // check_both, values_of, in_layout, ... (jit_values.h)

constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k53 = int64_t{1} << 53;

Tensor longs(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return from_vector<int64_t>(v, {1, n}, DType::Int64);
}

// The edges, 19 of them: a tail on both ISAs.
Tensor edges() {
  return longs({kMin, kMin + 1, -k53 - 1, -k53, -4294967297, INT32_MIN, -7, -1, 0, 1, 3, 2147483648, k53 + 1,
                k53 + 3, 3037000500, (int64_t{1} << 62) + 12345, kMax - 1, kMax, 9007199254740993 * 3});
}

// Every element-wise op of the table on int64 arguments in every layout is
// generated: int64 adds no interpreted kernels.
TEST(JitCpuInt64, EveryElementwiseOpInEveryLayout) {
  int compiled = 0;
  for (size_t o = 0; o < kNumOps; ++o) {
    const Op op = static_cast<Op>(o);
    if (!is_elementwise(op) || info(op).builder != Builder::Auto) continue;
    for (size_t li = 0; li < std::size(kLayouts); ++li) {
      SCOPED_TRACE(std::string(info(op).api) + " " + kLayoutNames[li]);
      std::vector<Operand> xs;
      for (int i = 0; i < info(op).arity; ++i) {
        Tensor x = in_layout(kLayouts[li], op == Op::Where && i == 0 ? DType::Bool : DType::Int64,
                             static_cast<uint32_t>(17 * o + 3 * i));
        if (op == Op::Pow && i == 1) x = x % 70 - 3;  // mostly small, some negative
        if ((op == Op::LeftShift || op == Op::RightShift) && i == 1) x = x % 70;  // both sides of 64, some negative
        xs.push_back(x);
      }
      Checked c = check_both({record(op, std::span<const Operand>(xs.data(), xs.size()))}, 1e-6);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
      compiled += c.compiled;
      if (HasFailure()) return;
    }
  }
  std::printf("int64 op x layout: %d kernels generated\n", compiled);
}

// int64 beside every other dtype, in both orders: the promoted op runs in
// Long lanes (beside integers) or Double lanes (beside floats), as the
// reference computes it (float16 and bfloat16 widened exactly, rounded
// through float32 on store).
TEST(JitCpuInt64, BesideEveryOtherDtype) {
  Tensor x = values_of(DType::Int64, {5, 19}, 1);
  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int32, DType::Float16, DType::BFloat16, DType::Float32,
                  DType::Float64}) {
    SCOPED_TRACE(name(t));
    Tensor y = values_of(t, {5, 19}, 2);
    // Lists, not a vector grown by push_back: g++ 12 at -O3 takes that
    // regrowth for an access past the end (-Werror=array-bounds).
    auto check = [](std::initializer_list<Tensor> rs) {
      for (const Tensor& r : rs) expect_all_generated(check_both({r}, 1e-6));
    };
    check({x + y, y - x, x * y, y / x, maximum(x, y), minimum(y, x), equal(x, y), x < y, y >= x, where(x > 0, x, y),
           where(y > 0, y, x), power(y, x % 5)});
    if (!is_float(t)) check({x % y, y % x});
    if (HasFailure()) return;
  }
}

// Arithmetic wraps as the reference's int64 does; min, max, abs and sign
// at INT64_MIN; compares exact past 2^53, where float64 would say equal.
TEST(JitCpuInt64, EdgesWrapAsTheReference) {
  Tensor e = edges(), f = longs({-1, kMin, 3, -k53 - 2, 5, 7, kMax, -1, 0, 2, -3, 2147483648, k53, k53 + 2, -3037000500,
                                  4, -1, kMin, 1});
  expect_all_generated(check_both({e + 1, e - 1, e * 3, e * f, -e, abs(e), sign(e), square(e), maximum(e, f),
                                   minimum(e, f), e + f, e - f, relu(e), floor(e), isnan(e), logical_not(e)}));
  expect_all_generated(check_both({equal(e, f), not_equal(e, f), e < f, e <= f, e > f, e >= f, equal(e, e + 1),
                                   e > kMax - 1, where(e > 0, e, f), logical_and(e, f), logical_or(e, e * 0)}));
  // Python's %, x % 0 and x % -1 are 0; power by squaring, wrapping, 0
  // for negative exponents but of 1 and -1.
  expect_all_generated(check_both({e % f, f % e, e % 7, e % -7, e % 0, e % -1, power(e, 3), power(f, e % 63),
                                   power(longs({1, -1, -1, 2, 0, -2, 3, 1, -1, 5, 7, 0, 2, 2, 3, 10, -1, 1, 2}), f % 64)}));
}

// Casts as the reference's: int64 -> float64 and float32 rounds once (twice
// to float32, through double, as the reference), a float -> int64
// truncates toward zero (NaN and |x| >= 2^63 give INT64_MIN), narrower
// integers wrap.
TEST(JitCpuInt64, CastsAtEveryEdge) {
  Tensor e = edges();
  for (DType to : {DType::Float64, DType::Float32, DType::Int32, DType::Int8, DType::UInt8, DType::Bool}) {
    SCOPED_TRACE(name(to));
    expect_all_generated(check_both({astype(e, to), astype(e + 1, to), astype(-e, to)}, 0));
  }
  std::vector<double> v = {NAN,   INFINITY, -INFINITY, 0x1p63, -0x1p63, 0x1p63 - 1024, -0x1p63 + 1024, 0x1p53 + 2,
                           -0.5,  0.99999, -1.5,      1e300,  -1e300,  5e-324,        -0.0,           3e9,
                           -3e9,  0x1p62,  4294967296.5};
  Tensor d = from_vector<double>(v, {1, static_cast<int64_t>(v.size())});
  for (DType from : {DType::Float64, DType::Float32}) {
    SCOPED_TRACE(name(from));
    Tensor x = astype(d, from);
    realize({x});
    expect_all_generated(check_both({astype(x, DType::Int64), astype(x, DType::Int64) + 1}));
  }
  for (DType from : {DType::Int32, DType::Int8, DType::UInt8, DType::Bool}) {
    SCOPED_TRACE(name(from));
    Tensor x = values_of(from, {3, 21}, 4);
    expect_all_generated(check_both({astype(x, DType::Int64), astype(x, DType::Int64) * 4294967296}));
  }
}

// bz.arange is int64; a transposed or reshaped arange, and scalars (weak
// Python ints, so int64 beside int64) as kernel arguments.
TEST(JitCpuInt64, ArangesAndScalars) {
  for (int64_t n : {1, 3, 4, 5, 8, 9, 17, 100}) {
    SCOPED_TRACE("length " + std::to_string(n));
    Tensor a = arange(Scalar(int64_t{-5}), Scalar(-5 + 3 * n), Scalar(int64_t{3}));
    ASSERT_EQ(a.dtype(), DType::Int64);
    expect_all_generated(check_both({a, a * a, a % 4, where(a > 2, a, -1), a + (int64_t{1} << 60)}));
  }
  Tensor big = arange(Scalar(int64_t{1} << 60), Scalar((int64_t{1} << 60) + 600), Scalar(int64_t{2}));
  Tensor grid = reshape(arange(Scalar(int64_t{7}), Scalar(int64_t{7 + 5 * 600}), Scalar(int64_t{5})), {20, 30});
  expect_all_generated(check_both({big, astype(big, DType::Float64), grid, transpose(grid) * 2, sum(grid, Axes{{0}}),
                                   astype(transpose(grid), DType::Int8)}));
  Tensor x = values_of(DType::Int64, {4, 19}, 5);
  expect_all_generated(check_both({x + 5, x * -3, 7 - x, maximum(x, 0), x > 100, where(x > 0, x, int64_t{-1}),
                                   x * 2.5, x / 2, x % 10}));
}

// Reductions with int64 results, and sums of int32, int8 and bools
// promoted to int64 (NumPy's rule), along rows and down columns, with
// further int64 arithmetic on them; float32 ones beside int64 values.
TEST(JitCpuInt64, ReductionsOverRowsAndColumns) {
  for (int64_t n : {1, 3, 4, 5, 7, 8, 9, 17, 33, 100}) {
    SCOPED_TRACE("length " + std::to_string(n));
    Tensor x = values_of(DType::Int64, {6, n}, static_cast<uint32_t>(n));
    expect_all_generated(check_both({sum(x, Axes{{-1}}), prod(x, Axes{{-1}}), max(x, Axes{{-1}}), min(x, Axes{{-1}}),
                                     sum(x, Axes{{0}}), prod(x, Axes{{0}}), max(x, Axes{{0}}), min(x, Axes{{0}}),
                                     x - max(x, Axes{{-1}}, true), x - min(x, Axes{{0}}, true), sum(x) + 1}));
    for (DType t : {DType::Int32, DType::Int8, DType::UInt8, DType::Bool}) {
      SCOPED_TRACE(name(t));
      Tensor y = values_of(t, {6, n}, static_cast<uint32_t>(n + 1));
      expect_all_generated(check_both({sum(y, Axes{{-1}}) + 1, sum(y, Axes{{0}}), sum(y, Axes{{0}}) * x,
                                       prod(y, Axes{{-1}}), sum(transpose(y), Axes{{-1}})}));
    }
  }
  Tensor f = values_of(DType::Float32, {6, 40}, 7);
  expect_all_generated(check_both({sum(f > 0, Axes{{0}}), sum(f > 0, Axes{{-1}}) * 2, sum(astype(f, DType::Int64))}));
  // float32 values of int64 ones summed along the row or down a column:
  // accumulated in float64, rounded once, as the reference does.
  Tensor x = values_of(DType::Int64, {6, 40}, 8) % 1000;
  for (const Tensor& y : {sum(x / 7, Axes{{-1}}), prod(x / 700, Axes{{-1}}), max(x / 7, Axes{{-1}}, true) + x,
                          sum(arange(Scalar(int64_t{0}), Scalar(int64_t{1000})) / 2)})
    expect_all_generated(check_both({y}));
  expect_all_generated(check_both({sum(x / 7, Axes{{0}}), prod(x / 700, Axes{{0}}) + 1.0}));
}

// argmax/argmin along the row in wide kernels (Note [Arg reductions]):
// of int64 and narrower integers and bools, of float64 (NaN wins, the
// first of equals stays), and of float32 when the index is computed with
// further; down a column they are interpreted.
TEST(JitCpuInt64, ArgMaxAndArgMinAlongTheRow) {
  for (int64_t n : {1, 3, 4, 5, 8, 9, 17, 33}) {
    SCOPED_TRACE("length " + std::to_string(n));
    for (DType t : {DType::Int64, DType::Int32, DType::Int8, DType::UInt8, DType::Bool, DType::Float64}) {
      SCOPED_TRACE(name(t));
      Tensor x = values_of(t, {7, n}, static_cast<uint32_t>(n));
      expect_all_generated(check_both({argmax(x, -1), argmin(x, -1), argmax(transpose(x), -1) + 1}));
      Tensor few = is_float(t) ? floor(x / 4.0) : x % 2;  // ties: the first of equals
      if (t != DType::Bool) expect_all_generated(check_both({argmax(few, -1), argmin(few, -1)}));
    }
    Tensor f = values_of(DType::Float32, {7, n}, 9);
    expect_all_generated(check_both({argmax(f, -1) * 2, argmin(f, -1) - argmax(f, -1)}));
  }
  Tensor equal = full({3, 40}, Scalar(int64_t{INT64_MIN}), DType::Int64);
  realize({equal});
  expect_all_generated(check_both({argmax(equal, -1), argmin(-equal - 1, -1)}));
}

}  // namespace
}  // namespace braze
