#include "jit_cpu/blas_matmul.h"

#include <climits>

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
  if (c.op != Op::MatMul || c.dtype != DType::Float64 || c.a.dtype != c.dtype || c.b.dtype != c.dtype)
    return "the BLAS runs float64 matmul only";
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
