#include "fusion/loop_order.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace braze {

namespace {

// Bytes one step along axis `a` moves, the largest over the buffers read
// per element.
int64_t axis_stride(const KernelSpec& spec, size_t a) {
  int64_t s = 0;
  for (const KernelInput& in : spec.inputs)
    if (in.kind == KernelInput::Kind::Buffer && in.space == Space::Full && in.view.shape[a] > 1)
      s = std::max(s, std::abs(in.view.strides[a]) * static_cast<int64_t>(itemsize(in.dtype)));
  return s;
}

// perm[i]: the old axis that becomes axis i.
std::vector<int64_t> memory_order(const KernelSpec& spec, bool sort_reduced) {
  const size_t rank = spec.domain.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : spec.reduce_axes) reduced[a] = true;
  std::vector<int64_t> kept, red;
  for (size_t a = 0; a < rank; ++a) (reduced[a] ? red : kept).push_back(static_cast<int64_t>(a));
  if (sort_reduced)
    std::stable_sort(red.begin(), red.end(), [&](int64_t a, int64_t b) { return axis_stride(spec, a) > axis_stride(spec, b); });
  std::vector<int64_t> perm;
  size_t k = 0, r = 0;
  while (k < kept.size() || r < red.size()) {
    bool take_reduced = k == kept.size() ||
                        (r < red.size() && std::make_pair(axis_stride(spec, red[r]), -red[r]) >
                                               std::make_pair(axis_stride(spec, kept[k]), -kept[k]));
    perm.push_back(take_reduced ? red[r++] : kept[k++]);
  }
  return perm;
}

template <class V>
V permuted(const V& v, const std::vector<int64_t>& perm) {
  V out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = v[perm[i]];
  return out;
}

}  // namespace

void order_loops(KernelSpec& spec, Combine combine) {
  if (spec.reduce_axes.empty()) return;
  for (const KernelOutput& o : spec.outputs)
    if (o.space == Space::Full) return;
  bool sort_reduced = combine == Combine::AnyOrder && spec.reduce_axes.size() > 1;
  for (const KernelOp& op : spec.body)
    if (op.op == Op::ArgMax || op.op == Op::ArgMin) sort_reduced = false;
  if (!sort_reduced && spec.reduce_axes.size() == spec.domain.size()) return;
  std::vector<int64_t> perm = memory_order(spec, sort_reduced);
  std::vector<int64_t> position(perm.size());  // old axis -> new axis
  for (size_t i = 0; i < perm.size(); ++i) position[perm[i]] = static_cast<int64_t>(i);
  if (std::is_sorted(perm.begin(), perm.end())) return;

  auto move_axes = [&](std::vector<int64_t>& axes) {
    for (int64_t& a : axes) a = position[a];
    std::sort(axes.begin(), axes.end());
  };
  spec.domain = permuted(spec.domain, perm);
  move_axes(spec.reduce_axes);
  for (KernelInput& in : spec.inputs) {
    if (in.kind == KernelInput::Kind::Scalar) continue;
    in.view.shape = permuted(in.view.shape, perm);
    in.view.strides = permuted(in.view.strides, perm);
  }
  for (KernelOp& op : spec.body)
    if (is_reduce(op.op) && !op.attr.ints.empty()) move_axes(op.attr.ints);
}

}  // namespace braze
