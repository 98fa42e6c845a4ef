// float64 matmul and float32 matrix-vector products on the CPU through a
// BLAS (OpenBLAS's CBLAS, Debian: libopenblas-openmp-dev; which ones:
// cpu_blas_matmul in fusion/blas_layout.h): oneDNN has no float64 matmul,
// which ran on the reference interpreter before this (256x256 A @ A: 144
// ms, NumPy 0.67), and computes a matrix-vector product with a matrix
// kernel.
// The rules that bring it calls it can take (fusion/library_rules.cpp):
// no post-ops, operands with a unit stride along one matrix axis.
// Internal to the library-call files (dnn_primitives.cpp).
#pragma once

#include <string>

#include "graph/array.h"
#include "jit_cpu/dnn_call.h"

namespace braze::dnn {

// "" when the BLAS runs `c`, otherwise why not (built without one, an
// operand it cannot read, sizes past its int).
std::string blas_why_not(const Call& c);

// out = a @ b for `c` (blas_why_not ""), `out` dense; a and b are the
// operands' base buffers, read through c.a.view and c.b.view. Batch axes
// (broadcast ones included) are a loop of calls.
void blas_matmul(const Call& c, const Array& a, const Array& b, Array& out);

}  // namespace braze::dnn
