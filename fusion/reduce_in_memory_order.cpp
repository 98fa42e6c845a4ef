// Note [Reductions in memory order] (fusion/passes.h).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "fusion/epilogue.h"
#include "fusion/loop_order.h"
#include "fusion/passes.h"

namespace braze {

namespace {

class ReductionOrder {
 public:
  explicit ReductionOrder(const Graph& g) : epilogue_(epilogue_members(g)) {}

  NodeId rewrite(Graph& out, const Node& n, NodeId id) {
    if (!epilogue_[id] && is_elementwise(n.op) && n.op != Op::Copy)
      if (std::optional<NodeId> pulled = pull_up(out, n)) return *pulled;
    NodeId kept = out.add(n);
    if (epilogue_[id]) in_epilogue_.insert(kept);
    if (!is_reduce(n.op) || n.attr.ints.empty()) return kept;
    std::vector<int64_t> q = kept_in_memory_order(out, n);
    if (q.empty()) return kept;
    std::vector<int64_t> inverse(q.size());
    for (size_t i = 0; i < q.size(); ++i) inverse[q[i]] = static_cast<int64_t>(i);
    std::vector<int64_t> axes;
    for (int64_t a : n.attr.ints) axes.push_back(inverse[a]);
    std::sort(axes.begin(), axes.end());
    NodeId reduced = out.apply(n.op, {permuted(out, n.inputs[0], q)}, Attr{axes, n.attr.reals});
    NodeId back = out.apply(Op::Permute, {reduced}, Attr{inverse, {}});
    viewed_back_.insert(back);
    return back;
  }

 private:
  // An element-wise node over results viewed back (and scalars broadcast)
  // computed in their order and viewed back in turn: var's mean, sum / n,
  // stays in memory's order, so the second reduction, x - mean, reads it
  // there and not through a transposing view.
  std::optional<NodeId> pull_up(Graph& out, const Node& n) {
    const std::vector<int64_t>* back = nullptr;
    for (NodeId i : n.inputs) {
      if (viewed_back_.count(i)) {
        if (back && *back != out[i].attr.ints) return std::nullopt;
        back = &out[i].attr.ints;
      } else if (out[i].view.windowed() ||
                 !std::all_of(out[i].view.strides.begin(), out[i].view.strides.end(), [](int64_t s) { return s == 0; })) {
        return std::nullopt;
      }
    }
    if (!back) return std::nullopt;
    const std::vector<int64_t> inverse = *back;
    std::vector<int64_t> q(inverse.size());
    for (size_t i = 0; i < q.size(); ++i) q[inverse[i]] = static_cast<int64_t>(i);
    std::vector<NodeId> in;
    for (NodeId i : n.inputs)
      in.push_back(viewed_back_.count(i) ? out[i].inputs[0] : out.apply(Op::Permute, {i}, Attr{q, {}}));
    NodeId computed = out.apply(n.op, in, n.attr);
    NodeId result = out.apply(Op::Permute, {computed}, Attr{inverse, {}});
    viewed_back_.insert(result);
    return result;
  }

  // The permutation q (axis i of the new domain is axis q[i]) that puts
  // the kept axes longer than 1 in memory order where they are not, the
  // reduced ones staying where they are; empty when they already are.
  std::vector<int64_t> kept_in_memory_order(const Graph& out, const Node& n) {
    const Shape& domain = out[n.inputs[0]].shape();
    std::vector<MemoryRead> reads;
    std::set<NodeId> seen;
    memory_reads(out, n.inputs[0], reads, seen);
    const std::vector<AxisKey> key = memory_keys(reads, domain.size());
    std::vector<bool> reduced(domain.size(), false);
    for (int64_t a : n.attr.ints) reduced[a] = true;
    std::vector<int64_t> kept;
    for (size_t a = 0; a < domain.size(); ++a)
      if (!reduced[a] && domain[a] > 1) kept.push_back(static_cast<int64_t>(a));
    std::vector<int64_t> sorted = kept;
    std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t a, int64_t b) { return key[a] > key[b]; });
    if (sorted == kept) return {};
    std::vector<int64_t> q(domain.size());
    std::iota(q.begin(), q.end(), 0);
    for (size_t i = 0; i < kept.size(); ++i) q[kept[i]] = sorted[i];
    return q;
  }

  // What the element-wise tree under `id` reads from memory.
  void memory_reads(const Graph& out, NodeId id, std::vector<MemoryRead>& reads, std::set<NodeId>& seen) {
    if (!seen.insert(id).second) return;
    const Node& n = out[id];
    if (through(id, n)) {
      for (NodeId i : n.inputs) memory_reads(out, i, reads, seen);
      return;
    }
    if (n.op != Op::Const && n.op != Op::Arange) reads.push_back({&n.view, static_cast<int64_t>(itemsize(n.dtype))});
  }

  // Element-wise nodes are rebuilt over permuted operands; a library
  // call's post-op stays in its chain (Note [Library epilogues]).
  bool through(NodeId id, const Node& n) const {
    return is_elementwise(n.op) && n.op != Op::Copy && !in_epilogue_.count(id);
  }

  // `id` seen through permutation q: element-wise nodes rebuilt over
  // permuted operands, anything else viewed through a Permute.
  NodeId permuted(Graph& out, NodeId id, const std::vector<int64_t>& q) {
    auto key = std::make_pair(id, q);
    if (auto it = done_.find(key); it != done_.end()) return it->second;
    const Node n = out[id];  // a copy: the recursion adds nodes to `out`
    NodeId result;
    if (through(id, n)) {
      std::vector<NodeId> in;
      for (NodeId i : n.inputs) in.push_back(permuted(out, i, q));
      result = out.apply(n.op, in, n.attr);
    } else {
      result = out.apply(Op::Permute, {id}, Attr{q, {}});
    }
    done_.emplace(std::move(key), result);
    return result;
  }

  std::vector<bool> epilogue_;         // per node of the graph rewritten
  std::set<NodeId> in_epilogue_;       // the same nodes, in the new graph
  std::set<NodeId> viewed_back_;       // the Permutes this pass put over what it computes in memory's order
  std::map<std::pair<NodeId, std::vector<int64_t>>, NodeId> done_;
};

}  // namespace

Graph reduce_in_memory_order(const Graph& g) {
  ReductionOrder order(g);
  Graph out = rewrite_nodes(g, [&](Graph& o, const Node& n, NodeId id) { return order.rewrite(o, n, id); });
  return dense_outputs(eliminate_dead(out));
}

}  // namespace braze
