#include "fusion/blas_layout.h"

#include <algorithm>

namespace braze {

bool matrix_vector(const Shape& out) {
  if (out.size() < 2) return false;
  const size_t r = out.size();
  for (size_t d = 0; d + 2 < r; ++d)
    if (out[d] != 1) return false;
  return out[r - 2] == 1 || out[r - 1] == 1;
}

bool cpu_blas_matmul(DType dtype, const Shape& out) {
  return dtype == DType::Float64 || (dtype == DType::Float32 && matrix_vector(out));
}

std::optional<ColumnMajor> transposed_view(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool may_transpose) {
  // op = N: S = X^T (cols x rows) reads X's rows as its columns.
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= std::max<int64_t>(cols, 1)))
    return ColumnMajor{false, {cols, rows, rows <= 1 ? std::max<int64_t>(cols, 1) : rs, 0}};
  // op = T: S = X (rows x cols), already column-major.
  if (may_transpose && (rows <= 1 || rs == 1) && (cols <= 1 || cs >= std::max<int64_t>(rows, 1)))
    return ColumnMajor{true, {rows, cols, cols <= 1 ? std::max<int64_t>(rows, 1) : cs, 0}};
  return std::nullopt;
}

}  // namespace braze
