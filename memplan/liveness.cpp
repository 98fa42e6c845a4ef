#include "memplan/liveness.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "fusion/library_group.h"
#include "graph/check.h"

namespace braze::memplan {

namespace {

// The nodes whose buffers step `k` reads, as the executor binds them.
std::vector<NodeId> buffers_read(const Graph& g, const Step& step) {
  std::vector<NodeId> out;
  if (step.group.kind == FusedGroup::Kind::Library) return library_reads(g, step.group);
  for (size_t k = 0; k < step.reads.size(); ++k)
    if (step.spec.inputs[k].kind == KernelInput::Kind::Buffer) out.push_back(step.reads[k]);
  return out;
}

std::vector<NodeId> buffers_written(const Step& step) {
  return step.group.outputs;
}

}  // namespace

Liveness liveness(const Schedule& s) {
  const Graph& g = s.graph;
  Liveness l;
  l.steps = static_cast<int32_t>(s.steps.size());
  l.user_visible = g.inputs();
  l.user_visible.insert(l.user_visible.end(), g.outputs.begin(), g.outputs.end());
  std::sort(l.user_visible.begin(), l.user_visible.end());
  l.user_visible.erase(std::unique(l.user_visible.begin(), l.user_visible.end()), l.user_visible.end());
  auto visible = [&](NodeId id) { return std::binary_search(l.user_visible.begin(), l.user_visible.end(), id); };

  std::unordered_map<NodeId, size_t> index;  // node -> its entry in l.scratch
  std::unordered_set<NodeId> written_before;
  for (int32_t k = 0; k < l.steps; ++k) {
    const Step& step = s.steps[k];
    for (NodeId r : buffers_read(g, step)) {
      if (auto it = index.find(r); it != index.end()) {
        l.scratch[it->second].last = k;
        continue;
      }
      BRAZE_ASSERT(g[r].op == Op::Input || written_before.count(r), "liveness: step ", k, " reads node ", r, " (",
                   info(g[r].op).name, ") that no earlier step writes");
    }
    std::vector<NodeId> written = buffers_written(step);
    std::sort(written.begin(), written.end());
    for (NodeId w : written) {
      BRAZE_ASSERT(written_before.insert(w).second, "liveness: node ", w, " is written by two steps");
      if (visible(w)) continue;
      int64_t bytes = static_cast<int64_t>(itemsize(g[w].dtype)) * numel(g[w].shape());
      index.emplace(w, l.scratch.size());
      l.scratch.push_back(BufferLife{w, bytes, k, k});
    }
  }
  return l;
}

int64_t lower_bound(const Liveness& l, int64_t alignment) {
  // Alive-bytes per step by a difference array over the lives.
  std::vector<int64_t> delta(static_cast<size_t>(l.steps) + 1, 0);
  for (const BufferLife& b : l.scratch) {
    delta[b.first] += align_up(b.bytes, alignment);
    delta[b.last + 1] -= align_up(b.bytes, alignment);
  }
  int64_t alive = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, alive += d);
  return peak;
}

int64_t no_reuse_bytes(const Liveness& l, int64_t alignment) {
  int64_t total = 0;
  for (const BufferLife& b : l.scratch) total += align_up(b.bytes, alignment);
  return total;
}

}  // namespace braze::memplan
