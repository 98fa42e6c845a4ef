// Values and layouts for the CPU JIT's dtype tests: random values of every
// dtype with its edges among them, and operands read through the layouts of
// tests/python's matrix; check_both runs a graph's kernels for both ISAs.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <span>
#include <vector>

#include "tests/cpp/jit_check.h"

namespace braze::testing {

inline constexpr jit::Isa kBothIsas[] = {jit::Isa::Avx512, jit::Isa::Avx2};

// check_on both ISAs (an ISA this CPU lacks is generated, not run).
inline Checked check_both(std::initializer_list<Tensor> roots, double tol = 2e-6) {
  return check_on(kBothIsas, std::span<const Tensor>(roots.begin(), roots.size()), tol);
}

inline void expect_all_generated(const Checked& c) {
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  EXPECT_GT(c.compiled, 0);
}

// `shape` of dtype t: random values across the dtype's range, its extremes
// and the small integers around zero among them (floats: a spread with
// NaN and infinities; int64: small ones, and every fifth across its whole
// range, most past 2^53, where float64 rounds).
inline Tensor values_of(DType t, Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t n = numel(shape);
  std::vector<int64_t> edges;
  int64_t lo = 0, hi = 1;
  switch (t) {
    case DType::UInt8: lo = 0, hi = 255, edges = {0, 1, 2, 127, 128, 200, 255}; break;
    case DType::Int8: lo = -128, hi = 127, edges = {-128, -127, -1, 0, 1, 2, 127}; break;
    case DType::UInt16: lo = 0, hi = 3000, edges = {0, 1, 255, 256, 32767, 32768, 65534, 65535}; break;
    case DType::Int16: lo = -3000, hi = 3000, edges = {-32768, -32767, -256, -1, 0, 1, 255, 32767}; break;
    case DType::UInt32:
      lo = 0, hi = 3000, edges = {0, 1, 65536, INT32_MAX, int64_t{INT32_MAX} + 1, 4294967294, 4294967295};
      break;
    case DType::Int32:
      lo = -3000, hi = 3000, edges = {INT32_MIN, INT32_MIN + 1, -65536, -7, -1, 0, 1, 3, 65536, INT32_MAX};
      break;
    case DType::Int64:
      lo = -3000, hi = 3000;
      edges = {INT64_MIN,  INT64_MIN + 1, -(int64_t{1} << 53) - 1, -4294967297, INT32_MIN, -7, -1, 0, 1, 3,
               2147483648, (int64_t{1} << 53) + 1, 3037000500, (int64_t{1} << 62) + 12345, INT64_MAX};
      break;
    default: break;
  }
  if (is_float(t)) {
    std::vector<double> v(static_cast<size_t>(n));
    std::normal_distribution<double> d(0.0, 6.0);
    const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.5};
    for (int64_t i = 0; i < n; ++i) v[i] = i % 11 < 7 && i / 11 % 3 == 1 ? specials[i % 11] : d(rng);
    return from_vector<double>(v, std::move(shape), t);
  }
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::uniform_int_distribution<int64_t> d(lo, hi), any(INT64_MIN, INT64_MAX);
  for (int64_t i = 0; i < n; ++i) {
    v[i] = i % 5 == 0 && !edges.empty() ? edges[(i / 5) % edges.size()] : d(rng);
    if (t == DType::Int64 && i % 5 == 3) v[i] = any(rng);
  }
  return from_vector<int64_t>(v, std::move(shape), t);
}

// The layouts of tests/python's matrix: each operand is read as [rows,
// cols] through a view of a buffer laid out differently.
enum class Layout { Contiguous, Transposed, Broadcast, Strided, Reversed, Scalar, Empty };
inline constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Broadcast, Layout::Strided,
                                      Layout::Reversed,   Layout::Scalar,     Layout::Empty};
inline constexpr const char* kLayoutNames[] = {"contiguous", "transposed", "broadcast", "strided",
                                               "reversed",   "scalar",     "empty"};

inline Tensor in_layout(Layout l, DType t, uint32_t seed) {
  const int64_t rows = 70, cols = 19;  // past a tile group of 64 rows, and a tail on both ISAs
  const Slice all{};
  switch (l) {
    case Layout::Contiguous: return values_of(t, {rows, cols}, seed);
    case Layout::Transposed: return transpose(values_of(t, {cols, rows}, seed));
    case Layout::Broadcast: return broadcast_to(values_of(t, {cols}, seed), {rows, cols});
    case Layout::Strided: {
      std::vector<Index> step2{all, Slice{std::nullopt, std::nullopt, 2}};
      return index(values_of(t, {rows, 2 * cols}, seed), step2);
    }
    case Layout::Reversed: {
      std::vector<Index> reversed{Slice{std::nullopt, std::nullopt, -1}, Slice{std::nullopt, std::nullopt, -1}};
      return index(values_of(t, {rows, cols}, seed), reversed);
    }
    case Layout::Scalar: return values_of(t, {}, seed);
    case Layout::Empty: return values_of(t, {rows, 0}, seed);
  }
  return {};
}

}  // namespace braze::testing
