// KernelSpec: one fused group in canonical form, with shapes, strides and
// dtypes baked in. What a code generator compiles and what a cache keys.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/node.h"

namespace braze {

// Note [Kernel spaces]
// A kernel runs over a domain shape D and reduces over a set of axes A
// (empty for a purely element-wise kernel). Each value in the body lives in
// one of two index spaces: Full (one value per index of D) or Reduced (one
// per index of D with the axes A collapsed, i.e. one per "row"). A reduction
// takes a Full value to a Reduced one; a Full op that reads a Reduced value
// sees the value of its own row (softmax's x - max(x)). A kernel computes
// its Reduced values row by row, so softmax, layer_norm and friends run as
// one kernel that makes several passes over a row while it is in cache.
enum class Space : uint8_t { Full, Reduced };

// What the kernel reads: a buffer through baked strides, a scalar argument
// (its value is passed at launch, so changing it never recompiles), or an
// arange computed from the index. A buffer's view may have a window (Note
// [Windows] in graph/shape.h); a generator sees it lowered to a masked load
// whose mask comes from Window inputs (Note [Masked loads],
// fusion/lower_windows.h): bools computed from the index, nothing passed.
struct KernelInput {
  enum class Kind : uint8_t { Buffer, Scalar, Arange, Window };
  Kind kind;
  DType dtype;
  Space space;
  View view;  // in the domain's axes (Reduced: size 1 on the reduced axes)
  // The first input that reads the same buffer through another view (x.T
  // in x.T + x), or -1: a launch passes both the same pointer, which a
  // generator may plan for (Note [Tile pairs] in jit_cpu/row_plan.h).
  int32_t same_buffer_as = -1;
  // Window: true where the index its view gives (offset + strides . i, as
  // an arange's with start 0 and step 1) lies in [bounds.lo, bounds.hi).
  Window bounds{};
};

// One value of the body: a load of input `input`, or `op` applied to
// earlier values `args` (indices into the body). A load with an arg loads
// only where that bool value is true and is zero elsewhere (Note [Masked
// loads]).
struct KernelOp {
  Op op;  // Op::Input for a load
  DType dtype;
  Space space;
  std::vector<int32_t> args;
  Attr attr;          // as in the graph (reduction axes, cast target); never scalar values
  int32_t input = -1;  // for loads
};

struct KernelOutput {
  int32_t value;  // index into the body
  DType dtype;
  Space space;
};

struct KernelSpec {
  Shape domain;
  std::vector<int64_t> reduce_axes;  // sorted; empty: element-wise
  std::vector<KernelInput> inputs;   // numbered in order of first use
  std::vector<KernelOp> body;        // topological order
  std::vector<KernelOutput> outputs;

  Shape reduced_shape() const;  // the domain with the reduce axes set to 1
  Shape shape_of(Space s) const { return s == Space::Full ? domain : reduced_shape(); }
};

// Deterministic text of a spec: no pointers, no values of scalar arguments,
// no hash-map order. The same graph gives the same text in every run.
std::string canonical_text(const KernelSpec& spec);

struct KernelKey {
  std::array<uint64_t, 2> hash;  // XXH3-128 of the canonical text
  friend bool operator==(const KernelKey&, const KernelKey&) = default;
  std::string hex() const;
};
KernelKey kernel_key(const KernelSpec& spec);

// What a launch passes for one input: a buffer's base pointer, the value of
// a Scalar (real[0] for float dtypes, integer[0] otherwise), or an Arange's
// start and step (index 0 and 1); nothing for a Window. Values are never baked into the code, so
// a new scalar never compiles a new kernel.
struct KernelArg {
  const std::byte* data = nullptr;
  double real[2] = {0, 0};
  int64_t integer[2] = {0, 0};
};

}  // namespace braze
