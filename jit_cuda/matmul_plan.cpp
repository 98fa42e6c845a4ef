// Note [Row-major matmul on cuBLASLt] (matmul_plan.h).
#include "jit_cuda/matmul_plan.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "graph/check.h"

namespace braze::cuda {

namespace {

// The stride of `v` along batch axis i of a result of rank r (its axes are
// aligned to the right); 0 where it is broadcast (size 1 or absent).
int64_t batch_stride(const View& v, size_t r, size_t i) {
  size_t lead = r - v.shape.size();
  if (i < lead || v.shape[i - lead] == 1) return 0;
  return v.strides[i - lead];
}

// Per batch axis of size > 1, outer to inner: its size and the strides of
// A (braze's right operand), B (its left), C and D.
struct BatchAxes {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, 4>> strides;
};

// Note [Row-major matmul on cuBLASLt], step 1: batch axes joining n.
void fold_into_n(MatmulPlan& p, BatchAxes& axes) {
  int64_t rows = p.n;
  // Whether a batch stride continues rows of stride `ld`: with one row so
  // far, any stride that keeps rows apart does (it becomes the ld).
  auto follows = [&](int64_t s, const LtMatrix& x) { return rows == 1 ? s >= x.rows : s == x.ld * rows; };
  while (!axes.sizes.empty() && !p.trans_b) {
    auto [sa, sb, sc, sd] = axes.strides.back();
    if (sa != 0 || !follows(sb, p.b) || (p.has_c && !follows(sc, p.c)) || sd != p.d.ld * rows) break;
    if (rows == 1) p.b.ld = sb, p.c.ld = p.has_c ? sc : p.c.ld;
    rows *= axes.sizes.back();
    axes.sizes.pop_back();
    axes.strides.pop_back();
  }
  if (rows == p.n) return;  // nothing folded (always so when B is transposed)
  p.n = p.b.cols = p.d.cols = rows;
  if (p.has_c) p.c.cols = rows;
}

// Step 2: the innermost axes with uniform strides as one strided batch.
void strided_batch(MatmulPlan& p, BatchAxes& axes) {
  int64_t count = 1;
  std::array<int64_t, 4> inner{};
  while (!axes.sizes.empty()) {
    const std::array<int64_t, 4>& s = axes.strides.back();
    bool uniform = count * axes.sizes.back() <= std::numeric_limits<int32_t>::max();
    for (size_t x = 0; x < 4; ++x) uniform = uniform && s[x] >= 0 && (count == 1 || s[x] == inner[x] * count);
    if (!uniform) break;
    if (count == 1) inner = s;
    count *= axes.sizes.back();
    axes.sizes.pop_back();
    axes.strides.pop_back();
  }
  p.batch = static_cast<int32_t>(count);
  p.a.batch_stride = inner[0];
  p.b.batch_stride = inner[1];
  p.c.batch_stride = inner[2];
  p.d.batch_stride = inner[3];
}

// Step 3: a call per index of the axes left, outer to inner.
void loop_calls(MatmulPlan& p, const BatchAxes& axes, const MatmulPlan::Offsets& start) {
  std::vector<int64_t> index(axes.sizes.size(), 0);
  while (true) {
    MatmulPlan::Offsets o = start;
    for (size_t i = 0; i < index.size(); ++i) {
      o.a += index[i] * axes.strides[i][0];
      o.b += index[i] * axes.strides[i][1];
      o.c += index[i] * axes.strides[i][2];
      o.d += index[i] * axes.strides[i][3];
    }
    p.calls.push_back(o);
    size_t i = index.size();
    while (i > 0 && ++index[i - 1] == axes.sizes[i - 1]) index[--i] = 0;
    if (i == 0) return;
  }
}

}  // namespace

std::string_view name(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::Default: return "default";
    case LtEpilogue::Bias: return "bias";
    case LtEpilogue::Relu: return "relu";
    case LtEpilogue::ReluBias: return "relu_bias";
    case LtEpilogue::Gelu: return "gelu";
    case LtEpilogue::GeluBias: return "gelu_bias";
  }
  return "?";
}

bool has_bias(LtEpilogue e) { return e == LtEpilogue::Bias || e == LtEpilogue::ReluBias || e == LtEpilogue::GeluBias; }

int alignment_of(int64_t elements, size_t itemsize) {
  int64_t bytes = std::abs(elements) * static_cast<int64_t>(itemsize);
  int a = 1;
  while (a < 256 && bytes % (2 * a) == 0) a *= 2;
  return a;
}

MatmulPlan plan_matmul(const Graph& g, const FusedGroup& group) {
  const Node& lib = g[group.nodes[0]];
  BRAZE_ASSERT(lib.op == Op::MatMul, "plan_matmul of ", info(lib.op).name);
  const Roles roles = planned_roles(g, group);
  const Node& x = g[lib.inputs[0]];
  const Node& w = g[lib.inputs[1]];
  const Shape out = lib.shape();
  const size_t r = out.size();
  const int64_t rows = out[r - 2], cols = out[r - 1], inner = x.shape().back();
  MatmulPlan p;
  p.dtype = lib.dtype;
  p.m = cols, p.n = rows, p.k = inner;
  p.a_base = g.base(lib.inputs[1]);
  p.b_base = g.base(lib.inputs[0]);

  p.scale = collect_scale(g, group.post_ops, roles.roles);
  const View* residual = nullptr;
  bool bias = false, relu = false, gelu = false;
  for (size_t i = 0; i < group.post_ops.size(); ++i) {
    const PostOp& op = group.post_ops[i];
    switch (roles.roles[i]) {
      case LibraryRole::Scale: break;
      case LibraryRole::Residual:
        residual = &g[op.addend].view;
        p.has_c = true, p.c_base = g.base(op.addend), p.beta = op.op == Op::Sub ? -1 : 1;
        break;
      case LibraryRole::Bias:
        bias = true, p.bias_base = g.base(op.addend), p.bias_offset = g[op.addend].view.offset;
        break;
      case LibraryRole::Activation: (op.activation == Activation::Relu ? relu : gelu) = true; break;
    }
  }
  p.epilogue = relu   ? (bias ? LtEpilogue::ReluBias : LtEpilogue::Relu)
               : gelu ? (bias ? LtEpilogue::GeluBias : LtEpilogue::Gelu)
                      : (bias ? LtEpilogue::Bias : LtEpilogue::Default);
  const size_t item = itemsize(p.dtype);
  if (bias) p.align_bias = alignment_of(p.bias_offset, item);
  if (numel(out) == 0) return p;  // nothing to write: no call
  if (inner == 0) {
    p.zero_fill = true;
    return p;
  }

  auto matrix = [&](const char* which, const View& v, int64_t m_rows, int64_t m_cols, bool may_transpose) {
    const size_t rv = v.shape.size();
    std::optional<ColumnMajor> cm = transposed_view(m_rows, m_cols, v.strides[rv - 2], v.strides[rv - 1], may_transpose);
    // make_schedule copies what cuBLASLt cannot read (Note [Library capabilities]).
    BRAZE_CHECK(cm, "matmul on cuda: cuBLASLt reads a matrix with stride 1 along one axis and a leading dimension "
                "along the other; the ", which, " is ", to_string(v.shape), " with strides ", to_string(v.strides));
    return *cm;
  };
  ColumnMajor a = matrix("right operand", w.view, inner, cols, true);
  ColumnMajor b = matrix("left operand", x.view, rows, inner, true);
  p.trans_a = a.transposed, p.a = a.matrix;
  p.trans_b = b.transposed, p.b = b.matrix;
  if (residual) p.c = matrix("residual", *residual, rows, cols, false).matrix;
  p.d = {cols, rows, std::max<int64_t>(cols, 1), 0};

  BatchAxes axes;
  Strides dense = contiguous_strides(out);
  for (size_t i = 0; i + 2 < r; ++i) {
    if (out[i] == 1) continue;
    axes.sizes.push_back(out[i]);
    axes.strides.push_back({batch_stride(w.view, r, i), batch_stride(x.view, r, i),
                            residual ? batch_stride(*residual, r, i) : 0, dense[i]});
  }
  fold_into_n(p, axes);
  strided_batch(p, axes);
  loop_calls(p, axes, {w.view.offset, x.view.offset, residual ? residual->offset : 0, 0});
  auto align = [&](int64_t MatmulPlan::Offsets::*field) {
    int a = 256;
    for (const MatmulPlan::Offsets& o : p.calls) a = std::min(a, alignment_of(o.*field, item));
    return a;
  };
  p.align_a = align(&MatmulPlan::Offsets::a);
  p.align_b = align(&MatmulPlan::Offsets::b);
  p.align_d = align(&MatmulPlan::Offsets::d);
  p.align_c = p.has_c ? align(&MatmulPlan::Offsets::c) : p.align_d;
  return p;
}

std::string key_text(const MatmulPlan& p, bool allow_tf32) {
  std::ostringstream s;
  s << name(p.dtype) << (allow_tf32 && p.dtype == DType::Float32 ? " tf32" : "") << " op"
    << (p.trans_a ? 'T' : 'N') << (p.trans_b ? 'T' : 'N') << " m" << p.m << " n" << p.n << " k" << p.k << " batch"
    << p.batch;
  auto matrix = [&](char which, const LtMatrix& x, int align) {
    s << " " << which << x.rows << "x" << x.cols << " ld" << x.ld << " stride" << x.batch_stride << " align"
      << align;
  };
  matrix('A', p.a, p.align_a);
  matrix('B', p.b, p.align_b);
  if (p.has_c) matrix('C', p.c, p.align_c);
  matrix('D', p.d, p.align_d);
  s << " " << name(p.epilogue);
  if (has_bias(p.epilogue)) s << " bias_align" << p.align_bias;
  return s.str();
}

}  // namespace braze::cuda
