#include "jit_cpu/blas_matmul.h"

#include <algorithm>
#include <climits>
#include <mutex>

#include "fusion/blas_layout.h"
#include "graph/check.h"
#include "jit_cpu/dnn.h"

#ifdef BRAZE_HAVE_BLAS
#include <cblas.h>
#endif

namespace braze::dnn {

namespace {

// op(S) = X^T for the last two axes of `v` (fusion/blas_layout.h).
std::optional<ColumnMajor> matrix(const View& v) {
  const size_t r = v.shape.size();
  return transposed_view(v.shape[r - 2], v.shape[r - 1], v.strides[r - 2], v.strides[r - 1], true);
}

// Element offset of batch index `flat` (row-major over out's batch axes)
// in `v`, whose batch axes are right-aligned with out's and broadcast
// where they are 1.
int64_t batch_offset(const View& v, const Shape& out, int64_t flat) {
  const size_t batch = out.size() - 2, vb = v.shape.size() - 2;
  int64_t offset = v.offset;
  for (size_t d = batch; d-- > 0;) {
    const int64_t i = flat % out[d];
    flat /= out[d];
    const size_t k = d + vb - batch;  // v's axis, if it has one here
    if (d + vb >= batch && v.shape[k] != 1) offset += i * v.strides[k];
  }
  return offset;
}

#ifdef BRAZE_HAVE_BLAS
// The leading dimension of a row-major [rows, cols] matrix whose rows are
// `stride` apart: any row stride serves a single row, but BLAS asks for
// at least cols.
int ld(int64_t stride, int64_t rows, int64_t cols) {
  return static_cast<int>(rows <= 1 ? std::max<int64_t>(cols, 1) : stride);
}

// The BLAS's matrix-vector product in T (float: sgemv, double: dgemv).
void gemv_of(CBLAS_TRANSPOSE t, int m, int n, const float* a, int lda, const float* x, int incx, float* y) {
  cblas_sgemv(CblasRowMajor, t, m, n, 1.0f, a, lda, x, incx, 0.0f, y, 1);
}
void gemv_of(CBLAS_TRANSPOSE t, int m, int n, const double* a, int lda, const double* x, int incx, double* y) {
  cblas_dgemv(CblasRowMajor, t, m, n, 1.0, a, lda, x, incx, 0.0, y, 1);
}

// out [m, 1] = a [m, k] @ b [k, 1], or out [1, n] = a [1, k] @ b [k, n]:
// one gemv, the matrix read row-major (NoTrans) or column-major (Trans),
// the vector with its stride. The rules give only layouts with a unit
// stride along one matrix axis and a positive one along the vector
// (fusion/blas_layout.h, transposed_view). A gemm with one column runs at
// a third of gemv's speed ([4000, 5000] @ [5000] in float64: 20 against 6
// ms, NumPy's dgemv 6).
template <class T>
void gemv(const Call& c, const T* a, const T* b, T* y) {
  const size_t ra = c.a.view.shape.size(), rb = c.b.view.shape.size(), r = c.out.size();
  const int64_t m = c.out[r - 2], n = c.out[r - 1], k = c.a.view.shape[ra - 1];
  const int64_t am = c.a.view.strides[ra - 2], ak = c.a.view.strides[ra - 1];
  const int64_t bk = c.b.view.strides[rb - 2], bn = c.b.view.strides[rb - 1];
  const int ki = static_cast<int>(k);
  if (n == 1) {  // y = A x, x = b's column
    const int incx = static_cast<int>(k <= 1 ? 1 : bk);
    if ((k <= 1 || ak == 1) && (m <= 1 || am >= k))
      gemv_of(CblasNoTrans, static_cast<int>(m), ki, a, ld(am, m, k), b, incx, y);
    else  // column-major: A^T [k, m] row-major, rows ak apart
      gemv_of(CblasTrans, ki, static_cast<int>(m), a, ld(ak, k, m), b, incx, y);
    return;
  }
  // m == 1: y = B^T x, x = a's row
  const int incx = static_cast<int>(k <= 1 ? 1 : ak);
  if ((n <= 1 || bn == 1) && (k <= 1 || bk >= n))
    gemv_of(CblasTrans, ki, static_cast<int>(n), b, ld(bk, k, n), a, incx, y);
  else  // column-major: B^T [n, k] row-major, rows bn apart
    gemv_of(CblasNoTrans, static_cast<int>(n), ki, b, ld(bn, n, k), a, incx, y);
}
#endif

}  // namespace

std::string blas() {
#ifdef BRAZE_HAVE_BLAS
  return openblas_get_config();  // "OpenBLAS 0.3.21 ... USE_OPENMP Cooperlake ..."
#else
  return "";
#endif
}

std::string blas_why_not(const Call& c) {
#ifndef BRAZE_HAVE_BLAS
  (void)c;
  return "braze was built without a BLAS (apt install libopenblas-openmp-dev and rebuild)";
#else
  if (c.op != Op::MatMul || !cpu_blas_matmul(c.dtype, c.out) || c.a.dtype != c.dtype || c.b.dtype != c.dtype)
    return "the BLAS runs float64 matmul and float32 matrix-vector products only";
  if (numel(c.out) == 0 || numel(c.a.view.shape) == 0 || numel(c.b.view.shape) == 0)
    return "an operand or the result is empty";
  if (!c.post.empty()) return "BLAS applies no post-ops";
  std::optional<ColumnMajor> a = matrix(c.a.view), b = matrix(c.b.view);
  if (!a || !b) return "an operand has no unit stride along a matrix axis";
  for (int64_t v : {a->matrix.rows, a->matrix.cols, a->matrix.ld, b->matrix.rows, b->matrix.cols, b->matrix.ld})
    if (v > INT_MAX) return "a size or leading dimension is past the BLAS's int";
  return "";
#endif
}

void blas_matmul(const Call& c, const Array& a, const Array& b, Array& out) {
#ifndef BRAZE_HAVE_BLAS
  (void)c, (void)a, (void)b, (void)out;
  BRAZE_ASSERT(false, "blas_matmul without a BLAS");
#else
  // One call at a time: threads realize programs at once (docs/threads.md),
  // and an OpenMP build of OpenBLAS shares its buffers among the calls in
  // flight unless built with NUM_PARALLEL, which Debian's is not known to
  // be. Each call still runs on all of OpenMP's threads.
  static std::mutex one_at_a_time;
  std::lock_guard lock(one_at_a_time);
  if (c.dtype == DType::Float32) {  // cpu_blas_matmul: a float32 call is a matrix-vector product
    gemv(c, reinterpret_cast<const float*>(a.data.get()) + c.a.view.offset,
         reinterpret_cast<const float*>(b.data.get()) + c.b.view.offset, reinterpret_cast<float*>(out.data.get()));
    return;
  }
  if (matrix_vector(c.out)) {
    gemv(c, reinterpret_cast<const double*>(a.data.get()) + c.a.view.offset,
         reinterpret_cast<const double*>(b.data.get()) + c.b.view.offset, reinterpret_cast<double*>(out.data.get()));
    return;
  }
  const ColumnMajor sa = *matrix(c.a.view), sb = *matrix(c.b.view);
  const size_t r = c.out.size();
  const int m = static_cast<int>(c.out[r - 2]), n = static_cast<int>(c.out[r - 1]);
  const int k = static_cast<int>(c.a.view.shape[c.a.view.shape.size() - 1]);
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < r; ++d) batches *= c.out[d];
  const auto* pa = reinterpret_cast<const double*>(a.data.get());
  const auto* pb = reinterpret_cast<const double*>(b.data.get());
  auto* pc = reinterpret_cast<double*>(out.data.get());
  auto op = [](const ColumnMajor& s) { return s.transposed ? CblasTrans : CblasNoTrans; };
  // out^T [n, m] = op(S_b) [n, k] op(S_a) [k, m], column-major, ldc = n.
  for (int64_t i = 0; i < batches; ++i)
    cblas_dgemm(CblasColMajor, op(sb), op(sa), n, m, k, 1.0, pb + batch_offset(c.b.view, c.out, i),
                static_cast<int>(sb.matrix.ld), pa + batch_offset(c.a.view, c.out, i), static_cast<int>(sa.matrix.ld),
                0.0, pc + i * int64_t{m} * n, n);
#endif
}

}  // namespace braze::dnn
