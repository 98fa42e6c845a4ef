// A node of the graph: plain data, inputs by id.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "graph/dtype.h"
#include "graph/op.h"
#include "graph/shape.h"

namespace braze {

using NodeId = uint32_t;

// Note [Attributes]
// What an op needs beyond its inputs, as plain integers and reals so that a
// node hashes, compares and serialises without per-op code:
//   Input      ints  = {input number}
//   Const      ints  = {value} for bool/int dtypes, reals = {value} for floats
//   Arange     ints or reals = {start, step}; the shape gives the length
//   Cast       ints  = {target dtype}
//   Reshape    ints  = new shape          Expand  ints = new shape
//   Permute    ints  = permutation        Slice   ints = starts, steps, lengths
//   Pad        ints  = zeros before each axis, then zeros after each (Note [Windows])
//   reductions ints  = sorted axes (the result keeps them as size 1)
//   Conv2d     ints  = {stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups}
//   MatMul, Conv2d: one int more, int32, where 8-bit operands accumulate
//              into int32 (Note [Integer matmul] in fusion/passes.h)
inline constexpr size_t kConv2dAttrs = 7;

struct Attr {
  std::vector<int64_t> ints;
  std::vector<double> reals;
  // Reals compare by bit pattern, not as doubles: -0.0 and 0.0 are
  // different constants (1 / -0.0 is -inf) and must not intern to one node,
  // while a NaN constant must equal itself.
  friend bool operator==(const Attr& a, const Attr& b) {
    return a.ints == b.ints &&
           std::equal(a.reals.begin(), a.reals.end(), b.reals.begin(), b.reals.end(), [](double x, double y) {
             return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
           });
  }
};

struct Node {
  Op op;
  DType dtype;
  View view;  // shape, and how this node reads its base (Note [Views])
  std::vector<NodeId> inputs;
  Attr attr;

  const Shape& shape() const { return view.shape; }
  int64_t rank() const { return view.rank(); }
  friend bool operator==(const Node&, const Node&) = default;
};

struct NodeHash {
  size_t operator()(const Node& n) const;
};

}  // namespace braze
