#include "graph/infer.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "graph/check.h"

namespace braze {

namespace {

std::string describe(std::span<const TypeShape> in) {
  std::string s;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i) s += " and ";
    s += std::string(name(in[i].dtype)) + to_string(in[i].shape);
  }
  return s;
}

DType promote_all(std::span<const TypeShape> in) {
  DType t = in[0].dtype;
  for (const TypeShape& x : in.subspan(1)) t = promote(t, x.dtype);
  return t;
}

DType to_float(DType t) { return is_float(t) ? t : kDefaultFloat; }

DType result_dtype(Op op, std::span<const TypeShape> in, const Attr& attr) {
  const std::string_view api = info(op).api;
  auto reject_bool = [&](DType t) {
    BRAZE_CHECK(t != DType::Bool, api, ": not supported for bool inputs (", describe(in), ")");
    return t;
  };
  switch (info(op).dtype_rule) {
    case DTypeRule::Given: break;
    case DTypeRule::Same:
    case DTypeRule::SameNonEmpty: return in[0].dtype;
    case DTypeRule::SameNumeric: return reject_bool(in[0].dtype);
    case DTypeRule::ToFloat: return to_float(in[0].dtype);
    case DTypeRule::ToBool:
    case DTypeRule::Compare:
    case DTypeRule::Logical: return DType::Bool;
    case DTypeRule::Cast:
      BRAZE_CHECK(attr.ints.size() == 1 && attr.ints[0] >= 0 &&
                      attr.ints[0] < static_cast<int64_t>(std::size(kAllDTypes)),
                  api, ": attr must name the target dtype");
      return static_cast<DType>(attr.ints[0]);
    case DTypeRule::Promote: return promote_all(in);
    case DTypeRule::PromoteNumeric: return reject_bool(promote_all(in));
    case DTypeRule::MatMul:
    case DTypeRule::Conv: {
      // Note [Integer matmul] (fusion/passes.h): int8/uint8 accumulated into
      // int32, named by one attr int past the op's own (none for a matmul,
      // stride, padding, dilation and groups for a convolution).
      const size_t own = info(op).dtype_rule == DTypeRule::Conv ? kConv2dAttrs : 0;
      if (attr.ints.size() > own) {
        auto narrow = [](DType t) { return t == DType::Int8 || t == DType::UInt8; };
        BRAZE_CHECK(attr.ints.size() == own + 1 && attr.ints[own] == static_cast<int64_t>(DType::Int32) &&
                        std::all_of(in.begin(), in.end(), [&](const TypeShape& x) { return narrow(x.dtype); }),
                    own ? "conv2d" : "matmul", ": an accumulating product takes int8 or uint8 operands into int32 (",
                    describe(in), ")");
        return DType::Int32;
      }
      return reject_bool(promote_all(in));
    }
    case DTypeRule::PromoteFloat: return to_float(promote_all(in));
    case DTypeRule::Bitwise:
    case DTypeRule::Shift: {
      DType t = promote_all(in);
      BRAZE_CHECK(!is_float(t), api, ": not supported for float inputs, only integers and bool (", describe(in), ")");
      // NumPy has no shift of bools: they promote to int8 (True << True is 2).
      return info(op).dtype_rule == DTypeRule::Shift && t == DType::Bool ? DType::Int8 : t;
    }
    case DTypeRule::Select:
      BRAZE_CHECK(in[0].dtype == DType::Bool, api, ": the condition must be bool, got ",
                  name(in[0].dtype));
      return promote_all(in.subspan(1));
    case DTypeRule::Accumulate: return is_float(in[0].dtype) ? in[0].dtype : kDefaultInt;
    case DTypeRule::Index: return kDefaultInt;
  }
  BRAZE_ASSERT(false, "no dtype rule for ", info(op).name);
  return DType::Float32;
}

Shape reduce_shape(Op op, const Shape& in, const std::vector<int64_t>& axes) {
  const std::string_view api = info(op).api;
  Shape out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    BRAZE_CHECK_AXIS(axes[i] >= 0 && axes[i] < static_cast<int64_t>(in.size()), api, ": axis ",
                     axes[i], " is out of range for shape ", to_string(in));
    BRAZE_CHECK(i == 0 || axes[i - 1] < axes[i], api, ": axes must be sorted and distinct");
    bool needs_identity = info(op).dtype_rule == DTypeRule::SameNonEmpty ||
                          info(op).dtype_rule == DTypeRule::Index;
    BRAZE_CHECK(!needs_identity || in[axes[i]] > 0, api, ": cannot reduce over axis ", axes[i],
                " of size 0 in shape ", to_string(in), " (", api, " has no identity)");
    out[axes[i]] = 1;
  }
  return out;
}

Shape matmul_shape(const Shape& a, const Shape& b) {
  BRAZE_CHECK(a.size() >= 2 && b.size() >= 2, "matmul: operands need at least 2 dims, got ",
              to_string(a), " and ", to_string(b));
  int64_t k1 = a[a.size() - 1], k2 = b[b.size() - 2];
  BRAZE_CHECK(k1 == k2, "matmul: shapes ", to_string(a), " and ", to_string(b),
              " are not aligned: ", k1, " (axis ", a.size() - 1, " of the first) != ", k2,
              " (axis ", b.size() - 2, " of the second)");
  Shape batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                                 "matmul (batch dims)");
  batch.push_back(a[a.size() - 2]);
  batch.push_back(b.back());
  return batch;
}

Shape conv2d_shape(const Shape& x, const Shape& w, const std::vector<int64_t>& p) {
  BRAZE_CHECK(x.size() == 4 && w.size() == 4, "conv2d: input must be NCHW and weight OIHW (4-d), got ",
              to_string(x), " and ", to_string(w));
  BRAZE_CHECK(p.size() == kConv2dAttrs || p.size() == kConv2dAttrs + 1,
              "conv2d: attr needs stride, padding, dilation (2 each) and groups");
  int64_t groups = p[6];
  for (int i = 0; i < 2; ++i) {
    BRAZE_CHECK(p[i] > 0 && p[4 + i] > 0 && p[2 + i] >= 0,
                "conv2d: stride and dilation must be positive and padding non-negative");
  }
  BRAZE_CHECK(groups > 0 && x[1] % groups == 0 && w[0] % groups == 0, "conv2d: groups=", groups,
              " must divide the input channels (", x[1], ") and output channels (", w[0], ")");
  std::optional<int64_t> expects = checked_mul(w[1], groups);
  BRAZE_CHECK(expects == x[1], "conv2d: weight ", to_string(w), " expects ",
              expects ? std::to_string(*expects) : "over 2^63",
              " input channels (", w[1], " per group x ", groups, " groups) but input ", to_string(x),
              " has ", x[1]);
  Shape out{x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    // In 128 bits: a padding or dilation near 2^63 would wrap in int64.
    __int128 extent = __int128{x[2 + i]} + 2 * __int128{p[2 + i]} - __int128{p[4 + i]} * (w[2 + i] - 1) - 1;
    BRAZE_CHECK(extent >= 0, "conv2d: kernel ", to_string(w), " with dilation ", p[4 + i],
                " does not fit input ", to_string(x), " with padding ", p[2 + i]);
    __int128 length = extent / p[i] + 1;
    BRAZE_CHECK(length <= std::numeric_limits<int64_t>::max(), "conv2d: padding ", p[2 + i], " of input ",
                to_string(x), " makes an output too big");
    out[2 + i] = static_cast<int64_t>(length);
  }
  return out;
}

Shape movement_shape(Op op, const Shape& in, const std::vector<int64_t>& a, int64_t item) {
  const std::string_view api = info(op).api;
  const auto rank = static_cast<int64_t>(in.size());
  switch (op) {
    case Op::Reshape: {
      check_shape(a, item, "reshape");  // before numel(a): Note [Sizes fit int64]
      BRAZE_CHECK(numel(a) == numel(in), "reshape: cannot reshape ", to_string(in), " (", numel(in),
                  " elements) into ", to_string(a), " (", numel(a), " elements)");
      return a;
    }
    case Op::Expand: {
      check_shape(a, item, "broadcast_to");
      bool ok = a.size() >= in.size();
      for (size_t i = 0; ok && i < in.size(); ++i) {
        int64_t d = in[i], t = a[a.size() - in.size() + i];
        ok = d == t || d == 1;
      }
      BRAZE_CHECK(ok, "broadcast_to: cannot broadcast ", to_string(in), " to ", to_string(a));
      return a;
    }
    case Op::Permute: {
      std::vector<int64_t> sorted = a;
      std::sort(sorted.begin(), sorted.end());
      bool ok = static_cast<int64_t>(a.size()) == rank;
      for (int64_t i = 0; ok && i < rank; ++i) ok = sorted[i] == i;
      BRAZE_CHECK(ok, "permute: ", to_string(a), " is not a permutation of the axes of ",
                  to_string(in));
      Shape out;
      for (int64_t p : a) out.push_back(in[p]);
      return out;
    }
    case Op::Slice: {
      BRAZE_CHECK(static_cast<int64_t>(a.size()) == 3 * rank, "slice: attr needs a start, step and "
                  "length per axis");
      Shape out(in.size());
      for (int64_t i = 0; i < rank; ++i) {
        int64_t start = a[i], step = a[rank + i], len = a[2 * rank + i];
        // Checked arithmetic: a graph file can carry any attr, and a step
        // near 2^63 times a length would wrap into range.
        std::optional<int64_t> span = len > 0 ? checked_mul(len - 1, step) : std::optional<int64_t>(0);
        int64_t last = 0;
        bool in_range = len == 0 || (span && !__builtin_add_overflow(start, *span, &last) && start >= 0 &&
                                     start < in[i] && last >= 0 && last < in[i]);
        BRAZE_CHECK_INDEX(len >= 0 && step != 0 && in_range,
                          "slice: start ", start, ", step ", step, ", length ", len,
                          " is out of bounds for axis ", i, " of ", to_string(in));
        out[i] = len;
      }
      return out;
    }
    case Op::Pad: {
      BRAZE_CHECK(static_cast<int64_t>(a.size()) == 2 * rank, "pad: attr needs the zeros before and after each "
                  "axis, got ", a.size(), " values for ", to_string(in));
      Shape out(in.size());
      for (int64_t i = 0; i < rank; ++i) {
        BRAZE_CHECK(a[i] >= 0 && a[rank + i] >= 0, "pad: negative padding (", a[i], ", ", a[rank + i],
                    ") for axis ", i, " of ", to_string(in));
        BRAZE_CHECK(!__builtin_add_overflow(in[i], a[i], &out[i]) && !__builtin_add_overflow(out[i], a[rank + i], &out[i]),
                    "pad: axis ", i, " of ", to_string(in), " padded by (", a[i], ", ", a[rank + i], ") is too big");
      }
      check_shape(out, item, "pad");
      return out;
    }
    default: break;
  }
  BRAZE_ASSERT(false, api, " is not a movement op");
  return {};
}

}  // namespace

TypeShape infer(Op op, std::span<const TypeShape> in, const Attr& attr) {
  const OpInfo& oi = info(op);
  BRAZE_CHECK(static_cast<int>(in.size()) == oi.arity, oi.api, ": takes ", oi.arity,
              " inputs, got ", in.size());
  DType dtype = result_dtype(op, in, attr);
  const auto item = static_cast<int64_t>(itemsize(dtype));
  Shape shape;
  switch (oi.kind) {
    case FusionKind::Leaf: BRAZE_CHECK(false, oi.api, ": leaves have no inputs to infer from"); break;
    case FusionKind::ElemWise:
      shape = in[0].shape;
      for (const TypeShape& x : in.subspan(1)) shape = broadcast_shapes(shape, x.shape, oi.api);
      break;
    case FusionKind::Broadcast:
    case FusionKind::View: shape = movement_shape(op, in[0].shape, attr.ints, item); break;
    case FusionKind::Reduce: shape = reduce_shape(op, in[0].shape, attr.ints); break;
    case FusionKind::Opaque:
      shape = op == Op::MatMul ? matmul_shape(in[0].shape, in[1].shape) : conv2d_shape(in[0].shape, in[1].shape, attr.ints);
      break;
  }
  // Broadcasting two shapes, a matmul's batch and a wider result dtype can
  // each make a result too big for int64 sizes: Note [Sizes fit int64].
  check_shape(shape, item, oi.api);
  return {dtype, std::move(shape)};
}

DType compute_dtype(Op op, std::span<const DType> in, DType result) {
  switch (info(op).dtype_rule) {
    case DTypeRule::Compare:
    case DTypeRule::Logical:
    case DTypeRule::ToBool:
    case DTypeRule::Cast: {
      DType t = in[0];
      for (DType x : in.subspan(1)) t = promote(t, x);
      return t;
    }
    default: return result;
  }
}

}  // namespace braze
