// The Op enum and the per-op metadata, both derived from graph/ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace braze {

enum class Op : uint8_t {
#define BRAZE_OP(name, ...) name,
#include "graph/ops.def"
};

// Note [Fusion lattice]
// Ops are ordered by how freely they fuse: element-wise ops fuse with
// anything; a broadcast reads one value many times; a view reads through
// different strides; a reduction ends an index space; an opaque op is a
// library call. Passes test the kind, never a list of op names.
enum class FusionKind : uint8_t { Leaf, ElemWise, Broadcast, View, Reduce, Opaque };

enum class DTypeRule : uint8_t {
  Given,           // leaves: the dtype is chosen by whoever makes the node
  Same,            // result = the (first) input's dtype; any dtype
  SameNumeric,     // result = input; bool is rejected
  SameNonEmpty,    // result = input; the reduced axes must not be empty
  ToFloat,         // ints and bool become float32; floats are kept
  ToBool,          // result bool
  Cast,            // result = attr dtype
  Promote,         // result = promote(inputs)
  PromoteNumeric,  // promote; bool is rejected
  PromoteFloat,    // promote, then as ToFloat
  Compare,         // inputs promoted, result bool
  Logical,         // inputs read as truth values, result bool
  Bitwise,         // promote; integers and bool only (bool & bool is bool)
  Shift,           // promote; integers and bool only; bool becomes int8, as NumPy's shifts
  Select,          // where(bool cond, a, b): promote(a, b)
  Accumulate,      // ints and bool sum into int64; floats keep their type
  Index,           // int64 position; reduced axes must not be empty
  MatMul,          // promote; bool rejected; matrix shapes; int8/uint8 into int32 (Note [Integer matmul])
  Conv,            // as MatMul; NCHW shapes
};

enum OpFlag : uint32_t {
  kCommutative = 1u << 0,
};

enum class Builder : uint8_t { Auto, Hand };

struct OpInfo {
  std::string_view name;   // "Add"
  std::string_view api;    // "add": the C++ and Python function name
  int arity;
  FusionKind kind;
  DTypeRule dtype_rule;
  std::string_view numpy;  // reference function in tests, "" if none
  uint32_t flags;
  Builder builder;
};

inline constexpr OpInfo kOpInfo[] = {
#define BRAZE_OP(name, api, arity, kind, rule, numpy, flags, builder) \
  {#name, #api, arity, FusionKind::kind, DTypeRule::rule, numpy, flags, Builder::builder},
#include "graph/ops.def"
};

inline constexpr size_t kNumOps = sizeof(kOpInfo) / sizeof(kOpInfo[0]);

constexpr const OpInfo& info(Op op) { return kOpInfo[static_cast<size_t>(op)]; }
inline bool is_elementwise(Op op) { return info(op).kind == FusionKind::ElemWise; }
inline bool is_movement(Op op) {
  return info(op).kind == FusionKind::View || info(op).kind == FusionKind::Broadcast;
}
inline bool is_reduce(Op op) { return info(op).kind == FusionKind::Reduce; }

std::optional<Op> op_from_name(std::string_view name);  // by Name or api
std::string_view name(FusionKind k);
std::string_view name(DTypeRule r);  // "Promote": the rule column of graph/ops.def

}  // namespace braze
