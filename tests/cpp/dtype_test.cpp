// dtypes: names, sizes, kinds, and the promotion rules of docs/semantics.md.
#include <gtest/gtest.h>

#include <map>

#include "graph/dtype.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::contains;
using testing::error_of;

constexpr DType b = DType::Bool, u8 = DType::UInt8, i8 = DType::Int8, u16 = DType::UInt16, i16 = DType::Int16,
                u32 = DType::UInt32, i32 = DType::Int32, i64 = DType::Int64, f16 = DType::Float16,
                bf16 = DType::BFloat16, f32 = DType::Float32, f64 = DType::Float64;

TEST(DType, NamesSizesAndKinds) {
  struct Row {
    DType t;
    const char* name;
    const char* short_name;
    size_t size;
    DTypeKind kind;
    bool is_signed;
  };
  const Row rows[] = {
      {b, "bool", "b1", 1, DTypeKind::Bool, false},          {u8, "uint8", "u8", 1, DTypeKind::Int, false},
      {i8, "int8", "i8", 1, DTypeKind::Int, true},           {u16, "uint16", "u16", 2, DTypeKind::Int, false},
      {i16, "int16", "i16", 2, DTypeKind::Int, true},        {u32, "uint32", "u32", 4, DTypeKind::Int, false},
      {i32, "int32", "i32", 4, DTypeKind::Int, true},
      {i64, "int64", "i64", 8, DTypeKind::Int, true},        {f16, "float16", "f16", 2, DTypeKind::Float, true},
      {bf16, "bfloat16", "bf16", 2, DTypeKind::Float, true}, {f32, "float32", "f32", 4, DTypeKind::Float, true},
      {f64, "float64", "f64", 8, DTypeKind::Float, true},
  };
  ASSERT_EQ(std::size(rows), std::size(kAllDTypes)) << "a dtype was added: add its row here";
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(name(r.t), r.name);
    EXPECT_EQ(parse_dtype(r.name), r.t);
    EXPECT_EQ(parse_dtype(r.short_name), r.t);
    EXPECT_EQ(itemsize(r.t), r.size);
    EXPECT_EQ(kind(r.t), r.kind);
    EXPECT_EQ(is_signed(r.t), r.is_signed);
    EXPECT_EQ(is_float(r.t), r.kind == DTypeKind::Float);
    EXPECT_EQ(is_integral(r.t), r.kind != DTypeKind::Float);  // bool counts as integral
  }
}

TEST(DType, ParseAcceptsCAndTorchSpellings) {
  EXPECT_EQ(parse_dtype("float"), f32);
  EXPECT_EQ(parse_dtype("double"), f64);
  EXPECT_EQ(parse_dtype("half"), f16);
  EXPECT_EQ(parse_dtype("int"), i64);
}

TEST(DType, ParseRejectsUnknownNamesListingTheValidOnes) {
  std::string msg = error_of<std::invalid_argument>([] { parse_dtype("float128"); });
  EXPECT_TRUE(contains(msg, "'float128'"));
  EXPECT_TRUE(contains(msg, "bfloat16"));
  EXPECT_THROW(parse_dtype(""), std::invalid_argument);
  EXPECT_THROW(parse_dtype("Float32"), std::invalid_argument);  // names are case-sensitive, as NumPy's
}

TEST(DType, Defaults) {
  EXPECT_EQ(kDefaultFloat, f32);
  EXPECT_EQ(kDefaultInt, i64);
}

// The whole table, written out from docs/semantics.md rather than derived,
// so that a change to promote() has to change this table too.
TEST(DTypePromotion, TableOfAllPairs) {
  constexpr size_t n = 12;
  const DType order[n] = {b, u8, i8, u16, i16, u32, i32, i64, f16, bf16, f32, f64};
  const DType want[n][n] = {
      //         b     u8    i8    u16   i16   u32   i32   i64   f16   bf16  f32   f64
      /* b    */ {b, u8, i8, u16, i16, u32, i32, i64, f16, bf16, f32, f64},
      /* u8   */ {u8, u8, i16, u16, i16, u32, i32, i64, f16, bf16, f32, f64},
      /* i8   */ {i8, i16, i8, i32, i16, i64, i32, i64, f16, bf16, f32, f64},
      /* u16  */ {u16, u16, i32, u16, i32, u32, i32, i64, f16, bf16, f32, f64},
      /* i16  */ {i16, i16, i16, i32, i16, i64, i32, i64, f16, bf16, f32, f64},
      /* u32  */ {u32, u32, i64, u32, i64, u32, i64, i64, f16, bf16, f32, f64},
      /* i32  */ {i32, i32, i32, i32, i32, i64, i32, i64, f16, bf16, f32, f64},
      /* i64  */ {i64, i64, i64, i64, i64, i64, i64, i64, f16, bf16, f32, f64},
      /* f16  */ {f16, f16, f16, f16, f16, f16, f16, f16, f16, f32, f32, f64},
      /* bf16 */ {bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, f32, bf16, f32, f64},
      /* f32  */ {f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f64},
      /* f64  */ {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64},
  };
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      EXPECT_EQ(promote(order[i], order[j]), want[i][j])
          << name(order[i]) << " + " << name(order[j]) << " gave " << name(promote(order[i], order[j]))
          << ", want " << name(want[i][j]);
}

TEST(DTypePromotion, DocumentedExamples) {
  EXPECT_EQ(promote(i8, i32), i32);
  EXPECT_EQ(promote(f16, f32), f32);
  EXPECT_EQ(promote(u8, i8), i16);     // the smallest signed type holding both, as NumPy
  EXPECT_EQ(promote(u16, i8), i32);
  EXPECT_EQ(promote(u32, i32), i64);
  EXPECT_EQ(promote(f16, bf16), f32);  // neither holds the other
  EXPECT_EQ(promote(i32, f32), f32);   // NumPy: float64; braze follows PyTorch/JAX
  EXPECT_EQ(promote(i64, f16), f16);
  EXPECT_EQ(promote(b, i8), i8);
}

// Properties any promotion lattice has: ops that fold promote over several
// inputs (where, the n-ary rules in infer.cpp) rely on order not mattering.
TEST(DTypePromotion, IsCommutativeAssociativeAndIdempotent) {
  for (DType x : kAllDTypes) {
    EXPECT_EQ(promote(x, x), x);
    for (DType y : kAllDTypes) {
      EXPECT_EQ(promote(x, y), promote(y, x)) << name(x) << ", " << name(y);
      for (DType z : kAllDTypes)
        EXPECT_EQ(promote(promote(x, y), z), promote(x, promote(y, z)))
            << name(x) << ", " << name(y) << ", " << name(z);
    }
  }
}

TEST(DTypePromotion, ResultHoldsEachInputsKind) {
  for (DType x : kAllDTypes)
    for (DType y : kAllDTypes) {
      DType r = promote(x, y);
      EXPECT_GE(static_cast<int>(kind(r)), static_cast<int>(kind(x)));
      EXPECT_GE(static_cast<int>(kind(r)), static_cast<int>(kind(y)));
      // Only mixed signedness makes a new integer type: the next signed one.
      EXPECT_TRUE(r == x || r == y || r == i16 || r == i32 || r == i64 || r == f32) << name(x) << ", " << name(y);
    }
}

// Python scalars are weak: they take the tensor's type at the same or a
// lower kind, and the default of their own kind above it.
TEST(DTypePromotion, WeakScalars) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(name(t));
    EXPECT_EQ(promote_with_scalar(t, DTypeKind::Bool), t);
    EXPECT_EQ(promote_with_scalar(t, DTypeKind::Int), t == b ? i64 : t);
    EXPECT_EQ(promote_with_scalar(t, DTypeKind::Float), is_float(t) ? t : f32);
  }
  // The examples of docs/semantics.md.
  EXPECT_EQ(promote_with_scalar(f16, DTypeKind::Float), f16);  // x_f16 * 2.0
  EXPECT_EQ(promote_with_scalar(i8, DTypeKind::Int), i8);      // x_i8 + 1
  EXPECT_EQ(promote_with_scalar(i32, DTypeKind::Float), f32);  // x_int32 + 0.5
  EXPECT_EQ(promote_with_scalar(b, DTypeKind::Int), i64);      // x_bool + 1
}

}  // namespace
}  // namespace braze
