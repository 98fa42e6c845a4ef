#include "fusion/loop_order.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace braze {

namespace {

// The keys of a spec's buffers read per element.
std::vector<AxisKey> spec_keys(const KernelSpec& spec) {
  std::vector<MemoryRead> reads;
  for (const KernelInput& in : spec.inputs)
    if (in.kind == KernelInput::Kind::Buffer && in.space == Space::Full)
      reads.push_back({&in.view, static_cast<int64_t>(itemsize(in.dtype))});
  return memory_keys(reads, spec.domain.size());
}

// perm[i]: the old axis that becomes axis i.
std::vector<int64_t> memory_order(const KernelSpec& spec, bool sort_reduced) {
  const size_t rank = spec.domain.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : spec.reduce_axes) reduced[a] = true;
  std::vector<int64_t> kept, red;
  for (size_t a = 0; a < rank; ++a) (reduced[a] ? red : kept).push_back(static_cast<int64_t>(a));
  const std::vector<AxisKey> key = spec_keys(spec);
  if (sort_reduced) std::stable_sort(red.begin(), red.end(), [&](int64_t a, int64_t b) { return key[a] > key[b]; });
  std::vector<int64_t> perm;
  size_t k = 0, r = 0;
  while (k < kept.size() || r < red.size()) {
    // Ties keep the spec's order.
    bool take_reduced = k == kept.size() || (r < red.size() && std::make_pair(key[red[r]], -red[r]) >
                                                                    std::make_pair(key[kept[k]], -kept[k]));
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

std::vector<AxisKey> memory_keys(const std::vector<MemoryRead>& reads, size_t rank) {
  std::vector<AxisKey> key(rank, {0, 0});
  int64_t largest = -1;  // the span of the read the first keys come from
  for (const MemoryRead& r : reads) {
    int64_t span = r.itemsize;
    for (size_t a = 0; a < rank; ++a)
      if (r.view->strides[a] != 0) span *= r.view->shape[a];
    auto step = [&](size_t a) { return r.view->shape[a] > 1 ? std::abs(r.view->strides[a]) * r.itemsize : 0; };
    for (size_t a = 0; a < rank; ++a) key[a].second = std::max(key[a].second, step(a));
    if (span <= largest) continue;
    largest = span;
    for (size_t a = 0; a < rank; ++a) key[a].first = step(a);
  }
  return key;
}

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
    if (in.view.windowed()) in.view.window = permuted(in.view.window, perm);
  }
  for (KernelOp& op : spec.body)
    if (is_reduce(op.op) && !op.attr.ints.empty()) move_axes(op.attr.ints);
}

}  // namespace braze
