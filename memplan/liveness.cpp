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

// Element i of the view is element i of a dense buffer of the domain.
bool reads_at_output_index(const View& v, const Shape& domain) {
  if (v.shape != domain || v.offset != 0 || v.windowed()) return false;
  int64_t stride = 1;
  for (int64_t a = v.rank() - 1; a >= 0; --a) {
    if (v.shape[a] != 1 && v.strides[a] != stride) return false;
    stride *= v.shape[a];
  }
  return true;
}

// Note [In-place outputs]: which output of each element-wise step may take
// over which dead input.
void find_in_place(const Schedule& s, Liveness& l, const std::unordered_map<NodeId, size_t>& index) {
  const Graph& g = s.graph;
  std::unordered_set<size_t> taken;
  for (int32_t k = 0; k < l.steps; ++k) {
    const Step& step = s.steps[k];
    if (step.group.kind == FusedGroup::Kind::Library || !step.spec.reduce_axes.empty()) continue;
    for (size_t o = 0; o < step.group.outputs.size(); ++o) {
      auto wi = index.find(step.group.outputs[o]);
      if (wi == index.end() || step.spec.outputs[o].space != Space::Full) continue;
      BufferLife& w = l.scratch[wi->second];
      if (w.bytes == 0 || numel(step.spec.domain) != numel(g[w.node].shape())) continue;
      for (size_t j = 0; j < step.reads.size() && w.in_place_of < 0; ++j) {
        auto ri = index.find(step.reads[j]);
        if (step.spec.inputs[j].kind != KernelInput::Kind::Buffer || ri == index.end() || taken.count(ri->second))
          continue;
        const BufferLife& r = l.scratch[ri->second];
        if (r.last != k || r.bytes != w.bytes || itemsize(g[r.node].dtype) != itemsize(g[w.node].dtype)) continue;
        bool same_index = true;
        for (size_t j2 = 0; j2 < step.reads.size(); ++j2)
          if (step.reads[j2] == r.node && step.spec.inputs[j2].kind == KernelInput::Kind::Buffer)
            same_index = same_index && reads_at_output_index(step.spec.inputs[j2].view, step.spec.domain);
        if (!same_index) continue;
        w.in_place_of = static_cast<int32_t>(ri->second);
        taken.insert(ri->second);
      }
    }
  }
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
    if (step.workspace_bytes > 0)  // Note [Step workspaces]
      l.scratch.push_back(BufferLife{step.group.outputs[0], step.workspace_bytes, k, k, -1, /*workspace=*/true});
  }
  find_in_place(s, l, index);
  return l;
}

Liveness merge_in_place(const Liveness& l, std::vector<size_t>* chain_of) {
  Liveness m;
  m.steps = l.steps;
  m.user_visible = l.user_visible;
  std::vector<size_t> chain(l.scratch.size());
  for (size_t i = 0; i < l.scratch.size(); ++i) {
    const BufferLife& b = l.scratch[i];
    // A predecessor is written by an earlier step, so it comes earlier here.
    BRAZE_ASSERT(b.in_place_of < static_cast<int32_t>(i), "merge_in_place: node ", b.node,
                 " is in place of a later buffer");
    if (b.in_place_of < 0) {
      chain[i] = m.scratch.size();
      m.scratch.push_back(BufferLife{b.node, b.bytes, b.first, b.last, -1, b.workspace});
    } else {
      chain[i] = chain[b.in_place_of];
      BufferLife& c = m.scratch[chain[i]];
      c.last = std::max(c.last, b.last);
    }
  }
  if (chain_of) *chain_of = std::move(chain);
  return m;
}

int64_t lower_bound(const Liveness& lives, int64_t alignment) {
  Liveness l = merge_in_place(lives);
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
