// Greedy partition in topological order (Note [Kernel spaces]).
//
// Each computed node either joins the group of a producer it reads, taking a
// space there (Full or Reduced), or starts a group of its own. A group is a
// domain D and reduce axes A; it can absorb:
//   - an element-wise node reading a member directly (same space), through a
//     "broadcast back" view of a Reduced member (x - max(x) in softmax: Full),
//     or through a view that only adds or drops size-1 axes;
//   - a reduction over A of a Full member, where an element-wise group takes
//     the reduction's axes when it has none yet (prologue fusion);
//   - other producer groups of the same node, when their spaces agree, so
//     layer_norm's mean and variance rows end up in one kernel.
// Every edge left crossing groups gets the reason of the decision that left it.
#include "fusion/partition.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include "graph/check.h"

namespace braze {

namespace {

Shape without_ones(const Shape& s) {
  Shape out;
  for (int64_t d : s)
    if (d != 1) out.push_back(d);
  return out;
}

bool same_ignoring_ones(const Shape& a, const Shape& b) { return without_ones(a) == without_ones(b); }

Shape reduced(const Shape& d, const std::vector<int64_t>& axes) {
  Shape s = d;
  for (int64_t a : axes) s[a] = 1;
  return s;
}

// Whether `v` reads all of a dense row-major array of shape `base` in
// order, with size-1 axes added or dropped: a relabelling of the same
// elements. (A one-element slice of a longer array passes the stride test
// but reads only part of it.)
bool is_dense_relabel(const View& v, const Shape& base) {
  if (v.offset != 0 || numel(v.shape) != numel(base)) return false;
  Strides dense = contiguous_strides(v.shape);
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] != 1 && v.strides[d] != dense[d]) return false;
  return true;
}

// Whether `v` reads a dense array of shape reduced(D, A) broadcast back to
// D: each index of D sees the value of its row.
bool is_broadcast_back(const View& v, const Shape& d, const std::vector<int64_t>& axes) {
  if (v.shape != d || v.offset != 0) return false;
  Strides dense = contiguous_strides(reduced(d, axes));
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] == 1) continue;
    bool reduced_axis = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    if (v.strides[i] != (reduced_axis ? 0 : dense[i])) return false;
  }
  return true;
}

std::string describe(const Shape& d, const std::vector<int64_t>& axes) {
  std::ostringstream s;
  s << "domain " << to_string(d);
  if (!axes.empty()) s << " reducing axes " << to_string(axes);
  return s.str();
}

class Partitioner {
 public:
  Partitioner(const Graph& g, const LibraryRules& rules)
      : g_(g), rules_(rules), group_of_(g.size(), -1), space_(g.size(), Space::Full) {
    Readers r = readers_of(g);
    users_ = std::move(r.users);
    is_output_ = std::move(r.is_output);
    inlined_ = find_inlined();
  }

  Partition run() {
    for (NodeId id = 0; id < g_.size(); ++id) {
      const Node& n = g_[id];
      FusionKind kind = info(n.op).kind;
      if (kind == FusionKind::Leaf || is_movement(n.op) || inlined_[id]) continue;
      if (group_of_[id] >= 0) continue;  // already taken into a library call's epilogue
      if (kind == FusionKind::Opaque) place_library(id);
      else if (is_reduce(n.op) && !n.attr.ints.empty()) place_reduction(id);
      else place_elementwise(id);
    }
    return finish();
  }

 private:
  struct Group {
    Shape domain;
    std::vector<int64_t> axes;
    bool library = false;
    std::vector<PostOp> post_ops;  // library groups
    std::vector<NodeId> nodes;
    std::set<int> deps;       // producer groups (possibly stale ids: use find)
    std::set<NodeId> reads;   // distinct external bases read (a bound on buffer inputs)
    int parent;
  };

  // Note [Index expressions are recomputed]
  // An element-wise node computed from constants, scalars and aranges (a
  // window's mask, a join's test of the index, tril's) costs a few
  // instructions wherever it is needed and reads no memory. Held by one
  // kernel, it was written out and loaded by every other that read it; and
  // as one interned node serves every step of a loop recorded lazily (each
  // step's padding has the same masks), kernels came to depend on each
  // other through it and were cut apart: a diffusion step on a padded
  // array took 9 kernels. So no group holds such a node, and every kernel
  // that reads it computes it (build_spec.cpp). Not an output, nor one read
  // through a view, by a library call or by a post-op: those need it in
  // memory.
  std::vector<bool> find_inlined() const {
    const std::vector<bool> post_op = epilogue_members(g_);
    std::vector<bool> in(g_.size(), false);
    for (NodeId id = 0; id < g_.size(); ++id) {
      const Node& n = g_[id];
      if (!is_elementwise(n.op) || is_output_[id]) continue;
      bool ok = true;
      for (NodeId i : n.inputs) {
        const NodeId b = g_.base(i);
        const bool scalar = g_[b].op == Op::Input && g_[b].rank() == 0;  // a parameter, passed by value
        ok = ok && (g_[b].op == Op::Const || g_[b].op == Op::Arange || scalar || (in[b] && i == b));
      }
      for (NodeId r : users_[id]) {
        ok = ok && (is_elementwise(g_[r].op) || is_reduce(g_[r].op)) && !post_op[r];
        for (NodeId i : g_[r].inputs) ok = ok && (g_.base(i) != id || i == id);
      }
      in[id] = ok;
    }
    return in;
  }

  // A producer group that `id` may join, and the space `id` would take there.
  struct Candidate {
    int group;
    Space space;
    NodeId producer;
  };

  int find(int g) {
    while (groups_[g].parent != g) g = groups_[g].parent = groups_[groups_[g].parent].parent;
    return g;
  }

  int new_group(Shape d, std::vector<int64_t> axes, bool library = false) {
    int g = static_cast<int>(groups_.size());
    groups_.push_back(Group{std::move(d), std::move(axes), library, {}, {}, {}, {}, g});
    return g;
  }

  // The group of a computed node, or -1 for a leaf.
  int group_of_base(NodeId b) { return group_of_[b] < 0 ? -1 : find(group_of_[b]); }

  void unfused(NodeId producer, NodeId consumer, std::string reason) {
    reasons_.push_back({producer, consumer, std::move(reason)});
  }

  void place_library(NodeId id) {
    const Node& n = g_[id];
    int grp = new_group(n.shape(), {}, /*library=*/true);
    for (NodeId i : n.inputs) {
      NodeId b = g_.base(i);
      if (group_of_base(b) < 0 || explained_.count({b, id})) continue;  // said where b's epilogue stopped
      unfused(b, id, std::string(info(n.op).name) + " is a library call: its operands are written to memory");
    }
    add_member(grp, id, Space::Full);
    // The epilogue joins the call (Note [Library epilogues]); where it
    // stops, the reason is the one explain() gives for that edge.
    EpilogueMatch m = match_epilogue(g_, id, users_, is_output_, rules_);
    for (NodeId e : m.nodes) {
      BRAZE_ASSERT(group_of_[e] < 0, "epilogue node ", e, " of library node ", id, " already belongs to a group");
      add_member(grp, e, Space::Full);
    }
    groups_[grp].post_ops = std::move(m.post_ops);
    for (auto& [consumer, why] : m.stopped) {
      unfused(m.last, consumer, why);
      explained_.insert({m.last, consumer});
    }
  }

  void place_reduction(NodeId id) {
    const Node& n = g_[id];
    const std::vector<int64_t>& axes = n.attr.ints;
    NodeId i = n.inputs[0];
    const Shape& s = g_[i].shape();
    NodeId b = g_.base(i);
    int pg = group_of_base(b);
    if (pg >= 0) {
      const Group& p = groups_[pg];
      std::string why;
      if (p.library) why = "its input comes from a library call";
      else if (i != b) why = "it reduces a view of a computed value, which the kernel cannot index";
      else if (space_[b] == Space::Reduced) why = "it reduces the result of another reduction";
      else if (p.domain != s) why = "its producer's kernel has " + describe(p.domain, p.axes);
      else if (!p.axes.empty() && p.axes != axes)
        why = "it reduces axes " + to_string(axes) + " but its producer's kernel reduces " + to_string(p.axes);
      if (why.empty()) {
        std::vector<Candidate> c{{pg, Space::Reduced, b}};
        if (try_join(id, c, axes)) return;
        why = last_refusal_;
      }
      if (!explained_.count({b, id})) unfused(b, id, why);  // else the epilogue that stopped at b said why
    }
    int grp = new_group(s, axes);
    add_member(grp, id, Space::Reduced);
  }

  void place_elementwise(NodeId id) {
    const Node& n = g_[id];
    std::vector<Candidate> candidates;
    std::set<int> read_from_memory;  // groups whose value `id` must load from memory
    for (NodeId i : n.inputs) {
      NodeId b = g_.base(i);
      int pg = group_of_base(b);
      if (pg < 0) continue;  // a leaf: loaded by whichever kernel reads it
      const Group& p = groups_[pg];
      if (p.library) {
        if (!explained_.count({b, id})) unfused(b, id, "its input comes from a library call");
        continue;
      }
      const View& v = g_[i].view;
      if (i == b || is_dense_relabel(v, g_[b].shape())) {
        candidates.push_back({pg, space_[b], b});
      } else if (space_[b] == Space::Reduced && is_broadcast_back(v, p.domain, p.axes)) {
        candidates.push_back({pg, Space::Full, b});
      } else {
        unfused(b, id, "it reads the value through a view that is not a broadcast back over the rows of " +
                           describe(p.domain, p.axes));
        read_from_memory.insert(pg);
      }
    }
    // A kernel cannot load a value it computes itself: `id` joins no group
    // it reads through a view, even when another input leads to it.
    std::erase_if(candidates, [&](const Candidate& c) {
      if (!read_from_memory.count(find(c.group))) return false;
      unfused(c.producer, id, "it also reads that kernel's value through a view, from memory");
      return true;
    });
    if (!candidates.empty() && try_join(id, candidates, {})) return;
    if (!candidates.empty())
      for (const Candidate& c : candidates) unfused(c.producer, id, last_refusal_);
    int grp = new_group(n.shape(), {});
    add_member(grp, id, Space::Full);
  }

  // Merges the candidates' groups (those that agree with the host's spaces)
  // and adds `id`. `axes` nonempty: `id` is a reduction the host takes on.
  bool try_join(NodeId id, std::vector<Candidate> candidates, const std::vector<int64_t>& axes) {
    const Node& n = g_[id];
    // The host: a group that reduces, if any, so element-wise groups fit
    // into its spaces.
    auto host_it = std::find_if(candidates.begin(), candidates.end(),
                                [&](const Candidate& c) { return !groups_[find(c.group)].axes.empty(); });
    const Candidate host = host_it != candidates.end() ? *host_it : candidates[0];
    int h = find(host.group);
    Shape domain = groups_[h].domain;
    std::vector<int64_t> host_axes = groups_[h].axes.empty() ? axes : groups_[h].axes;
    Shape rows = reduced(domain, host_axes);
    // `id` must live in one of the host's spaces: a reshape of a reduction's
    // result ([4] as [2, 2]) is neither its domain nor its rows, and the
    // kernel could not index `id`'s other inputs there. It starts a kernel
    // of its own, which reads the reshaped value from memory.
    if (axes.empty() && !same_ignoring_ones(n.shape(), domain) &&
        (host_axes.empty() || !same_ignoring_ones(n.shape(), rows))) {
      last_refusal_ = "its shape " + to_string(n.shape()) + " is neither the kernel's domain nor its rows (" +
                      describe(domain, host_axes) + ")";
      return false;
    }

    // Which groups merge, and in which space each element-wise group lands.
    std::map<int, Space> merge{{h, Space::Full}};
    size_t ops = groups_[h].nodes.size() + 1;
    std::set<NodeId> reads = groups_[h].reads;
    for (const Candidate& c : candidates) {
      int gi = find(c.group);
      if (merge.count(gi)) continue;
      const Group& p = groups_[gi];
      std::optional<Space> lands;
      if (!p.axes.empty()) {
        if (p.domain == domain && p.axes == host_axes) lands = Space::Full;  // spaces kept
      } else if (p.domain == domain) {
        lands = Space::Full;
      } else if (!host_axes.empty() && same_ignoring_ones(p.domain, rows)) {
        lands = Space::Reduced;
      }
      if (!lands) {
        unfused(c.producer, id, "its producer's kernel has " + describe(p.domain, p.axes) +
                                    ", another input's has " + describe(domain, host_axes));
        continue;
      }
      if (loads_from(gi, merge)) {
        unfused(c.producer, id, "its producer's kernel and another input's load each other's values from memory");
        continue;
      }
      std::set<NodeId> r = reads;
      r.insert(p.reads.begin(), p.reads.end());
      if (ops + p.nodes.size() > kMaxOpsPerKernel || r.size() > kMaxInputsPerKernel) {
        unfused(c.producer, id, "the merged kernel would pass the limit of " +
                                    std::to_string(kMaxOpsPerKernel) + " ops or " +
                                    std::to_string(kMaxInputsPerKernel) + " inputs");
        continue;
      }
      ops += p.nodes.size();
      reads = std::move(r);
      merge[gi] = *lands;
    }
    for (NodeId i : n.inputs)
      if (group_of_base(g_.base(i)) < 0 && is_buffer_leaf(g_.base(i))) reads.insert(g_.base(i));
    if (ops > kMaxOpsPerKernel || reads.size() > kMaxInputsPerKernel) {
      last_refusal_ = "the kernel would pass the limit of " + std::to_string(kMaxOpsPerKernel) + " ops or " +
                      std::to_string(kMaxInputsPerKernel) + " inputs";
      return false;
    }
    if (creates_cycle(id, merge)) {
      last_refusal_ = "fusing would make two kernels depend on each other";
      return false;
    }

    // Commit: fold every merged group into the host.
    Group& hg = groups_[h];
    hg.axes = host_axes;
    for (auto [gi, lands] : merge) {
      if (gi == h) continue;
      Group& p = groups_[gi];
      for (NodeId m : p.nodes) {
        if (lands == Space::Reduced) space_[m] = Space::Reduced;
        hg.nodes.push_back(m);
      }
      hg.deps.insert(p.deps.begin(), p.deps.end());
      hg.reads.insert(p.reads.begin(), p.reads.end());
      p.nodes.clear();
      p.parent = h;
    }
    Space s;
    if (!axes.empty()) s = Space::Reduced;
    else if (n.shape() == domain || host_axes.empty()) s = Space::Full;
    else if (same_ignoring_ones(n.shape(), rows)) s = Space::Reduced;
    else s = Space::Full;
    add_member(h, id, s);
    return true;
  }

  bool is_buffer_leaf(NodeId b) const { return g_[b].op == Op::Input; }

  // Whether group `gi` and a group in `merge` depend on each other. A
  // group's dependencies are the values it loads from memory (each input
  // that was in another group when its reader was placed): merged, the
  // kernel would load a value it computes itself.
  bool loads_from(int gi, const std::map<int, Space>& merge) {
    for (int d : groups_[gi].deps)
      if (merge.count(find(d))) return true;
    for (auto [m, _] : merge)
      for (int d : groups_[m].deps)
        if (find(d) == gi) return true;
    return false;
  }

  // Whether merging `merge` and adding `id` closes a loop: some producer of
  // the merged group outside it depends, through other groups, on a member.
  bool creates_cycle(NodeId id, const std::map<int, Space>& merge) {
    std::vector<int> stack;
    auto push_deps = [&](int g) {
      for (int d : groups_[g].deps) stack.push_back(find(d));
    };
    for (auto [gi, _] : merge) push_deps(gi);
    for (NodeId i : g_[id].inputs) {
      int pg = group_of_base(g_.base(i));
      if (pg >= 0) stack.push_back(pg);
    }
    std::set<int> seen;
    while (!stack.empty()) {
      int g = find(stack.back());
      stack.pop_back();
      if (merge.count(g)) continue;  // a direct edge into the merged group is fine
      if (!seen.insert(g).second) continue;
      for (int d : groups_[g].deps)
        if (merge.count(find(d))) return true;
      push_deps(g);
    }
    return false;
  }

  void add_member(int grp, NodeId id, Space s) {
    Group& gr = groups_[grp];
    gr.nodes.push_back(id);
    group_of_[id] = grp;
    space_[id] = s;
    for (NodeId i : g_[id].inputs) {
      NodeId b = g_.base(i);
      int pg = group_of_base(b);
      if (pg >= 0 && pg != grp) {
        gr.deps.insert(pg);
        gr.reads.insert(b);
      } else if (pg < 0 && is_buffer_leaf(b)) {
        gr.reads.insert(b);
      }
    }
  }

  Partition finish() {
    // Final groups, their outputs and the edges between them.
    std::map<int, size_t> index;  // root group -> position in `found`
    std::vector<int> found;
    for (NodeId id = 0; id < g_.size(); ++id) {
      if (group_of_[id] < 0) continue;
      int r = find(group_of_[id]);
      if (index.emplace(r, found.size()).second) found.push_back(r);
    }
    std::vector<FusedGroup> groups(found.size());
    std::vector<std::set<size_t>> producers(found.size());
    std::set<NodeId> outputs;
    for (size_t k = 0; k < found.size(); ++k) {
      const Group& gr = groups_[found[k]];
      groups[k].kind = gr.library ? FusedGroup::Kind::Library : FusedGroup::Kind::Kernel;
      groups[k].domain = gr.domain;
      groups[k].reduce_axes = gr.axes;
      groups[k].post_ops = gr.post_ops;
    }
    for (NodeId id = 0; id < g_.size(); ++id) {
      if (group_of_[id] < 0) continue;
      size_t k = index.at(find(group_of_[id]));
      groups[k].nodes.push_back(id);
      for (NodeId i : g_[id].inputs) {
        NodeId b = g_.base(i);
        if (group_of_[b] < 0) continue;
        size_t pk = index.at(find(group_of_[b]));
        if (pk == k) continue;
        producers[k].insert(pk);
        outputs.insert(b);
      }
    }
    for (NodeId o : g_.outputs) {
      BRAZE_ASSERT(group_of_[o] >= 0, "graph output ", o, " is not a computed node");
      outputs.insert(o);
    }
    for (FusedGroup& grp : groups)
      for (NodeId id : grp.nodes)
        if (outputs.count(id)) grp.outputs.push_back(id);

    // Run order: topological over groups, ties by smallest node id, so the
    // schedule is the same in every run.
    std::vector<size_t> waiting(groups.size());
    std::vector<std::vector<size_t>> consumers(groups.size());
    for (size_t k = 0; k < groups.size(); ++k) {
      waiting[k] = producers[k].size();
      for (size_t p : producers[k]) consumers[p].push_back(k);
    }
    using Entry = std::pair<NodeId, size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (size_t k = 0; k < groups.size(); ++k)
      if (waiting[k] == 0) ready.push({groups[k].nodes.front(), k});
    Partition out;
    while (!ready.empty()) {
      size_t k = ready.top().second;
      ready.pop();
      out.groups.push_back(std::move(groups[k]));
      for (size_t c : consumers[k])
        if (--waiting[c] == 0) ready.push({groups[c].nodes.front(), c});
    }
    BRAZE_ASSERT(out.groups.size() == found.size(), "partition: the groups form a cycle");

    out.space = space_;
    out.inlined = inlined_;
    for (UnfusedEdge& e : reasons_) {
      int p = group_of_[e.producer], c = group_of_[e.consumer];
      if (p >= 0 && c >= 0 && find(p) != find(c)) out.unfused.push_back(std::move(e));
    }
    return out;
  }

  const Graph& g_;
  const LibraryRules& rules_;
  std::vector<Group> groups_;
  std::vector<int> group_of_;  // per node; -1 for leaves and views
  std::vector<Space> space_;
  std::vector<UnfusedEdge> reasons_;
  std::string last_refusal_;
  std::vector<std::vector<NodeId>> users_;  // per node: the computed nodes reading it, once each
  std::vector<bool> is_output_;
  std::vector<bool> inlined_;  // Note [Index expressions are recomputed]
  std::set<std::pair<NodeId, NodeId>> explained_;  // edges whose reason the epilogue match gave
};

}  // namespace

Partition partition(const Graph& g, const LibraryRules& rules) { return Partitioner(g, rules).run(); }

}  // namespace braze
