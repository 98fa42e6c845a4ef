// A matmul group as cuBLASLt calls: which braze operand is which cuBLASLt
// matrix, their column-major layouts, batches and epilogue. Pure logic: no
// library is loaded (cublaslt_matmul.h makes the descriptors from it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fusion/blas_layout.h"
#include "fusion/partition.h"
#include "jit_cuda/library_epilogue.h"

namespace braze::cuda {

// Note [Row-major matmul on cuBLASLt]
// cuBLASLt's matrices are column-major. braze's result R = X @ W, dense
// row-major [M, N], is as bytes the column-major matrix R^T (N x M, leading
// dimension N), and R^T = W^T X^T: so cuBLASLt's A is braze's W, its B is
// braze's X, D is R^T, and cuBLASLt's (m, n, k) are braze's (N, M, K). A
// braze matrix with stride 1 along its last axis (row-major) is, read
// column-major, its own transpose: passed as is (CUBLAS_OP_N) with its row
// stride as the leading dimension. One with stride 1 along its first axis
// (a transposed view, w.T) is column-major already: passed with
// CUBLAS_OP_T and its column stride as the leading dimension. So x @ w.T
// is a flag, never a copy. A residual read as C has no transpose in
// cuBLASLt (TRANSC is N only): its rows must be contiguous.
// Batch axes, after dropping those of size 1:
//   1. when cuBLASLt's A (W) is the same matrix for every batch (stride
//      0), the innermost batch axes whose rows follow X's (and C's) row
//      stride join n: one [B*M, K] @ [K, N] product, not B small ones;
//   2. the innermost of the rest over which every operand's stride is
//      uniform (stride[i] = stride[inner] * count of the axes inside it,
//      0 included: broadcast) become cuBLASLt's strided batch
//      (BATCH_COUNT, STRIDED_BATCH_OFFSET per matrix);
//   3. any axes left (a W broadcast over one batch axis but not another,
//      a negative stride) are a loop of calls on the host, each with its
//      operands' offsets.
// So every NumPy batch broadcast runs as views. A matrix with neither
// axis of stride 1 (a step slice of the inner axis, a broadcast matrix
// axis such as bz.ones', a negative stride) is copied dense by a kernel
// first (reads_operand, Note [Library capabilities]). What does not run:
// dtypes other than float32, float16, bfloat16 and float64, or operands of
// different dtypes; plan_matmul says so.
// cuBLASLt's heuristic assumes 256-byte aligned pointers unless told
// (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*): bases are (cuMemAlloc and the
// device arena give 256), so each operand's alignment is that of its
// views' offsets in bytes over every call, and the bias pointer the
// heuristic sees has the bias's.

// One matrix as cublasLtMatrixLayoutCreate takes it, and its batch; how
// braze's matrices are read as one: transposed_view (fusion/blas_layout.h).
using LtMatrix = BlasMatrix;

enum class LtEpilogue : uint8_t { Default, Bias, Relu, ReluBias, Gelu, GeluBias };
std::string_view name(LtEpilogue e);
bool has_bias(LtEpilogue e);  // reads a bias vector

struct MatmulPlan {
  DType dtype = DType::Float32;  // of A, B, C, D and the bias
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;  // cuBLASLt's: D is m x n
  int32_t batch = 1;            // strided batch of each call
  LtMatrix a, b, c, d;          // A is braze's right operand, B its left
  NodeId a_base = 0, b_base = 0;
  bool has_c = false;  // a residual read as C; else beta is 0 and D stands for C
  NodeId c_base = 0;
  double beta = 0;
  Scale scale;  // alpha
  LtEpilogue epilogue = LtEpilogue::Default;
  NodeId bias_base = 0;
  int64_t bias_offset = 0;  // elements
  struct Offsets {
    int64_t a = 0, b = 0, c = 0, d = 0;  // elements from each base, the views' offsets included
  };
  std::vector<Offsets> calls;  // one cublasLtMatmul each; none: nothing to compute
  bool zero_fill = false;      // K = 0: the result is zeros
  // Bytes every call's pointer is aligned to (at most 256).
  int align_a = 256, align_b = 256, align_c = 256, align_d = 256, align_bias = 256;
};

// Throws std::invalid_argument for a matmul cuBLASLt cannot take, saying
// why (Note [Row-major matmul on cuBLASLt]): its dtypes, or (in a schedule
// made without the CUDA rules) an operand it cannot read.
MatmulPlan plan_matmul(const Graph& g, const FusedGroup& group);

// What the descriptors and the algorithm depend on (everything but bases,
// offsets and alpha/beta values): the key of the cache of cuBLASLt calls.
std::string key_text(const MatmulPlan& p, bool allow_tf32);

// The alignment in bytes of an offset of `elements` items of `itemsize`
// bytes from a 256-byte aligned base.
int alignment_of(int64_t elements, size_t itemsize);

}  // namespace braze::cuda
