#include "fusion/schedule.h"

#include <sstream>

#include "fusion/library_rules.h"
#include "fusion/passes.h"

namespace braze {

Schedule make_schedule(const Graph& g, const LibraryRules& rules) {
  Schedule s;
  Graph widened = rules.widens ? widened_library_calls(g, rules.widens) : g;
  Graph passed = run_pipeline(rules.convolves ? convolutions_as_matmuls(widened, rules.convolves) : widened);
  if (rules.split) passed = split_reductions(passed, *rules.split);  // Note [Split reductions]
  s.graph = copy_unread_operands(passed, rules);  // Note [Library capabilities]
  Partition p = partition(s.graph, rules);
  for (FusedGroup& grp : p.groups) {
    Step step;
    if (grp.kind == FusedGroup::Kind::Kernel) step.spec = build_spec(s.graph, grp, p.space, p.inlined, step.reads);
    step.group = std::move(grp);
    s.steps.push_back(std::move(step));
  }
  s.unfused = std::move(p.unfused);
  return s;
}

namespace {
std::string node_name(const Graph& g, NodeId id) { return std::string(info(g[id].op).name) + "#" + std::to_string(id); }
}  // namespace

std::string explain_kernel(const Schedule& s, const Step& st) {
  std::ostringstream out;
  out << "kernel " << kernel_key(st.spec).hex() << " fusing";
  for (NodeId id : st.group.nodes) out << " " << node_name(s.graph, id);
  out << "\n";
  std::istringstream text(canonical_text(st.spec));
  for (std::string line; std::getline(text, line);) {
    out << "  " << line;
    if (line.rfind("in", 0) == 0) {
      size_t i = std::stoul(line.substr(2));
      out << "  <- " << node_name(s.graph, st.reads[i]);
    } else if (line.rfind("out", 0) == 0) {
      size_t i = std::stoul(line.substr(3));
      out << "  -> " << node_name(s.graph, st.group.outputs[i]);
    }
    out << "\n";
  }
  return out.str();
}

std::string explain(const Schedule& s) {
  std::ostringstream out;
  size_t kernels = 0;
  for (const Step& st : s.steps) kernels += st.group.kind == FusedGroup::Kind::Kernel;
  out << s.steps.size() << " step(s): " << kernels << " fused kernel(s), " << s.steps.size() - kernels
      << " library call(s)\n";
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& st = s.steps[k];
    out << "\nstep " << k << ": ";
    if (st.group.kind == FusedGroup::Kind::Library) {
      out << "library call " << node_name(s.graph, st.group.nodes[0]) << " " << to_string(st.group.domain) << "\n";
      for (const PostOp& p : st.group.post_ops)
        out << "  post-op " << describe(s.graph, p) << "  -> " << node_name(s.graph, p.result) << "\n";
      continue;
    }
    out << explain_kernel(s, st);
  }
  if (!s.unfused.empty()) out << "\nnot fused:\n";
  for (const UnfusedEdge& e : s.unfused)
    out << "  " << node_name(s.graph, e.producer) << " -> " << node_name(s.graph, e.consumer) << ": " << e.reason
        << "\n";
  return out.str();
}

}  // namespace braze
