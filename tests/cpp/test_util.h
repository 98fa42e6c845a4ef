// Helpers shared by the graph-layer and API tests: making arrays, reading
// them back, and comparing values with NaN-aware, dtype-aware tolerances.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graph/array.h"
#include "graph/check.h"
#include "graph/dtype.h"

namespace braze::testing {

// A dense array of `dtype` and `shape` holding `values` (converted on store,
// so float values stored into an int dtype truncate).
inline Array make_array(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Array a = allocate_array(dtype, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), a.numel()) << "make_array: wrong number of values";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < a.numel(); ++i)
    store_double(dtype, a.data.get(), static_cast<int64_t>(i), values[i]);
  return a;
}

inline Array make_int_array(DType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  Array a = allocate_array(dtype, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), a.numel()) << "make_int_array: wrong number of values";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < a.numel(); ++i)
    store_int(dtype, a.data.get(), static_cast<int64_t>(i), values[i]);
  return a;
}

inline std::vector<double> doubles(const Array& a) {
  std::vector<double> out(a.numel());
  for (int64_t i = 0; i < a.numel(); ++i) out[i] = load_double(a.dtype, a.data.get(), i);
  return out;
}

inline std::vector<int64_t> ints(const Array& a) {
  std::vector<int64_t> out(a.numel());
  for (int64_t i = 0; i < a.numel(); ++i) out[i] = load_int(a.dtype, a.data.get(), i);
  return out;
}

// `v` as it reads back after being stored in `dtype`: the rounding (or
// truncation) a result of that dtype undergoes.
inline double round_to(DType dtype, double v) {
  Array a = allocate_array(dtype, {});
  store_double(dtype, a.data.get(), 0, v);
  return load_double(dtype, a.data.get(), 0);
}

// `v` wrapped to the width of an integer `dtype`, written independently of
// array.cpp (two's complement truncation, as NumPy's casts).
inline int64_t wrap_to(DType dtype, int64_t v) {
  switch (dtype) {
    case DType::Bool: return v != 0;
    case DType::UInt8: return static_cast<uint8_t>(v);
    case DType::Int8: return static_cast<int8_t>(v);
    case DType::UInt16: return static_cast<uint16_t>(v);
    case DType::Int16: return static_cast<int16_t>(v);
    case DType::UInt32: return static_cast<uint32_t>(v);
    case DType::Int32: return static_cast<int32_t>(v);
    case DType::Int64: return v;
    default: break;
  }
  ADD_FAILURE() << "wrap_to: " << name(dtype) << " is not an integer dtype";
  return v;
}

// Relative tolerance for a result rounded to `dtype` once, where the
// expected value may differ from the computed one by an ulp of the compute
// type before that rounding: one ulp of the dtype, with some slack.
inline double tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    case DType::Float32: return 3e-7;
    case DType::Float64: return 1e-13;
    default: return 0;
  }
}

// The same dtype, shape and bits, except that any NaN equals any NaN (its
// sign and payload are no value: no op reads them). How results that must
// be exact are compared: the fusion pipeline against the reference, a
// graph before and after a rewrite.
inline bool same_bits(const Array& a, const Array& b) {
  if (a.dtype != b.dtype || a.shape != b.shape) return false;
  const size_t size = itemsize(a.dtype);
  const std::byte* x = a.data.get();
  const std::byte* y = b.data.get();
  for (int64_t i = 0; i < a.numel(); ++i, x += size, y += size) {
    if (std::memcmp(x, y, size) == 0) continue;
    if (!is_float(a.dtype) || !std::isnan(load_double(a.dtype, x, 0)) || !std::isnan(load_double(b.dtype, y, 0)))
      return false;
  }
  return true;
}

// NaN equals NaN, infinities must match exactly, finite values within
// `rtol` relative (and a tiny absolute floor, so 1e-300 vs 0 passes).
inline ::testing::AssertionResult close(double got, double want, double rtol) {
  if (std::isnan(got) || std::isnan(want)) {
    if (std::isnan(got) && std::isnan(want)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << want;
  }
  if (std::isinf(got) || std::isinf(want)) {
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << want;
  }
  double err = std::fabs(got - want);
  if (err <= rtol * std::fabs(want) || err <= 1e-300) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (relative error "
                                       << err / std::fabs(want) << " > " << rtol << ")";
}

inline void expect_all_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                             const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(close(got[i], want[i], rtol)) << what << " at element " << i;
}

// Runs `f`, expects it to throw `E`, and returns the message (empty on failure).
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

// gtest matcher-free substring check with a readable failure.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

}  // namespace braze::testing
