// The plans run through host implementations of what cublasLtMatmul and
// cudnnConvolutionForward are documented to compute, against the
// reference interpreter on the graph, over random shapes, dtypes,
// transposed, offset and batch-broadcast operands and epilogues. No
// library and no GPU: this checks the mapping of braze's row-major views
// onto column-major layouts, batches, alpha/beta, bias and activation
// (Notes [Row-major matmul on cuBLASLt], [cuDNN convolutions]); the same
// cases run on a GPU in the CudaLibrariesGpu tests.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/reference.h"
#include "tests/cpp/jit_cuda_library.h"

namespace braze::cuda {
namespace {

using testing::library_step;

// cublasLtMatmul on host memory, in double: per call and batch index i,
//   D(r, c) = act(alpha * sum_l op(A)(r, l) op(B)(l, c) + beta * C(r, c) + bias[r])
// where a stored matrix X has X(r, c) at r + c * ld, matrix i of a batch
// is batch_stride * i elements on, and op(X) is X or X^T.
void emulated_cublaslt(const MatmulPlan& p, const std::byte* a, const std::byte* b, const std::byte* c,
                       const std::byte* bias, std::byte* d, double alpha) {
  const DType t = p.dtype;
  if (p.calls.empty()) return;
  // What cuBLASLt checks of the layouts: op(A) is m x k, op(B) k x n, C and D m x n, ld >= rows.
  auto shape_ok = [](const LtMatrix& x, bool trans, int64_t rows, int64_t cols) {
    return (trans ? x.cols == rows && x.rows == cols : x.rows == rows && x.cols == cols) && x.ld >= std::max<int64_t>(x.rows, 1);
  };
  ASSERT_TRUE(shape_ok(p.a, p.trans_a, p.m, p.k) && shape_ok(p.b, p.trans_b, p.k, p.n) && shape_ok(p.d, false, p.m, p.n) &&
              (!p.has_c || shape_ok(p.c, false, p.m, p.n)))
      << key_text(p, false);
  auto op = [&](const std::byte* base, int64_t off, const LtMatrix& m, bool trans, int64_t r, int64_t col) {
    return trans ? load_double(t, base, off + col + r * m.ld) : load_double(t, base, off + r + col * m.ld);
  };
  for (const MatmulPlan::Offsets& o : p.calls)
    for (int64_t i = 0; i < p.batch; ++i)
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t col = 0; col < p.n; ++col) {
          double sum = 0;
          for (int64_t l = 0; l < p.k; ++l)
            sum += op(a, o.a + i * p.a.batch_stride, p.a, p.trans_a, r, l) *
                   op(b, o.b + i * p.b.batch_stride, p.b, p.trans_b, l, col);
          double v = alpha * sum;
          if (p.has_c) v += p.beta * load_double(t, c, o.c + i * p.c.batch_stride + r + col * p.c.ld);
          if (has_bias(p.epilogue)) v += load_double(t, bias, p.bias_offset + r);
          if (p.epilogue == LtEpilogue::Relu || p.epilogue == LtEpilogue::ReluBias) v = std::max(v, 0.0);
          if (p.epilogue == LtEpilogue::Gelu || p.epilogue == LtEpilogue::GeluBias)
            v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
          store_double(t, d, o.d + i * p.d.batch_stride + r + col * p.d.ld, v);
        }
}

// cudnnConvolutionForward (CROSS_CORRELATION) on host memory, in double.
void emulated_cudnn(const ConvPlan& p, const std::byte* x, const std::byte* w, std::byte* y, double alpha) {
  const DType t = p.dtype;
  const auto& xd = p.x_dims;
  const auto& xs = p.x_strides;
  const auto& wd = p.w_dims;
  const auto& yd = p.y_dims;
  const int per_group = yd[1] / p.groups;
  int64_t out = 0;
  for (int n = 0; n < yd[0]; ++n)
    for (int k = 0; k < yd[1]; ++k)
      for (int oh = 0; oh < yd[2]; ++oh)
        for (int ow = 0; ow < yd[3]; ++ow, ++out) {
          double sum = 0;
          for (int c = 0; c < wd[1]; ++c)
            for (int r = 0; r < wd[2]; ++r)
              for (int s = 0; s < wd[3]; ++s) {
                int ih = oh * p.stride[0] - p.padding[0] + r * p.dilation[0];
                int iw = ow * p.stride[1] - p.padding[1] + s * p.dilation[1];
                if (ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3]) continue;
                int ic = k / per_group * wd[1] + c;
                int64_t xi = p.x_offset + int64_t{n} * xs[0] + int64_t{ic} * xs[1] + int64_t{ih} * xs[2] + iw * xs[3];
                int64_t wi = p.w_offset + ((int64_t{k} * wd[1] + c) * wd[2] + r) * wd[3] + s;
                sum += load_double(t, x, xi) * load_double(t, w, wi);
              }
          store_double(t, y, out, alpha * sum);
        }
}

// The library step of `y` emulated, against the reference value of the
// node it writes; `run` emulates the plan into `out`.
template <class Run>
void expect_step_matches_reference(const Tensor& y, const std::string& what, Run run) {
  Lowered l = lower(std::vector<Tensor>{y});
  Schedule s = make_schedule(l.graph, cuda_library_rules());
  const Step& step = library_step(s);
  auto base = [&](NodeId id) -> const std::byte* {
    const Node& n = s.graph[id];
    EXPECT_EQ(n.op, Op::Input) << what;
    return l.inputs[n.attr.ints[0]].data.get();
  };
  const NodeId o = step.group.outputs[0];
  Array got = allocate_array(s.graph[o].dtype, s.graph[o].shape());
  run(s.graph, step.group, base, got);
  Array want = reference::evaluate(s.graph, l.inputs, std::vector<NodeId>{o}).at(0);
  const double tol = testing::library_tolerance(got.dtype);
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = load_double(want.dtype, want.data.get(), i), g = load_double(got.dtype, got.data.get(), i);
    ASSERT_NEAR(g, w, tol * (1 + std::abs(w))) << what << " at " << i << "\n" << explain(s);
  }
}

TEST(CudaLibrarySemantics, MatmulPlansComputeTheReference) {
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::string what;
    Tensor y = testing::random_matmul(seed, what);
    expect_step_matches_reference(y, what, [&](const Graph& g, const FusedGroup& group, auto base, Array& out) {
      MatmulPlan p = plan_matmul(g, group);
      if (p.zero_fill) std::fill(out.data.get(), out.data.get() + out.bytes(), std::byte{0});
      emulated_cublaslt(p, base(p.a_base), base(p.b_base), p.has_c ? base(p.c_base) : nullptr,
                        has_bias(p.epilogue) ? base(p.bias_base) : nullptr, out.data.get(), p.scale.alpha);
    });
  }
}

TEST(CudaLibrarySemantics, ConvPlansComputeTheReference) {
  int ran = 0;
  for (uint32_t seed = 0; seed < 400 && ran < 150; ++seed) {
    std::string what;
    std::optional<Tensor> conv = testing::random_conv(seed, what);
    if (!conv) continue;
    ++ran;
    Tensor y = *conv;
    expect_step_matches_reference(y, what, [&](const Graph& g, const FusedGroup& group, auto base, Array& out) {
      ConvPlan p = plan_conv(g, group);
      if (p.empty) return;
      if (p.zero_fill) return std::fill(out.data.get(), out.data.get() + out.bytes(), std::byte{0});
      emulated_cudnn(p, base(p.x_base), base(p.w_base), out.data.get(), p.scale.alpha);
    });
  }
  EXPECT_GE(ran, 100);
}

}  // namespace
}  // namespace braze::cuda
