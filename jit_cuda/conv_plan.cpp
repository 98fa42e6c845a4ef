// Note [cuDNN convolutions] (conv_plan.h).
#include "jit_cuda/conv_plan.h"

#include <limits>
#include <sstream>

#include "graph/check.h"

namespace braze::cuda {

namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

int narrow(int64_t v, const char* what) {
  BRAZE_CHECK(v <= kMaxInt, "conv2d on cuda: cuDNN takes 32-bit sizes and strides, but the ", what, " is ", v);
  return static_cast<int>(v);
}

}  // namespace

ConvPlan plan_conv(const Graph& g, const FusedGroup& group) {
  const Node& lib = g[group.nodes[0]];
  BRAZE_ASSERT(lib.op == Op::Conv2d, "plan_conv of ", info(lib.op).name);
  ConvPlan p;
  p.dtype = lib.dtype;
  p.scale = collect_scale(g, group.post_ops, planned_roles(g, group).roles);
  const Node& x = g[lib.inputs[0]];
  const Node& w = g[lib.inputs[1]];
  p.x_base = g.base(lib.inputs[0]), p.x_offset = x.view.offset;
  p.w_base = g.base(lib.inputs[1]), p.w_offset = w.view.offset;
  const std::vector<int64_t>& a = lib.attr.ints;  // stride, padding, dilation (h, w), groups
  for (int i = 0; i < 2; ++i) {
    p.stride[i] = narrow(a[i], "stride");
    p.padding[i] = narrow(a[2 + i], "padding");
    p.dilation[i] = narrow(a[4 + i], "dilation");
  }
  p.groups = narrow(a[6], "group count");
  const Shape y = lib.shape();
  Strides dense_x = contiguous_strides(x.shape());
  for (size_t d = 0; d < 4; ++d) {
    p.x_dims[d] = narrow(x.shape()[d], "input's size");
    p.w_dims[d] = narrow(w.shape()[d], "weight's size");
    p.y_dims[d] = narrow(y[d], "result's size");
  }
  narrow(numel(y), "result's element count");
  p.empty = numel(y) == 0;
  p.zero_fill = !p.empty && computes_nothing(g, group.nodes[0]);
  if (p.empty || p.zero_fill) return p;
  // make_schedule copies what cuDNN cannot read (Note [Library capabilities]).
  BRAZE_CHECK(reads_operand(g, lib, 0), "conv2d on cuda: cuDNN reads the input with positive strides, but it is ",
              to_string(x.shape()), " with strides ", to_string(x.view.strides));
  BRAZE_CHECK(reads_operand(g, lib, 1), "conv2d on cuda: cuDNN reads the weight dense (OIHW, row-major), but it is ",
              to_string(w.shape()), " with strides ", to_string(w.view.strides));
  for (size_t d = 0; d < 4; ++d)  // a size-1 axis may have any stride in a view; cuDNN is given a dense one
    p.x_strides[d] = narrow(x.shape()[d] == 1 ? dense_x[d] : x.view.strides[d], "input's stride");
  return p;
}

std::string key_text(const ConvPlan& p, bool allow_tf32) {
  std::ostringstream s;
  auto ints = [&](const char* what, auto& v) {
    s << " " << what;
    for (int i : v) s << " " << i;
  };
  s << name(p.dtype) << (allow_tf32 && p.dtype == DType::Float32 ? " tf32" : "");
  ints("x", p.x_dims);
  ints("strides", p.x_strides);
  ints("w", p.w_dims);
  ints("y", p.y_dims);
  ints("pad", p.padding);
  ints("stride", p.stride);
  ints("dilation", p.dilation);
  s << " groups " << p.groups;
  return s.str();
}

}  // namespace braze::cuda
