// Note [Split reductions] (fusion/passes.h).
#include <algorithm>
#include <optional>

#include "fusion/epilogue.h"
#include "fusion/library_rules.h"
#include "fusion/loop_order.h"
#include "fusion/passes.h"

namespace braze {

namespace {

// Where a reduction splits: axis `axis` of its input becomes [parts,
// extent / parts].
struct Split {
  int64_t axis = 0;
  int64_t parts = 1;
};

class Splitter {
 public:
  Splitter(const Graph& g, const ReductionSplit& want)
      : g_(g), want_(want), readers_(count_readers(g)), epilogue_(epilogue_members(g)) {}

  NodeId rewrite(Graph& out, const Node& n, NodeId id) {
    std::optional<Split> s = is_reduce(n.op) ? plan(id) : std::nullopt;
    if (!s) return out.add(n);
    const Shape domain = out[n.inputs[0]].shape();
    const int64_t a = s->axis;
    Shape split = domain;
    split[a] = s->parts;
    split.insert(split.begin() + a + 1, domain[a] / s->parts);
    std::vector<int64_t> axes;
    for (int64_t r : n.attr.ints) axes.push_back(r < a ? r : r + 1);
    NodeId viewed = out.apply(Op::Reshape, {n.inputs[0]}, Attr{split, {}});
    NodeId partial = out.apply(n.op, {viewed}, Attr{axes, n.attr.reals});
    Shape parts = out[partial].shape();
    parts.erase(parts.begin() + a + 1);  // the reduced inner part, size 1
    NodeId folded = out.apply(Op::Reshape, {partial}, Attr{parts, {}});
    ++splits_;
    return out.apply(n.op, {folded}, Attr{{a}, n.attr.reals});
  }

  int splits() const { return splits_; }

 private:
  std::optional<Split> plan(NodeId id) const {
    const Node& n = g_[id];
    if (n.op == Op::ArgMax || n.op == Op::ArgMin || n.attr.ints.empty()) return std::nullopt;
    // A float16 partial sum would round where the one kernel keeps float.
    DType in = g_[n.inputs[0]].dtype;
    if ((n.op == Op::Sum || n.op == Op::Prod) && (in == DType::Float16 || in == DType::BFloat16)) return std::nullopt;
    const Shape& domain = g_[n.inputs[0]].shape();
    std::vector<bool> reduced(domain.size(), false);
    for (int64_t a : n.attr.ints) reduced[a] = true;
    int64_t kept = 1, length = 1;
    for (size_t a = 0; a < domain.size(); ++a) (reduced[a] ? length : kept) *= domain[a];
    if (kept == 0 || length == 0 || kept * length < want_.min_elements) return std::nullopt;

    std::vector<MemoryRead> reads;
    if (!tree_reads(n.inputs[0], reads)) return std::nullopt;
    const std::vector<AxisKey> key = memory_keys(reads, domain.size());
    // Rows when the innermost axis in memory is reduced: one block a row.
    int64_t inner = -1;
    for (size_t a = 0; a < domain.size(); ++a)
      if (domain[a] > 1 && (inner < 0 || key[a] < key[inner])) inner = static_cast<int64_t>(a);
    const bool rows = inner < 0 || reduced[inner];
    const int64_t units = rows ? want_.blocks : want_.threads;
    const int64_t chunk = rows ? want_.block_chunk : want_.thread_chunk;
    if (kept >= units) return std::nullopt;
    const int64_t most = std::min((units + kept - 1) / kept, length / chunk);
    // The reduced axis that splits into the most parts up to `most`; of
    // those, the outermost in memory.
    Split best;
    for (int64_t a : n.attr.ints) {
      int64_t p = largest_divisor(domain[a], most);
      if (p > best.parts || (p == best.parts && p > 1 && key[a] > key[best.axis])) best = {a, p};
    }
    if (best.parts < 2) return std::nullopt;
    return best;
  }

  // The views the element-wise tree under `id` reads (as fusion/loop_order
  // weighs them); false where splitting would cost more than it gains: a
  // node of the tree read elsewhere too (it is computed with its other
  // readers in one pass now; split, it is computed again or written out),
  // or a padded read (a window on the split axis makes its reshape a copy).
  bool tree_reads(NodeId id, std::vector<MemoryRead>& reads) const {
    const Node& n = g_[id];
    if (n.view.windowed()) return false;
    if (is_elementwise(n.op) && n.op != Op::Copy && !epilogue_[id]) {
      if (readers_[id] > 1) return false;
      for (NodeId i : n.inputs)
        if (!tree_reads(i, reads)) return false;
      return true;
    }
    if (n.op != Op::Const && n.op != Op::Arange) reads.push_back({&n.view, static_cast<int64_t>(itemsize(n.dtype))});
    return true;
  }

  static int64_t largest_divisor(int64_t n, int64_t most) {
    for (int64_t p = std::min(n, most); p > 1; --p)
      if (n % p == 0) return p;
    return 1;
  }

  const Graph& g_;
  const ReductionSplit& want_;
  std::vector<uint32_t> readers_;
  std::vector<bool> epilogue_;
  int splits_ = 0;
};

}  // namespace

Graph split_reductions(const Graph& g, const ReductionSplit& want) {
  Splitter splitter(g, want);
  Graph out = rewrite_nodes(g, [&](Graph& o, const Node& n, NodeId id) { return splitter.rewrite(o, n, id); });
  if (splitter.splits() == 0) return g;
  // The reshapes sink to the leaves as any view does; the partial sums'
  // kept axes go to memory's order.
  return reduce_in_memory_order(push_views(eliminate_dead(out)));
}

}  // namespace braze
