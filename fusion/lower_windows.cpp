// Note [Masked loads] (lower_windows.h).
#include "fusion/lower_windows.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace braze {

namespace {

class WindowLowering {
 public:
  explicit WindowLowering(const KernelSpec& spec) : in_(spec), out_(spec) {
    out_.body.clear();
    for (KernelInput& k : out_.inputs) k.view.window.clear();
  }

  KernelSpec run() {
    std::vector<int32_t> at(in_.body.size());  // old value -> new value
    for (size_t v = 0; v < in_.body.size(); ++v) {
      KernelOp op = in_.body[v];
      for (int32_t& a : op.args) a = at[a];
      if (op.op == Op::Input && in_.inputs[op.input].view.windowed()) op.args = {mask(op.input, op.space)};
      at[v] = push(std::move(op));
    }
    for (KernelOutput& o : out_.outputs) o.value = at[o.value];
    return std::move(out_);
  }

 private:
  int32_t push(KernelOp op) {
    out_.body.push_back(std::move(op));
    return static_cast<int32_t>(out_.body.size() - 1);
  }

  // The bool that is true where input k's window holds: one Window input
  // per windowed axis, and-ed; shared by inputs with the same window.
  int32_t mask(int32_t k, Space space) {
    const View& v = in_.inputs[k].view;
    int32_t result = -1;
    for (size_t d = 0; d < v.window.size(); ++d) {
      if (v.window[d] == Window{0, v.shape[d]}) continue;
      int32_t m = window_value(v.shape, d, v.window[d], space);
      result = result < 0 ? m : and_value(result, m, space);
    }
    return result;
  }

  int32_t window_value(const Shape& shape, size_t d, Window w, Space space) {
    auto key = std::make_tuple(shape, d, w.lo, w.hi, space);
    if (auto it = windows_.find(key); it != windows_.end()) return it->second;
    KernelInput in{KernelInput::Kind::Window, DType::Bool, space, View{}, -1, w};
    in.view.shape = shape;
    in.view.strides.assign(shape.size(), 0);
    in.view.strides[d] = shape[d] > 1 ? 1 : 0;
    out_.inputs.push_back(in);
    KernelOp load{Op::Input, DType::Bool, space, {}, {}, static_cast<int32_t>(out_.inputs.size() - 1)};
    return windows_[key] = push(std::move(load));
  }

  int32_t and_value(int32_t a, int32_t b, Space space) {
    auto key = std::make_pair(std::min(a, b), std::max(a, b));
    if (auto it = ands_.find(key); it != ands_.end()) return it->second;
    return ands_[key] = push(KernelOp{Op::LogicalAnd, DType::Bool, space, {key.first, key.second}, {}, -1});
  }

  const KernelSpec& in_;
  KernelSpec out_;
  std::map<std::tuple<Shape, size_t, int64_t, int64_t, Space>, int32_t> windows_;
  std::map<std::pair<int32_t, int32_t>, int32_t> ands_;
};

}  // namespace

KernelSpec lower_windows(const KernelSpec& spec) {
  if (std::none_of(spec.inputs.begin(), spec.inputs.end(), [](const KernelInput& in) { return in.view.windowed(); }))
    return spec;
  return WindowLowering(spec).run();
}

std::vector<bool> masked_inputs(const KernelSpec& spec) {
  std::vector<bool> masked(spec.inputs.size(), false);
  for (const KernelOp& op : spec.body)
    if (op.op == Op::Input && !op.args.empty()) masked[op.input] = true;
  return masked;
}

}  // namespace braze
