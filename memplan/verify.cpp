#include "memplan/verify.h"

#include <algorithm>
#include <numeric>

#include "graph/check.h"

namespace braze::memplan {

namespace {

std::string describe(const BufferLife& b, const Placement& at) {
  return detail::concat(b.workspace ? "the workspace of node " : "node ", b.node, " (steps ", b.first, "..", b.last, ", bytes [", at.offset, ", ",
                        at.offset + b.bytes, "))");
}

// The one overlap Note [In-place outputs] allows: `later` is written over
// `earlier` in place, at the same offset with the same bytes, and
// `earlier`'s last read is the step that writes `later`.
bool in_place_pair(const Liveness& l, const MemoryPlan& p, size_t earlier, size_t later) {
  const BufferLife &a = l.scratch[earlier], &b = l.scratch[later];
  if (b.in_place_of != static_cast<int32_t>(earlier)) return false;
  return a.last == b.first && a.bytes == b.bytes && p.buffers[earlier].offset == p.buffers[later].offset;
}

}  // namespace

std::string plan_problem(const Liveness& l, const MemoryPlan& p) {
  if (p.buffers.size() != l.scratch.size())
    return detail::concat("the plan places ", p.buffers.size(), " buffers but the schedule has ", l.scratch.size(),
                          " scratch buffers");
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferLife& b = l.scratch[i];
    const Placement& at = p.buffers[i];
    if (at.node != b.node)
      return detail::concat("placement ", i, " is for node ", at.node, " but scratch buffer ", i, " is node ", b.node);
    if (at.bytes < b.bytes) return detail::concat(describe(b, at), " reserves only ", at.bytes, " bytes");
    if (at.offset < 0 || at.offset % p.alignment != 0)
      return detail::concat(describe(b, at), " is not aligned to ", p.alignment, " bytes");
    if (at.offset + b.bytes > p.arena_bytes)
      return detail::concat(describe(b, at), " ends past the arena of ", p.arena_bytes, " bytes");
    if (b.workspace && (b.first != b.last || b.in_place_of >= 0))
      return detail::concat(describe(b, at), " is a step's workspace but lives past its step or is written in place");
    if (!b.workspace && std::binary_search(l.user_visible.begin(), l.user_visible.end(), b.node))
      return detail::concat(describe(b, at), " is user-visible (a graph input or output) but placed in the arena");
    if (b.in_place_of >= static_cast<int32_t>(i))
      return detail::concat(describe(b, at), " is in place of scratch buffer ", b.in_place_of, ", not an earlier one");
  }
  // Sweep by first step: each buffer is checked against those born no later
  // that are still alive when it is born. Zero-size buffers occupy nothing.
  std::vector<size_t> order(l.scratch.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return l.scratch[a].first < l.scratch[b].first; });
  std::vector<size_t> alive;
  for (size_t i : order) {
    const BufferLife& b = l.scratch[i];
    std::erase_if(alive, [&](size_t j) { return l.scratch[j].last < b.first; });
    if (b.bytes == 0) continue;
    int64_t lo = p.buffers[i].offset, hi = lo + b.bytes;
    for (size_t j : alive) {
      int64_t lo2 = p.buffers[j].offset, hi2 = lo2 + l.scratch[j].bytes;
      if (lo < hi2 && lo2 < hi && !in_place_pair(l, p, j, i))
        return detail::concat(describe(l.scratch[j], p.buffers[j]), " and ", describe(b, p.buffers[i]),
                              " are alive together at step ", b.first, " and overlap in the arena");
    }
    alive.push_back(i);
  }
  return "";
}

void verify_plan(const Liveness& l, const MemoryPlan& p) {
  std::string problem = plan_problem(l, p);
  BRAZE_ASSERT(problem.empty(), "memory plan (", name(p.strategy), "): ", problem);
}

}  // namespace braze::memplan
