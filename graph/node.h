// A node of the graph: plain data, inputs by id.
#pragma once

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
//   reductions ints  = sorted axes (the result keeps them as size 1)
//   Conv2d     ints  = {stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups}
struct Attr {
  std::vector<int64_t> ints;
  std::vector<double> reals;
  friend bool operator==(const Attr&, const Attr&) = default;
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
