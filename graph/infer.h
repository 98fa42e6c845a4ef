// Eager shape and dtype inference: the one place that decides whether an op
// may be recorded, and what it produces.
#pragma once

#include <span>

#include "graph/node.h"

namespace braze {

struct TypeShape {
  DType dtype;
  Shape shape;
};

// Validates `op` applied to inputs of these types with this attribute and
// returns the result's type. Throws std::invalid_argument (or
// std::out_of_range for axes) with a message naming the op and the shapes.
TypeShape infer(Op op, std::span<const TypeShape> inputs, const Attr& attr);

// The dtype in which an element-wise op computes: the promoted input type for
// comparisons and predicates, else the result type.
DType compute_dtype(Op op, std::span<const DType> inputs, DType result);

}  // namespace braze
