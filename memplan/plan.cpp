#include "memplan/plan.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <sstream>

#include "graph/check.h"

namespace braze::memplan {

const char* name(Strategy s) {
  switch (s) {
    case Strategy::GreedyBySize: return "greedy_by_size";
    case Strategy::HeapBestFit: return "heap_best_fit";
  }
  return "?";
}

namespace {

// Indices of the scratch buffers, largest first; ties by first write, then
// by position: deterministic.
std::vector<size_t> largest_first(const Liveness& l, const std::vector<size_t>& subset) {
  std::vector<size_t> order = subset;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const BufferLife &x = l.scratch[a], &y = l.scratch[b];
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    return x.first < y.first;
  });
  return order;
}

std::vector<size_t> all_indices(const Liveness& l) {
  std::vector<size_t> v(l.scratch.size());
  std::iota(v.begin(), v.end(), size_t{0});
  return v;
}

void greedy_by_size(const Liveness& l, MemoryPlan& p) {
  std::vector<size_t> placed;  // kept sorted by offset
  for (size_t i : largest_first(l, all_indices(l))) {
    Placement& me = p.buffers[i];
    if (me.bytes == 0) continue;  // occupies nothing: offset 0, conflicts with nobody
    int64_t offset = 0;
    for (size_t j : placed) {  // in offset order: slide up past each conflict in the way
      const Placement& other = p.buffers[j];
      if (!lives_overlap(l.scratch[i], l.scratch[j])) continue;
      if (offset + me.bytes <= other.offset) break;  // fits in the gap below `other`
      offset = std::max(offset, other.offset + other.bytes);
    }
    me.offset = offset;
    auto at = std::upper_bound(placed.begin(), placed.end(), offset,
                               [&](int64_t o, size_t j) { return o < p.buffers[j].offset; });
    placed.insert(at, i);
    p.arena_bytes = std::max(p.arena_bytes, offset + me.bytes);
  }
}

void heap_best_fit(const Liveness& l, MemoryPlan& p) {
  std::vector<std::vector<size_t>> born(l.steps), dying(l.steps);
  for (size_t i = 0; i < l.scratch.size(); ++i) {
    if (p.buffers[i].bytes == 0) continue;
    born[l.scratch[i].first].push_back(i);
    dying[l.scratch[i].last].push_back(i);
  }
  std::map<int64_t, int64_t> free;  // offset -> size; adjacent blocks are merged
  int64_t top = 0;
  auto release = [&](int64_t offset, int64_t bytes) {
    auto next = free.lower_bound(offset);
    if (next != free.end() && offset + bytes == next->first) {
      bytes += next->second;
      next = free.erase(next);
    }
    if (next != free.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        prev->second += bytes;
        return;
      }
    }
    free.emplace(offset, bytes);
  };
  for (int32_t k = 0; k < l.steps; ++k) {
    if (k > 0)
      for (size_t i : dying[k - 1]) release(p.buffers[i].offset, p.buffers[i].bytes);
    for (size_t i : largest_first(l, born[k])) {
      Placement& me = p.buffers[i];
      auto best = free.end();
      for (auto it = free.begin(); it != free.end(); ++it)
        if (it->second >= me.bytes && (best == free.end() || it->second < best->second)) best = it;
      if (best != free.end()) {
        me.offset = best->first;
        int64_t rest = best->second - me.bytes;
        free.erase(best);
        if (rest > 0) free.emplace(me.offset + me.bytes, rest);
        continue;
      }
      // Nothing holds it: a free block at the top grows, else the top does.
      auto last = free.empty() ? free.end() : std::prev(free.end());
      if (last != free.end() && last->first + last->second == top) {
        me.offset = last->first;
        free.erase(last);
      } else {
        me.offset = top;
      }
      top = me.offset + me.bytes;
    }
  }
  p.arena_bytes = top;
}

}  // namespace

MemoryPlan plan_memory(const Liveness& lives, const PlanOptions& options) {
  if (!options.in_place) {
    Liveness separate = lives;
    for (BufferLife& b : separate.scratch) b.in_place_of = -1;
    return plan_memory(merge_in_place(separate), {options.alignment, options.strategy, true});
  }
  // Each in-place chain is placed as one buffer, then every member gets its offset.
  std::vector<size_t> chain_of;
  Liveness l = merge_in_place(lives, &chain_of);
  BRAZE_ASSERT(options.alignment > 0 && (options.alignment & (options.alignment - 1)) == 0,
               "plan_memory: alignment ", options.alignment, " is not a power of two");
  MemoryPlan p;
  p.alignment = options.alignment;
  p.strategy = options.strategy;
  for (const BufferLife& b : l.scratch) {
    BRAZE_ASSERT(b.bytes >= 0 && 0 <= b.first && b.first <= b.last && b.last < l.steps, "plan_memory: node ",
                 b.node, " has life [", b.first, ", ", b.last, "] and ", b.bytes, " bytes in a schedule of ",
                 l.steps, " steps");
    p.buffers.push_back(Placement{b.node, 0, align_up(b.bytes, options.alignment)});
  }
  switch (options.strategy) {
    case Strategy::GreedyBySize: greedy_by_size(l, p); break;
    case Strategy::HeapBestFit: heap_best_fit(l, p); break;
  }
  std::vector<Placement> chains = std::move(p.buffers);
  p.buffers.clear();
  for (size_t i = 0; i < lives.scratch.size(); ++i)
    p.buffers.push_back(Placement{lives.scratch[i].node, chains[chain_of[i]].offset, chains[chain_of[i]].bytes});
  return p;
}

std::string to_string(const Liveness& l, const MemoryPlan& p) {
  std::ostringstream out;
  out << "memory plan (" << name(p.strategy) << ", alignment " << p.alignment << "): " << p.buffers.size()
      << " scratch buffer(s) over " << l.steps << " step(s)\n";
  for (size_t i = 0; i < p.buffers.size(); ++i)
    out << "  #" << p.buffers[i].node << (l.scratch[i].workspace ? " workspace" : "") << "  steps " << l.scratch[i].first << ".." << l.scratch[i].last << "  "
        << l.scratch[i].bytes << " B  at " << p.buffers[i].offset << "\n";
  out << "  arena " << p.arena_bytes << " B, lower bound " << lower_bound(l, p.alignment) << " B, no reuse "
      << no_reuse_bytes(l, p.alignment) << " B\n";
  return out.str();
}

std::string explain_plan(const Schedule& s, const PlanOptions& options) {
  Liveness l = liveness(s);
  return to_string(l, plan_memory(l, options));
}

}  // namespace braze::memplan
