// Note [In-place outputs] (in_place.h).
#include "runtime/in_place.h"

#include <algorithm>

namespace braze {

namespace {

// Whether `v` reads the index it is at in a dense array of `domain`.
bool dense_over(const View& v, const Shape& domain) {
  if (v.shape != domain || v.offset != 0 || v.windowed()) return false;
  const Strides dense = contiguous_strides(domain);
  for (size_t d = 0; d < domain.size(); ++d)
    if (domain[d] > 1 && v.strides[d] != dense[d]) return false;
  return true;
}

}  // namespace

std::vector<std::vector<NodeId>> in_place_inputs(const Schedule& s) {
  const Graph& g = s.graph;
  // The last step that reads each node, or -1.
  std::vector<int64_t> last_read(g.size(), -1);
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& step = s.steps[k];
    if (step.group.kind == FusedGroup::Kind::Kernel) {
      for (NodeId r : step.reads) last_read[r] = static_cast<int64_t>(k);
    } else {
      for (NodeId n : step.group.nodes)
        for (NodeId in : g[n].inputs) last_read[g.base(in)] = static_cast<int64_t>(k);
    }
  }
  std::vector<std::vector<NodeId>> result(g.outputs.size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const NodeId o = g.outputs[i];
    auto made = std::find_if(s.steps.begin(), s.steps.end(), [&](const Step& st) {
      return st.group.kind == FusedGroup::Kind::Kernel &&
             std::count(st.group.outputs.begin(), st.group.outputs.end(), o) > 0;
    });
    if (made == s.steps.end() || !made->spec.reduce_axes.empty() || g[o].shape() != made->spec.domain) continue;
    const int64_t k = made - s.steps.begin();
    for (NodeId j : g.inputs()) {
      if (last_read[j] > k) continue;
      bool same_index = true;
      for (size_t q = 0; q < made->reads.size(); ++q)
        if (made->reads[q] == j)
          same_index &= made->spec.inputs[q].kind == KernelInput::Kind::Buffer &&
                        dense_over(made->spec.inputs[q].view, made->spec.domain);
      if (same_index) result[i].push_back(j);
    }
  }
  return result;
}

}  // namespace braze
