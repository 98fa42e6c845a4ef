// What a target's library calls take: which post-ops they apply and which
// operand layouts they read (Note [Library capabilities]).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "fusion/epilogue.h"
#include "graph/graph.h"

namespace braze {

// Note [Library capabilities]
// Which post-ops (Note [Library epilogues]) a library applies, and which
// layouts of its operands it reads, is its backend's to say. oneDNN (the
// CPU) applies every post-op and reads any strides; cuBLASLt and cuDNN
// apply fewer post-ops, in a fixed order, and read a matrix only with a
// unit stride along one of its axes, a convolution weight only dense
// (jit_cuda/library_epilogue.h), as does the CPU's BLAS for float64
// (jit_cpu/blas_matmul.h). make_schedule takes the target's rules:
//   - an operand the library cannot read as it is laid out (a step slice
//     of a matrix's inner axis, a broadcast constant such as bz.ones, an
//     OHWI weight) is given a Copy, an element-wise kernel writing it dense,
//     before the partition (copy_unread_operands), so every layout runs;
//     the layouts it reads (transposed views, offsets, batch strides) stay
//     views: no copy;
//   - the partition asks `refuse` before each post-op joins a chain; where
//     it refuses, the chain stops there with the rules' reason as the
//     unfused edge's (explain() shows it), and what follows becomes
//     element-wise kernels like any other op: a post-op the library cannot
//     run is never dropped.
// push_views keeps views above post-ops for every target's sake (it runs
// before the target is asked): where a target then refuses one, the view is
// read from memory by the kernel after it, which is correct, at the cost
// of that read.
// Note [Split reductions] (fusion/passes.h): a reduction of fewer than
// `blocks` results whose rows are read along memory (one block each), or
// of fewer than `threads` results read down columns (one thread each), is
// split in two, each part getting at least `block_chunk` (`thread_chunk`)
// elements, when it reads at least `min_elements` (below that one kernel
// takes about a launch's time anyway).
struct ReductionSplit {
  int64_t blocks = 0, block_chunk = 0;
  int64_t threads = 0, thread_chunk = 0;
  int64_t min_elements = 0;
};

struct LibraryRules {
  std::string_view target;  // "oneDNN/BLAS", "cuBLASLt/cuDNN"
  // "" when the library applies `next` after the post-ops `taken` to the
  // value of `library`; otherwise why not. Null: every post-op.
  std::string (*refuse)(const Graph& g, NodeId library, std::span<const PostOp> taken, const PostOp& next) = nullptr;
  // Whether the library reads input `operand` of `library` (a node whose
  // inputs are ids in `g`) as it is laid out. Null: every layout.
  bool (*reads)(const Graph& g, const Node& library, size_t operand) = nullptr;
  // Not a library's, but the target's too: null where its kernels need no
  // split reductions (the CPU's).
  const ReductionSplit* split = nullptr;
  // Whether the library runs the convolution `conv` (its inputs ids in
  // `g`); one it does not run becomes matmuls (Note [Convolutions as
  // matmuls]). Null: every one.
  bool (*convolves)(const Graph& g, const Node& conv) = nullptr;
  // Whether the library runs the float16 or bfloat16 matmul or convolution
  // `call` in float32 (Note [Half library calls in float32]). Null: none.
  bool (*widens)(const Graph& g, const Node& call) = nullptr;
};

// Note [Half library calls in float32]
// oneDNN 2.6 runs no float16 matmul or convolution on the CPU (and
// bfloat16 ones only with AVX-512): they ran on the reference interpreter,
// as slowly as NumPy's own float16 matmul (a [256, 256] product: 71 ms
// against NumPy's 69). widened_library_calls, asked by make_schedule before
// the pipeline, writes such a call as the float32 call of its operands cast
// to float32, its result cast back: the casts are kernels (the last one
// fused with whatever follows), the call oneDNN's float32 one. A product
// of two float16 values is exact in float32; the float32 sum differs from
// the reference's float64 one by rounding only, and the result is rounded
// to float16 once, as the reference rounds it.
Graph widened_library_calls(const Graph& g, bool (*widens)(const Graph& g, const Node& call));

// Note [Convolutions as matmuls]
// A convolution no library here runs (float64 and integers on the CPU:
// oneDNN's convolutions are float32, bfloat16 and int8 products into
// int32; integers on CUDA) ran on the reference interpreter, 10-100x
// slower. convolutions_as_matmuls, asked by make_schedule before the
// pipeline, writes it as a sum over the kernel's taps of matmuls, each of
// a weight slice [O, C] by the strided slice of the padded input that the
// tap reads (a batch axis for the groups): float64 ones are BLAS calls
// ([4, 64, 56, 56] by [64, 64, 3, 3] in 20 ms, PyTorch's float64
// convolution 38: bench/library_calls.py), integer ones sums of products (Note
// [Integer matmul as a sum]). A sum of float64 products in another order
// than the reference's differs from it by rounding only.
Graph convolutions_as_matmuls(const Graph& g, bool (*convolves)(const Graph& g, const Node& conv));

// The CPU's rules: oneDNN applies every post-op and reads every layout;
// a float64 matmul, a BLAS call, applies none and reads matrices with a
// unit stride along one axis (the default everywhere).
const LibraryRules& cpu_library_rules();

// Note [Convolution bias] (jit_cpu/dnn_primitives.cpp): whether `addend`,
// added to a convolution's result of shape `out` ([N, C, H, W]), is one
// value per channel, contiguous: the bias oneDNN's convolutions take.
bool is_channel_bias(const View& addend, const Shape& out);

// `g` with each library operand that `rules` cannot read replaced by a
// Copy of it (Note [Library capabilities]); `g` itself when there is none.
Graph copy_unread_operands(const Graph& g, const LibraryRules& rules);

}  // namespace braze
