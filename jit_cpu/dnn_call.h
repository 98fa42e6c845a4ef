// A library group as a call description (Note [oneDNN primitives]): what
// the primitive cache keys on, free of pointers and node ids.
#pragma once

#include <string>
#include <vector>

#include "fusion/partition.h"

namespace braze::dnn {

struct Operand {
  DType dtype;
  View view;     // how the call reads its base buffer
  NodeId base;   // the buffer (not part of the key)
};

struct CallPostOp {
  PostOp::Kind kind;
  Op op;  // Kind::Binary
  Activation activation;
  Operand addend;  // Kind::Binary
  double alpha, beta;  // Kind::Linear
};

struct Call {
  Op op;                      // MatMul or Conv2d
  std::vector<int64_t> attr;  // conv2d: stride, padding, dilation (h, w), groups
  DType dtype;                // of the operands and the result
  Shape out;                  // the result, written dense
  Operand a, b;
  // b is a graph input: a program packs it once and keeps it (Note [Kept
  // packed weights] in runtime/execute.h), which changes what packing
  // pays (Note [Packed matmul weights]).
  bool b_input = false;
  std::vector<CallPostOp> post;
};

Call describe_call(const Graph& g, const FusedGroup& group);

// Deterministic text of everything but the bases and offsets: the cache key.
std::string key_text(const Call& c);

}  // namespace braze::dnn
