// Dtype inference (graph/infer.cpp) for every row of graph/ops.def: each op
// is tried with every dtype (every pair, every triple for where) and must
// accept or reject it, and give the result dtype, as its rule column says.
#include <gtest/gtest.h>

#include <optional>

#include "graph/infer.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::contains;
using testing::error_of;

constexpr DType kBool = DType::Bool, kF32 = DType::Float32, kI64 = DType::Int64;

DType promote_all(std::span<const DType> in) {
  DType t = in[0];
  for (DType x : in.subspan(1)) t = promote(t, x);
  return t;
}

// What each rule means, written from the comments in graph/op.h and
// docs/semantics.md; nullopt means the inputs are rejected. No default: a
// new rule fails to compile here (-Wswitch) until it has a meaning.
std::optional<DType> expected_dtype(DTypeRule rule, std::span<const DType> in, const Attr& attr) {
  auto no_bool = [](DType t) { return t == kBool ? std::nullopt : std::optional<DType>(t); };
  auto floated = [](DType t) { return is_float(t) ? t : kF32; };
  switch (rule) {
    case DTypeRule::Given: return std::nullopt;  // leaves are not inferred
    case DTypeRule::Same:
    case DTypeRule::SameNonEmpty: return in[0];
    case DTypeRule::SameNumeric: return no_bool(in[0]);
    case DTypeRule::ToFloat: return floated(in[0]);
    case DTypeRule::ToBool:
    case DTypeRule::Compare:
    case DTypeRule::Logical: return kBool;
    case DTypeRule::Cast: return static_cast<DType>(attr.ints.at(0));
    case DTypeRule::Promote: return promote_all(in);
    case DTypeRule::PromoteNumeric:
    case DTypeRule::MatMul:
    case DTypeRule::Conv: return no_bool(promote_all(in));  // integers too (Note [Integer matmul])
    case DTypeRule::PromoteFloat: return floated(promote_all(in));
    case DTypeRule::Bitwise:
    case DTypeRule::Shift: {
      DType t = promote_all(in);
      if (is_float(t)) return std::nullopt;
      return rule == DTypeRule::Shift && t == kBool ? DType::Int8 : t;  // NumPy shifts bools as int8
    }
    case DTypeRule::Select:
      if (in[0] != kBool) return std::nullopt;
      return promote_all(in.subspan(1));
    case DTypeRule::Accumulate: return is_float(in[0]) ? in[0] : kI64;
    case DTypeRule::Index: return kI64;
  }
  return std::nullopt;
}

// Shapes and attributes under which `op` is valid, so that only the dtypes
// decide acceptance. Fails loudly for an op it does not know how to call.
struct Call {
  std::vector<Shape> shapes;
  Attr attr;
};

std::optional<Call> valid_call(Op op) {
  const OpInfo& oi = info(op);
  switch (oi.kind) {
    case FusionKind::Leaf: return std::nullopt;
    case FusionKind::ElemWise: return Call{std::vector<Shape>(oi.arity, Shape{2, 3}), {}};
    case FusionKind::Reduce: return Call{{{2, 3}}, Attr{{1}, {}}};
    case FusionKind::Broadcast:
    case FusionKind::View:
      switch (op) {
        case Op::Expand: return Call{{{2, 3}}, Attr{{4, 2, 3}, {}}};
        case Op::Reshape: return Call{{{2, 3}}, Attr{{3, 2}, {}}};
        case Op::Permute: return Call{{{2, 3}}, Attr{{1, 0}, {}}};
        case Op::Slice: return Call{{{2, 3}}, Attr{{1, 2, 1, -1, 1, 3}, {}}};
        case Op::Pad: return Call{{{2, 3}}, Attr{{1, 0, 2, 3}, {}}};
        default: break;
      }
      break;
    case FusionKind::Opaque:
      if (op == Op::MatMul) return Call{{{2, 3}, {3, 4}}, {}};
      if (op == Op::Conv2d) return Call{{{1, 2, 5, 5}, {3, 2, 3, 3}}, Attr{{1, 1, 0, 0, 1, 1, 1}, {}}};
      break;
  }
  ADD_FAILURE() << oi.name << ": infer_test.cpp does not know valid shapes and attrs for this op; add them";
  return std::nullopt;
}

// Every dtype combination of `arity` inputs.
std::vector<std::vector<DType>> combinations(int arity) {
  std::vector<std::vector<DType>> out{{}};
  for (int k = 0; k < arity; ++k) {
    std::vector<std::vector<DType>> next;
    for (const auto& prefix : out)
      for (DType t : kAllDTypes) {
        next.push_back(prefix);
        next.back().push_back(t);
      }
    out = std::move(next);
  }
  return out;
}

std::string describe(Op op, std::span<const DType> in, const Attr& attr) {
  std::string s = std::string(info(op).api) + "(";
  for (size_t i = 0; i < in.size(); ++i) s += (i ? ", " : "") + std::string(name(in[i]));
  if (op == Op::Cast) s += " -> " + std::string(name(static_cast<DType>(attr.ints[0])));
  return s + ")";
}

TEST(Infer, EveryOpEveryDTypeFollowsItsRule) {
  int checked = 0;
  for (size_t i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<Op>(i);
    const OpInfo& oi = info(op);
    std::optional<Call> call = valid_call(op);
    if (!call) continue;
    std::vector<Attr> attrs{call->attr};
    if (oi.dtype_rule == DTypeRule::Cast) {  // every target dtype too
      attrs.clear();
      for (DType t : kAllDTypes) attrs.push_back(Attr{{static_cast<int64_t>(t)}, {}});
    }
    for (const Attr& attr : attrs)
      for (const std::vector<DType>& dts : combinations(oi.arity)) {
        std::vector<TypeShape> in;
        for (size_t k = 0; k < dts.size(); ++k) in.push_back({dts[k], call->shapes[k]});
        std::optional<DType> want = expected_dtype(oi.dtype_rule, dts, attr);
        SCOPED_TRACE(describe(op, dts, attr));
        if (want) {
          TypeShape got{};
          ASSERT_NO_THROW(got = infer(op, in, attr));
          EXPECT_EQ(got.dtype, *want) << "got " << name(got.dtype) << ", want " << name(*want);
        } else {
          // A dtype error is a user error naming the op.
          std::string msg = error_of<std::invalid_argument>([&] { infer(op, in, attr); });
          EXPECT_TRUE(contains(msg, std::string(oi.api)));
        }
        ++checked;
      }
  }
  EXPECT_GT(checked, 2000);
}

TEST(Infer, LeavesAreNotInferred) {
  for (size_t i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<Op>(i);
    if (info(op).kind == FusionKind::Leaf) {
      EXPECT_ANY_THROW(infer(op, {}, {})) << info(op).name;
    }
  }
}

TypeShape infer1(std::string_view api, std::vector<DType> dts, Attr attr = {}) {
  std::optional<Op> op = op_from_name(api);
  EXPECT_TRUE(op) << api;
  std::optional<Call> call = valid_call(*op);
  std::vector<TypeShape> in;
  for (size_t k = 0; k < dts.size(); ++k) in.push_back({dts[k], call->shapes[k]});
  return infer(*op, in, attr.ints.empty() ? call->attr : attr);
}

// The examples docs/semantics.md gives, by API name, so that a wrong rule in
// the table (not only a wrong rule implementation) is caught.
TEST(Infer, DocumentedResultTypes) {
  for (const char* api : {"exp", "log", "sqrt", "sin", "tanh", "sigmoid", "erf"}) {
    SCOPED_TRACE(api);
    EXPECT_EQ(infer1(api, {DType::Int32}).dtype, kF32);
    EXPECT_EQ(infer1(api, {kBool}).dtype, kF32);
    EXPECT_EQ(infer1(api, {DType::Float16}).dtype, DType::Float16);
    EXPECT_EQ(infer1(api, {DType::Float64}).dtype, DType::Float64);
  }
  EXPECT_EQ(infer1("divide", {DType::Int32, DType::Int32}).dtype, kF32);
  EXPECT_EQ(infer1("divide", {DType::Int8, DType::UInt8}).dtype, kF32);
  EXPECT_EQ(infer1("divide", {DType::BFloat16, DType::Int64}).dtype, DType::BFloat16);
  for (const char* api : {"negative", "sign", "subtract", "power", "remainder", "matmul"}) {
    SCOPED_TRACE(api);
    std::vector<DType> bools(info(*op_from_name(api)).arity, kBool);
    std::string msg = error_of<std::invalid_argument>([&] { infer1(api, bools); });
    EXPECT_TRUE(contains(msg, api));
    EXPECT_TRUE(contains(msg, "bool"));
  }
  for (const char* api : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
                          "logical_or"})
    EXPECT_EQ(infer1(api, {DType::Float32, DType::Int8}).dtype, kBool) << api;
  for (const char* api : {"isnan", "isinf", "logical_not"}) EXPECT_EQ(infer1(api, {kF32}).dtype, kBool) << api;
  for (const char* api : {"sum", "prod"}) {
    EXPECT_EQ(infer1(api, {kBool}).dtype, kI64) << api;
    EXPECT_EQ(infer1(api, {DType::Int8}).dtype, kI64) << api;
    EXPECT_EQ(infer1(api, {DType::UInt8}).dtype, kI64) << api;
    EXPECT_EQ(infer1(api, {DType::Float16}).dtype, DType::Float16) << api;
  }
  for (const char* api : {"max", "min"}) EXPECT_EQ(infer1(api, {DType::Int8}).dtype, DType::Int8) << api;
  for (const char* api : {"argmax", "argmin"}) EXPECT_EQ(infer1(api, {DType::Float16}).dtype, kI64) << api;
  EXPECT_EQ(infer1("where", {kBool, DType::Int8, DType::UInt8}).dtype, DType::Int16);
}

TEST(Infer, ElementwiseShapesBroadcast) {
  std::vector<TypeShape> in{{kF32, {2, 1, 3}}, {kF32, {4, 1}}};
  EXPECT_EQ(infer(Op::Add, in, {}).shape, (Shape{2, 4, 3}));
  std::vector<TypeShape> w{{kBool, {3}}, {kF32, {2, 1}}, {kF32, {}}};
  EXPECT_EQ(infer(Op::Where, w, {}).shape, (Shape{2, 3}));
}

TEST(Infer, ReductionsKeepReducedAxesAsOne) {
  std::vector<TypeShape> in{{kF32, {2, 3, 4}}};
  EXPECT_EQ(infer(Op::Sum, in, Attr{{0, 2}, {}}).shape, (Shape{1, 3, 1}));
  EXPECT_EQ(infer(Op::ArgMax, in, Attr{{1}, {}}).shape, (Shape{2, 1, 4}));
  EXPECT_EQ(infer(Op::Sum, in, Attr{}).shape, (Shape{2, 3, 4}));  // no axes: nothing reduced
  // sum and prod have an identity, so an empty axis is fine.
  std::vector<TypeShape> empty{{kF32, {2, 0}}};
  EXPECT_EQ(infer(Op::Sum, empty, Attr{{1}, {}}).shape, (Shape{2, 1}));
  EXPECT_EQ(infer(Op::Prod, empty, Attr{{1}, {}}).shape, (Shape{2, 1}));
}

TEST(Infer, LibraryOpShapes) {
  std::vector<TypeShape> mm{{kF32, {5, 1, 2, 3}}, {kF32, {4, 3, 7}}};
  EXPECT_EQ(infer(Op::MatMul, mm, {}).shape, (Shape{5, 4, 2, 7}));
  // stride 2, padding 1, dilation 1, groups 2: (9 + 2 - 3) / 2 + 1 = 5.
  std::vector<TypeShape> conv{{kF32, {2, 4, 9, 9}}, {kF32, {6, 2, 3, 3}}};
  EXPECT_EQ(infer(Op::Conv2d, conv, Attr{{2, 2, 1, 1, 1, 1, 2}, {}}).shape, (Shape{2, 6, 5, 5}));
}

// Note [Sizes fit int64]: results whose sizes would wrap, negative sizes
// and slice attrs that wrap into range are user errors naming the op.
TEST(Infer, SizesPastInt64AndNegativeSizesAreRefused) {
  std::vector<TypeShape> tall{{kF32, {int64_t{1} << 40, 1}}}, wide{{kF32, {1, int64_t{1} << 40}}};
  std::vector<TypeShape> both{tall[0], wide[0]};
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { infer(Op::Add, both, {}); }), "add: shape"));
  std::vector<TypeShape> scalar{{kF32, {}}};
  EXPECT_EQ(error_of<std::invalid_argument>([&] { infer(Op::Expand, scalar, Attr{{1, -1}, {}}); }),
            "broadcast_to: negative dimension -1 in shape [1, -1]");
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { infer(Op::Reshape, scalar, Attr{{-1}, {}}); }),
                       "reshape: negative dimension -1"));
  std::vector<TypeShape> mm{{kF32, {int64_t{1} << 31, 1}}, {kF32, {1, int64_t{1} << 31}}};
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { infer(Op::MatMul, mm, {}); }), "matmul: shape"));
  // start 1, step 2^62, length 3 wraps last = 1 + 2 * 2^62 to a negative number.
  std::vector<TypeShape> row{{kF32, {5}}};
  EXPECT_TRUE(contains(error_of<std::out_of_range>([&] {
    infer(Op::Slice, row, Attr{{1, int64_t{1} << 62, 3}, {}});
  }), "out of bounds"));
  std::vector<TypeShape> conv{{kF32, {1, 1, 3, 3}}, {kF32, {1, 1, 1, 1}}};
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] {
    infer(Op::Conv2d, conv, Attr{{1, 1, int64_t{1} << 62, 0, 1, 1, 1}, {}});
  }), "too big"));
}

TEST(Infer, ComputeDType) {
  // Comparisons and predicates compute in the promoted input type, not bool.
  std::vector<DType> mixed{DType::Int32, DType::Float16};
  EXPECT_EQ(compute_dtype(Op::Lt, mixed, kBool), DType::Float16);
  EXPECT_EQ(compute_dtype(Op::LogicalAnd, mixed, kBool), DType::Float16);
  std::vector<DType> one{DType::Float64};
  EXPECT_EQ(compute_dtype(Op::IsNan, one, kBool), DType::Float64);
  // A cast computes in its input type; the conversion happens on store.
  EXPECT_EQ(compute_dtype(Op::Cast, one, DType::Int8), DType::Float64);
  // Everything else computes in its result type.
  std::vector<DType> ints{DType::Int32};
  EXPECT_EQ(compute_dtype(Op::Exp, ints, kF32), kF32);
  EXPECT_EQ(compute_dtype(Op::Add, mixed, DType::Float16), DType::Float16);
}

TEST(OpTable, NamesAndLookup) {
  for (size_t i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<Op>(i);
    EXPECT_EQ(op_from_name(info(op).name), op);
    EXPECT_EQ(op_from_name(info(op).api), op);
    EXPECT_NE(name(info(op).dtype_rule), "?") << info(op).name;
    EXPECT_NE(name(info(op).kind), "?") << info(op).name;
    // Element-wise ops are generated from the row unless they need an attr.
    if (info(op).kind == FusionKind::ElemWise && op != Op::Cast) {
      EXPECT_EQ(info(op).builder, Builder::Auto) << info(op).name;
    }
  }
  EXPECT_FALSE(op_from_name("frobnicate"));
  EXPECT_EQ(name(DTypeRule::PromoteFloat), "PromoteFloat");
}

}  // namespace
}  // namespace braze
