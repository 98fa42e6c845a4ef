// Reductions, and the statistics built from them.
#include <algorithm>

#include "runtime/ops.h"

namespace braze {

namespace {

std::vector<int64_t> resolve_axes(const Tensor& x, const Axes& axes, std::string_view op) {
  std::vector<int64_t> out;
  if (!axes) {
    for (int64_t i = 0; i < x.ndim(); ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : *axes) out.push_back(normalize_axis(a, x.ndim(), op));
  std::sort(out.begin(), out.end());
  BRAZE_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), op, ": repeated axis in ",
              to_string(*axes));
  return out;
}

// The reduction keeps the reduced axes as size 1; without keepdims a
// reshape (a free view) drops them.
Tensor reduce(Op op, const Tensor& x, const Axes& axes, bool keepdims) {
  std::vector<int64_t> ax = resolve_axes(x, axes, info(op).api);
  // Validates (max of nothing has no identity); a sum or product of
  // nothing is a kernel like any other (Note [Reductions over nothing]).
  Tensor r = record(op, {x}, Attr{ax, {}});
  if (keepdims) return r;
  Shape s;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (!std::binary_search(ax.begin(), ax.end(), i)) s.push_back(x.shape()[i]);
  return reshape(r, s);
}

int64_t count(const Tensor& x, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= x.shape()[a];
  return n;
}

}  // namespace

DType stats_dtype(DType t) {
  // 32-bit integers too: float32 holds 24 bits of a 32-bit value, so int32
  // sums with cancellation lost all of a small mean.
  if (t == DType::Int32 || t == DType::UInt32 || t == DType::Int64 || t == DType::Float64) return DType::Float64;
  return DType::Float32;
}

DType stats_result(DType t) { return is_float(t) ? t : kDefaultFloat; }

Tensor sum(const Tensor& x, Axes axes, bool keepdims) { return reduce(Op::Sum, x, axes, keepdims); }
Tensor prod(const Tensor& x, Axes axes, bool keepdims) { return reduce(Op::Prod, x, axes, keepdims); }
Tensor max(const Tensor& x, Axes axes, bool keepdims) { return reduce(Op::Max, x, axes, keepdims); }
Tensor min(const Tensor& x, Axes axes, bool keepdims) { return reduce(Op::Min, x, axes, keepdims); }

Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return reduce(Op::ArgMax, x, axis ? Axes{{*axis}} : Axes{}, keepdims);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return reduce(Op::ArgMin, x, axis ? Axes{{*axis}} : Axes{}, keepdims);
}

namespace {

// The mean in stats_dtype, not yet rounded to the result's dtype.
Tensor mean_in(const Tensor& xs, const std::vector<int64_t>& ax, bool keepdims) {
  // 0/0 for an empty reduction gives NaN, as NumPy.
  return divide(sum(xs, ax, keepdims), Scalar(static_cast<double>(count(xs, ax))));
}

}  // namespace

// Note [Statistics precision]
Tensor mean(const Tensor& x, Axes axes, bool keepdims) {
  std::vector<int64_t> ax = resolve_axes(x, axes, "mean");
  return astype(mean_in(astype(x, stats_dtype(x.dtype())), ax, keepdims), stats_result(x.dtype()));
}

Tensor var(const Tensor& x, Axes axes, double correction, bool keepdims) {
  std::vector<int64_t> ax = resolve_axes(x, axes, "var");
  Tensor xs = astype(x, stats_dtype(x.dtype()));
  Tensor centered = xs - mean_in(xs, ax, /*keepdims=*/true);
  double dof = std::max(static_cast<double>(count(x, ax)) - correction, 0.0);
  return astype(divide(sum(square(centered), ax, keepdims), Scalar(dof)), stats_result(x.dtype()));
}

Tensor std(const Tensor& x, Axes axes, double correction, bool keepdims) {
  std::vector<int64_t> ax = resolve_axes(x, axes, "std");  // errors name std, not var
  return sqrt(var(x, ax, correction, keepdims));
}

Tensor logsumexp(const Tensor& x, Axes axes, bool keepdims) {
  std::vector<int64_t> ax = resolve_axes(x, axes, "logsumexp");
  Tensor xf = astype(x, stats_result(x.dtype()));
  // An empty reduction is log(0) = -inf (as scipy and PyTorch); max would
  // have no identity to shift by.
  if (count(x, ax) == 0) return log(sum(exp(xf), ax, keepdims));
  // The shift cancels in the value, so it has no gradient: stop_gradient
  // keeps the backward from differentiating the max (Note [Reverse mode]).
  Tensor m = stop_gradient(max(xf, ax, /*keepdims=*/true));
  // An infinite or NaN max would turn x - m into NaN; shift by 0 instead and
  // let exp/log carry the infinity (as scipy.special.logsumexp).
  Tensor shift = where(logical_or(isinf(m), isnan(m)), Scalar(0.0), m);
  Tensor out = add(log(sum(exp(xf - shift), ax, /*keepdims=*/true)), shift);
  return keepdims ? out : squeeze(out, ax);
}

}  // namespace braze
