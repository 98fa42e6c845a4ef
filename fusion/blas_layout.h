// How a BLAS (cuBLASLt on CUDA, OpenBLAS's CBLAS on the CPU) reads a
// strided matrix of braze's: both take column-major matrices with a
// leading dimension, transposed or not, so a row-major matrix and a
// transposed view (x @ w.T) are both read in place.
#pragma once

#include <cstdint>
#include <optional>

#include "graph/dtype.h"
#include "graph/shape.h"

namespace braze {

// One matrix as a BLAS takes it, and its batch.
struct BlasMatrix {
  int64_t rows = 0, cols = 0, ld = 0;
  int64_t batch_stride = 0;  // elements between the matrices of one call's batch; 0: the same one
};

// How a BLAS reads braze's matrix X [rows, cols] (element (i, j) at
// i * rs + j * cs) as a column-major S with op(S) = X^T: `transposed` is
// op = T; nullopt when no leading dimension describes X (a negative
// stride, neither axis of stride 1; only op = N when `may_transpose` is
// false). So out = A @ B, row-major, is out^T = op(S_B) op(S_A),
// column-major: a call with B's S first and out's leading dimension N.
struct ColumnMajor {
  bool transposed = false;
  BlasMatrix matrix;
};
std::optional<ColumnMajor> transposed_view(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool may_transpose);

// Whether the CPU runs a matmul with result `out` through its BLAS rather
// than oneDNN: every float64 one (oneDNN has none), and a float32
// matrix-vector product without batch axes (a result row or column of
// one): oneDNN 2.6 computes it with a matrix kernel, a tile of columns
// for the one it needs ([1024, 1024] @ [1024, 1]: 0.73 ms, where NumPy's
// sgemv takes 0.03).
bool cpu_blas_matmul(DType dtype, const Shape& out);
// Whether a matmul with result `out` is a matrix-vector product: no batch
// axes (or all of size 1), and a result row or column of one.
bool matrix_vector(const Shape& out);

}  // namespace braze
