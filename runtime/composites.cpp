// Composite ops, built from primitives in the graph (DESIGN.md section 2),
// and the front ends of the library ops.
#include <cmath>
#include <numbers>

#include "runtime/ops.h"

namespace braze {

namespace {

Tensor as_float(const Tensor& x) { return astype(x, stats_result(x.dtype())); }

// Note [Checked labels]
// A label outside [0, classes) has no logit to pick: the one-hot mask would
// be all false and the loss silently logsumexp alone. PyTorch raises, as
// NumPy's indexing does, and so does braze. Labels are data, so only their
// values can tell: cross_entropy reads them when it is recorded, realizing
// a lazy labels tensor first (one integer per row; bz.jit's arguments are
// realized already), and raises IndexError naming the label, its position
// and the class count. Recording stays the one place errors are raised
// (Note [Two kinds of failure]): realize never throws for bad data.
void check_labels(const Tensor& labels, int64_t classes) {
  const Array a = labels.host_data();
  const Strides strides = contiguous_strides(a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    int64_t label = load_int(a.dtype, a.data.get(), i);
    if (label >= 0 && label < classes) [[likely]]
      continue;
    std::vector<int64_t> at;
    for (int64_t s : strides) at.push_back(i / s % std::max<int64_t>(a.shape[at.size()], 1));
    BRAZE_CHECK_INDEX(false, "cross_entropy: label ", label, " at ", to_string(at), " of labels ", to_string(a.shape),
                      " is out of range for ", classes, " classes");
  }
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) {
  Tensor xf = as_float(x);
  if (x.shape()[normalize_axis(axis, x.ndim(), "softmax")] == 0) return xf;  // empty: nothing to normalise
  // The shift by the max cancels, so it has no gradient (Note [Reverse mode]).
  Tensor e = exp(xf - stop_gradient(max(xf, Axes{{axis}}, /*keepdims=*/true)));
  return e / sum(e, Axes{{axis}}, /*keepdims=*/true);
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  Tensor xf = as_float(x);
  if (x.shape()[normalize_axis(axis, x.ndim(), "log_softmax")] == 0) return xf;
  Tensor shifted = xf - stop_gradient(max(xf, Axes{{axis}}, /*keepdims=*/true));  // as in softmax
  return shifted - log(sum(exp(shifted), Axes{{axis}}, /*keepdims=*/true));
}

namespace {

// The trailing axes a normalisation runs over: as many as the weight has.
std::vector<int64_t> norm_axes(const Tensor& x, const std::optional<Tensor>& weight, std::string_view op) {
  int64_t k = weight ? std::max<int64_t>(weight->ndim(), 1) : 1;
  BRAZE_CHECK(x.ndim() >= k, op, ": input of shape ", to_string(x.shape()), " has fewer than ", k, " axes");
  if (weight) {
    Shape tail(x.shape().end() - weight->ndim(), x.shape().end());
    BRAZE_CHECK(weight->shape() == tail, op, ": weight of shape ", to_string(weight->shape()),
                " does not match the trailing axes ", to_string(tail), " of input ", to_string(x.shape()));
  }
  std::vector<int64_t> axes;
  for (int64_t i = x.ndim() - k; i < x.ndim(); ++i) axes.push_back(i);
  return axes;
}

}  // namespace

// Note [Statistics precision]: the statistics in stats_dtype; the
// normalised value rounds to the input's float type before the weight and
// bias apply, so a float16 layer_norm with float16 weights stays float16.
Tensor layer_norm(const Tensor& x, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps) {
  std::vector<int64_t> axes = norm_axes(x, weight, "layer_norm");
  Tensor xs = astype(x, stats_dtype(x.dtype()));
  Tensor centered = xs - mean(xs, axes, /*keepdims=*/true);
  Tensor y = astype(centered * rsqrt(mean(square(centered), axes, /*keepdims=*/true) + eps), stats_result(x.dtype()));
  if (weight) y = y * *weight;
  if (bias) y = y + *bias;
  return y;
}

Tensor rms_norm(const Tensor& x, const std::optional<Tensor>& weight, double eps) {
  std::vector<int64_t> axes = norm_axes(x, weight, "rms_norm");
  Tensor xs = astype(x, stats_dtype(x.dtype()));
  Tensor y = astype(xs * rsqrt(mean(square(xs), axes, /*keepdims=*/true) + eps), stats_result(x.dtype()));
  return weight ? y * *weight : y;
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  Tensor xf = as_float(x);
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    return 0.5 * xf * (1.0 + tanh(k * (xf + 0.044715 * xf * xf * xf)));
  }
  BRAZE_CHECK(approximate == "none", "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  return 0.5 * xf * (1.0 + erf(xf * (1.0 / std::numbers::sqrt2)));
}

Tensor silu(const Tensor& x) {
  Tensor xf = as_float(x);
  return xf * sigmoid(xf);
}

// Note [Statistics precision]: an int64 difference squared overflows float32.
Tensor mse_loss(const Tensor& prediction, const Tensor& target) {
  DType result = promote(stats_result(prediction.dtype()), target.dtype());
  bool wide = stats_dtype(prediction.dtype()) == DType::Float64 || stats_dtype(target.dtype()) == DType::Float64;
  DType c = wide ? DType::Float64 : stats_dtype(result);
  return astype(mean(square(astype(prediction, c) - astype(target, c))), result);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& labels) {
  BRAZE_CHECK(logits.ndim() >= 1, "cross_entropy: logits need a class axis, got shape ", to_string(logits.shape()));
  BRAZE_CHECK(is_integral(labels.dtype()) && labels.dtype() != DType::Bool,
              "cross_entropy: labels must be integer class indices, got ", name(labels.dtype()));
  Shape batch(logits.shape().begin(), logits.shape().end() - 1);
  BRAZE_CHECK(labels.shape() == batch, "cross_entropy: labels of shape ", to_string(labels.shape()),
              " do not match logits of shape ", to_string(logits.shape()), " (expected ", to_string(batch), ")");
  int64_t classes = logits.shape().back();
  check_labels(labels, classes);
  // The logit of each row's label, picked by a one-hot mask: no gather op.
  Tensor one_hot = equal(arange(int64_t{0}, classes, int64_t{1}, DType::Int64, logits.device()),
                         expand_dims(astype(labels, DType::Int64), -1));
  Tensor picked = sum(where(one_hot, as_float(logits), Scalar(0.0)), Axes{{-1}});
  return mean(logsumexp(logits, Axes{{-1}}) - picked);
}

// Note [Library operands share a dtype]
// A matmul or conv2d of two dtypes computes in their promotion (float32 @
// float64 is float64, as in NumPy). The libraries take one dtype for both
// operands (oneDNN's and cuBLASLt's kernels, the BLAS's dgemm), so the
// narrower operand is cast first: a Cast node that fuses into whatever
// computes that operand, or one small kernel for an input. Without it the
// call ran on the reference interpreter (picoGPT's attention, whose
// `/ np.sqrt(d)` makes scores float64 against float32 values, took 80x
// NumPy's time). A bool operand is cast too (a mask @ float32 weights is
// a float32 product, as in NumPy); bool @ bool stays NumPy's logical one.
namespace {
void same_dtype(Tensor& a, Tensor& b) {
  if (a.dtype() == b.dtype()) return;
  DType t = promote(a.dtype(), b.dtype());
  if (a.dtype() != t) a = astype(a, t);
  if (b.dtype() != t) b = astype(b, t);
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  BRAZE_CHECK(a.ndim() >= 1 && b.ndim() >= 1, "matmul: operands need at least 1 dim, got shapes ",
              to_string(a.shape()), " and ", to_string(b.shape()));
  // Checked here, before 1-d operands gain an axis, so the error names the user's shapes.
  const int64_t ka = a.shape().back(), kb = b.ndim() == 1 ? b.shape()[0] : b.shape()[b.ndim() - 2];
  BRAZE_CHECK(ka == kb, "matmul: shapes ", to_string(a.shape()), " and ", to_string(b.shape()),
              " are not aligned: ", ka, " (axis ", a.ndim() - 1, " of the first) != ", kb, " (axis ",
              b.ndim() == 1 ? 0 : b.ndim() - 2, " of the second)");
  // NumPy's rules for 1-d operands: a row vector on the left, a column on
  // the right, and the added axis removed from the result.
  Tensor a2 = a.ndim() == 1 ? expand_dims(a, 0) : a;
  Tensor b2 = b.ndim() == 1 ? expand_dims(b, -1) : b;
  same_dtype(a2, b2);
  Tensor r = record(Op::MatMul, {a2, b2});
  if (b.ndim() == 1) r = squeeze(r, Axes{{-1}});
  if (a.ndim() == 1) r = squeeze(r, Axes{{-1 - (b.ndim() == 1 ? 0 : 1)}});
  return r;
}

Tensor conv2d(const Tensor& x_in, const Tensor& weight_in, const std::optional<Tensor>& bias,
              const Conv2dOptions& o) {
  Tensor x = x_in, weight = weight_in;
  same_dtype(x, weight);
  Tensor y = record(Op::Conv2d, {x, weight},
                   Attr{{o.stride[0], o.stride[1], o.padding[0], o.padding[1], o.dilation[0], o.dilation[1], o.groups},
                        {}});
  if (!bias) return y;
  BRAZE_CHECK(bias->ndim() == 1 && bias->shape()[0] == weight.shape()[0], "conv2d: bias of shape ",
              to_string(bias->shape()), " does not match ", weight.shape()[0], " output channels");
  return y + reshape(*bias, {weight.shape()[0], 1, 1});
}

}  // namespace braze
