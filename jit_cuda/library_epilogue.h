// Which post-ops cuBLASLt and cuDNN apply to a matmul's or a conv2d's
// result on a CUDA device, in what role (Note [CUDA library epilogues]),
// and which operand layouts they read: the CUDA target's LibraryRules
// (Note [Library capabilities] in fusion/library_rules.h). Pure logic: no
// library is loaded.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "fusion/epilogue.h"
#include "fusion/library_rules.h"
#include "fusion/partition.h"
#include "graph/graph.h"

namespace braze::cuda {

// Note [CUDA library epilogues]
// cuBLASLt computes D = epilogue(alpha * op(A) op(B) + beta * C + bias)
// in one call, so a matmul takes, in this order:
//   - Scale: a constant factor (a Linear post-op with no constant added)
//     or a multiply/divide by a 0-d input (a scalar parameter, Note
//     [Scalar parameters]), folded into alpha at each run; never after an
//     add, since alpha scales the product only;
//   - Residual: an add (or a sub: beta = -1) of a tensor of the result's
//     shape whose rows are contiguous (stride 1 along the last axis), read
//     as C with its own leading dimension and batch strides;
//   - Bias: an add of a vector along the last axis (stride 1), broadcast
//     over the rows and the batch (CUBLASLT_EPILOGUE_BIAS: one value per
//     row of cuBLASLt's column-major D, which is a column of braze's
//     row-major result);
//   - Activation: relu, or gelu in its tanh form (CUBLASLT_EPILOGUE_GELU is
//     the tanh approximation, as PyTorch's fused addmm assumes where it
//     falls back to gelu(approximate="tanh"); not measured here, without a
//     GPU: CudaLibrariesGpu checks it to 2e-5), last.
// One residual and one bias, in either order (both are adds of the same
// accumulator); float64 takes Scale and Residual only (alpha, beta and C
// are part of every cuBLASLt matmul; epilogue kernels for double are not
// assumed). cuDNN's convolution takes a Scale
// only (alpha of cudnnConvolutionForward): its fused bias/activation call
// restricts the algorithm (identity activation only with
// IMPLICIT_PRECOMP_GEMM), so a conv2d's bias and activation run as one
// element-wise kernel after it. A call that sums over nothing (K = 0, or a
// conv2d with no input channel or kernel tap) or writes nothing takes no
// post-op: braze writes its zeros and the post-ops run as kernels.
// Everything refused stays in the graph as kernels (Note [Library
// capabilities]); the reason names the library and what it cannot do.
enum class LibraryRole : uint8_t { Scale, Residual, Bias, Activation };
std::string_view name(LibraryRole r);

struct Roles {
  std::vector<LibraryRole> roles;  // per post-op taken, in order
  std::string why_not;             // why the post-op after those is refused; "" when all are taken
};

// The roles of `ops`, in order, as far as the library takes them.
Roles assign_roles(const Graph& g, NodeId library, std::span<const PostOp> ops);

// Whether cuBLASLt or cuDNN reads input `operand` of `library` (ids in
// `g`) as it is laid out: a matrix with a unit stride along one of its two
// axes (Note [Row-major matmul on cuBLASLt]), a conv2d input with positive
// strides, a dense OIHW weight, each of the two starting
// kCudnnOperandAlignment bytes into its 256-byte aligned buffer (Note
// [cuDNN convolutions]).
inline constexpr int64_t kCudnnOperandAlignment = 16;
bool reads_operand(const Graph& g, const Node& library, size_t operand);

// The CUDA target's rules: refuse is assign_roles on the taken post-ops
// and the next one; reads is reads_operand.
const LibraryRules& cuda_library_rules();

// A 0-d operand that multiplies alpha, or divides it, at each run.
struct ScaleOperand {
  NodeId base;
  bool divides;
};

// Alpha: the constant factors of the Scale post-ops, and their 0-d operands.
struct Scale {
  double alpha = 1;
  std::vector<ScaleOperand> operands;
};
Scale collect_scale(const Graph& g, std::span<const PostOp> ops, std::span<const LibraryRole> roles);

// The roles of a library group's post-ops, for planning its call: throws
// std::invalid_argument unless its operands and result share a dtype
// cuBLASLt and cuDNN run here (float32, float16, bfloat16, float64); the
// partition gave it only post-ops the library takes (asserted).
Roles planned_roles(const Graph& g, const FusedGroup& group);

// Whether the library sums over nothing or writes nothing (then it takes
// no post-op and writes zeros or nothing).
bool computes_nothing(const Graph& g, NodeId library);

}  // namespace braze::cuda
