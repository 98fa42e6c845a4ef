// From a fused group to its KernelSpec: members become body values, every
// read from outside the group becomes a load of an input through its view,
// re-expressed in the axes of the space that reads it.
#include <map>
#include <tuple>

#include "fusion/loop_order.h"
#include "fusion/schedule.h"
#include "graph/check.h"

namespace braze {

namespace {

class SpecBuilder {
 public:
  SpecBuilder(const Graph& g, const FusedGroup& group, const std::vector<Space>& space,
              const std::vector<bool>& inlined, std::vector<NodeId>& reads)
      : g_(g), group_(group), space_(space), inlined_(inlined), reads_(reads) {
    spec_.domain = group.domain;
    spec_.reduce_axes = group.reduce_axes;
  }

  KernelSpec run() {
    for (NodeId id : group_.nodes) {
      const Node& n = g_[id];
      Space s = space_[id];
      // A reduction reads Full values and makes a Reduced one.
      Space reads_in = is_reduce(n.op) && !n.attr.ints.empty() ? Space::Full : s;
      value_of_[id] = compute(n, s, reads_in);
    }
    for (NodeId o : group_.outputs) spec_.outputs.push_back({value_of_.at(o), g_[o].dtype, space_[o]});
    return std::move(spec_);
  }

 private:
  int32_t compute(const Node& n, Space s, Space reads_in) {
    KernelOp op{n.op, n.dtype, s, {}, n.attr};
    for (NodeId i : n.inputs) {
      NodeId b = g_.base(i);
      auto it = value_of_.find(b);
      op.args.push_back(it != value_of_.end() ? it->second : inlined_[b] ? inlined(b, reads_in) : load(i, reads_in));
    }
    // The same op on the same values twice (logsumexp's guards, seen
    // once with kept axes and once without) is computed once.
    auto key = std::make_tuple(op.op, op.dtype, op.space, op.args, op.attr.ints, op.attr.reals);
    auto [it, fresh] = computed_.emplace(std::move(key), 0);
    if (fresh) it->second = push(std::move(op));
    return it->second;
  }

  // Note [Index expressions are recomputed]: b computed here, in space s.
  int32_t inlined(NodeId b, Space s) {
    auto key = std::make_pair(b, s);
    if (auto it = inlined_values_.find(key); it != inlined_values_.end()) return it->second;
    return inlined_values_[key] = compute(g_[b], s, s);
  }

  int32_t push(KernelOp op) {
    spec_.body.push_back(std::move(op));
    return static_cast<int32_t>(spec_.body.size() - 1);
  }

  int32_t load(NodeId i, Space s) {
    NodeId b = g_.base(i);
    using Kind = KernelInput::Kind;
    Kind kind = g_[b].op == Op::Const ? Kind::Scalar : g_[b].op == Op::Arange ? Kind::Arange : Kind::Buffer;
    View v;  // a scalar reads no layout
    if (kind != Kind::Scalar) {
      v = g_[i].view;
      Shape want = spec_.shape_of(s);
      if (v.shape != want) {
        // Only size-1 axes differ (the partition guarantees it), which any
        // strided layout can express.
        std::optional<View> r = move_view(v, Op::Reshape, want);
        BRAZE_ASSERT(r, "build_spec: cannot read ", to_string(v.shape), " as ", to_string(want));
        v = *r;
      }
    }
    std::vector<std::pair<int64_t, int64_t>> window;  // Note [Windows]: part of what a load reads
    for (const Window& w : v.window) window.emplace_back(w.lo, w.hi);
    auto key = std::make_tuple(b, s, v.shape, v.strides, v.offset, window);
    if (auto it = loads_.find(key); it != loads_.end()) return it->second;
    spec_.inputs.push_back({kind, g_[b].dtype, s, v});
    if (kind == Kind::Buffer) {
      auto [first, fresh] = first_input_.emplace(b, static_cast<int32_t>(spec_.inputs.size() - 1));
      if (!fresh) spec_.inputs.back().same_buffer_as = first->second;
    }
    reads_.push_back(b);
    KernelOp op{Op::Input, g_[b].dtype, s, {}, {}, static_cast<int32_t>(spec_.inputs.size() - 1)};
    int32_t value = push(std::move(op));
    loads_.emplace(std::move(key), value);
    return value;
  }

  const Graph& g_;
  const FusedGroup& group_;
  const std::vector<Space>& space_;
  const std::vector<bool>& inlined_;
  std::vector<NodeId>& reads_;
  std::map<std::pair<NodeId, Space>, int32_t> inlined_values_;
  KernelSpec spec_;
  std::map<NodeId, int32_t> value_of_;
  std::map<NodeId, int32_t> first_input_;  // per buffer read, its first input
  std::map<std::tuple<NodeId, Space, Shape, Strides, int64_t, std::vector<std::pair<int64_t, int64_t>>>, int32_t> loads_;
  std::map<std::tuple<Op, DType, Space, std::vector<int32_t>, std::vector<int64_t>, std::vector<double>>, int32_t>
      computed_;
};

}  // namespace

KernelSpec build_spec(const Graph& g, const FusedGroup& group, const std::vector<Space>& space,
                      const std::vector<bool>& inlined, std::vector<NodeId>& reads) {
  KernelSpec spec = SpecBuilder(g, group, space, inlined, reads).run();
  order_loops(spec);  // Note [Loops in memory order]
  return spec;
}

}  // namespace braze
