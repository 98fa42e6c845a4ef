// `braze plan`: the memory plan the runtime makes for a graph (memplan/):
// each intermediate buffer's live interval, size and arena offset, the
// arena (the peak), the lower bound and the total without reuse.
#include <nlohmann/json.hpp>

#include <ostream>

#include "fusion/schedule.h"
#include "graph/check.h"
#include "memplan/plan.h"
#include "memplan/verify.h"
#include "runtime/dump.h"
#include "runtime/lower.h"
#include "tools/commands.h"
#include "tools/node_names.h"

namespace braze::cli {

namespace {

memplan::Strategy strategy_named(const std::string& name) {
  if (name == "greedy") return memplan::Strategy::GreedyBySize;
  BRAZE_CHECK(name == "heap", "plan: unknown strategy '", name, "' (greedy, heap)");
  return memplan::Strategy::HeapBestFit;
}

nlohmann::json to_json(const Schedule& s, const memplan::Liveness& l, const memplan::MemoryPlan& p) {
  nlohmann::json buffers = nlohmann::json::array();
  for (size_t i = 0; i < p.buffers.size(); ++i)
    buffers.push_back({{"node", node_name(s.graph, p.buffers[i].node)},
                       {"workspace", l.scratch[i].workspace},  // a library call's, not the node's value
                       {"first_step", l.scratch[i].first},
                       {"last_step", l.scratch[i].last},
                       {"bytes", l.scratch[i].bytes},
                       {"reserved", p.buffers[i].bytes},
                       {"offset", p.buffers[i].offset}});
  int64_t bound = memplan::lower_bound(l, p.alignment);
  return {{"strategy", memplan::name(p.strategy)},
          {"alignment", p.alignment},
          {"steps", l.steps},
          {"buffers", buffers},
          {"arena_bytes", p.arena_bytes},
          {"lower_bound_bytes", bound},
          {"no_reuse_bytes", memplan::no_reuse_bytes(l, p.alignment)}};
}

}  // namespace

void show_plan(const GraphSource& src, const PlanOptions& options, std::ostream& out) {
  BRAZE_CHECK(options.format == "text" || options.format == "json", "plan: unknown format '", options.format,
              "' (text, json)");
  BRAZE_CHECK(options.alignment > 0 && (options.alignment & (options.alignment - 1)) == 0,
              "plan: --alignment ", options.alignment, " is not a power of two");
  Schedule s = realize_schedule(src.graph);  // what realize plans
  memplan::Liveness l = memplan::liveness(s);
  memplan::MemoryPlan p =
      memplan::plan_memory(l, {.alignment = options.alignment, .strategy = strategy_named(options.strategy)});
  memplan::verify_plan(l, p);  // what the runtime does with every plan
  if (options.format == "json") {
    out << to_json(s, l, p).dump(1) << "\n";
    return;
  }
  out << plan_text(s, l, p);  // what BRAZE_DUMP=plan writes
}

}  // namespace braze::cli
