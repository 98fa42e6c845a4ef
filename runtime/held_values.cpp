// Which lazy values a realize stores beside what it was asked for
// (Note [Held values are kept]).
#include "runtime/lower.h"

#include <atomic>

namespace braze {

namespace {
std::atomic<bool> keep{false};
}  // namespace

bool keep_held_values() { return keep.load(std::memory_order_relaxed); }
void set_keep_held_values(bool on) { keep.store(on, std::memory_order_relaxed); }

std::vector<Tensor> held_values(const Walk& w, std::span<const Tensor> roots) {
  const size_t n = w.order.size();
  std::vector<uint32_t> edges(n, 0);  // handles the DAG itself holds on each node
  for (uint32_t o : w.operands) ++edges[o];
  std::vector<bool> is_root(n, false);
  for (const Tensor& t : roots) is_root[w.index.at(t.node().get())] = true;
  std::vector<bool> costly(n, false);  // is or stands on a reduction or a library call
  std::vector<Tensor> kept;
  NodeReadLock lock;  // depth (Note [Shared lazy tensors])
  for (size_t k = 0; k < n; ++k) {
    if (w.seen[k] != Walk::Seen::Recorded) continue;
    const TensorNode& node = *w.order[k];
    const FusionKind kind = info(node.op).kind;
    bool c = kind == FusionKind::Reduce || kind == FusionKind::Opaque;
    for (uint32_t i = w.first_operand[k]; i < w.first_operand[k + 1]; ++i) c = c || costly[w.operands[i]];
    costly[k] = c;
    if (is_root[k] || node.device != roots[0].device()) continue;
    if (kind == FusionKind::Leaf || kind == FusionKind::View || kind == FusionKind::Broadcast) continue;
    // Beside the DAG's own edges, the walk holds one handle (Walk::order).
    const bool held_elsewhere = w.order[k].use_count() > static_cast<long>(edges[k]) + 1;
    if (held_elsewhere && (c || node.depth >= kKeepDepth))
      kept.emplace_back(std::const_pointer_cast<TensorNode>(w.order[k]));
  }
  return kept;
}

std::vector<Tensor> with_held_values(std::vector<Tensor> roots) {
  if (!keep_held_values()) return roots;
  std::vector<Tensor> lazy;  // what realize() evaluates, with the walk its evaluate() makes
  for (const Tensor& t : roots)
    if (!t.is_realized()) lazy.push_back(t);
  if (lazy.empty()) return roots;
  Walk w = walk(lazy, {.scalars_as_inputs = true, .elements_as_inputs = true}, /*with_key=*/false);
  std::vector<Tensor> held = held_values(w, lazy);
  roots.insert(roots.end(), held.begin(), held.end());
  return roots;
}

}  // namespace braze
