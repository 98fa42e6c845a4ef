// Kernel specs for the CUDA tests: every element-wise op of the op table
// in every dtype it accepts and in several layouts, every reduction, the
// composites, and the random graphs of the differential fuzzer, deduplicated
// by key.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fusion/schedule.h"
#include "runtime/braze.h"
#include "runtime/lower.h"
#include "tests/cpp/random_graph.h"
#include "tests/cpp/random_tensor.h"

namespace braze::testing {

class SpecCollection {
 public:
  // Adds every kernel step of the graph's schedule; returns how many were new.
  int add(const Graph& g) {
    int fresh = 0;
    for (const Step& step : make_schedule(g).steps) {
      if (step.group.kind != FusedGroup::Kind::Kernel) continue;
      if (specs_.emplace(kernel_key(step.spec).hex(), step.spec).second) ++fresh;
      for (const KernelOp& op : step.spec.body) ops_[std::string(info(op.op).name)]++;
    }
    return fresh;
  }
  void add(const std::vector<Tensor>& roots) { add(lower(roots).graph); }

  const std::map<std::string, KernelSpec>& specs() const { return specs_; }
  const std::map<std::string, int>& ops_seen() const { return ops_; }

 private:
  std::map<std::string, KernelSpec> specs_;  // by key: deterministic order
  std::map<std::string, int> ops_;
};

// A [3, 5] input of `t` read in one of four layouts: contiguous, transposed
// (from [5, 3]), broadcast (from [1, 5]), sliced with step 2 (from [6, 5]).
inline NodeId input_in_layout(Graph& g, DType t, int layout) {
  switch (layout) {
    case 1: return g.apply(Op::Permute, {g.input(t, {5, 3})}, Attr{{1, 0}, {}});
    case 2: return g.broadcast_to(g.input(t, {1, 5}), {3, 5});
    case 3: return g.apply(Op::Slice, {g.input(t, {6, 5})}, Attr{{1, 0, 2, 1, 3, 5}, {}});
    default: return g.input(t, {3, 5});
  }
}

// One graph per element-wise op x dtype that infer() accepts; the layout
// turns with the dtype, so each op meets every layout over its dtypes
// (all 4 x 9 combinations are 4x the NVRTC time for little more coverage:
// the loads differ by dtype, the index math by layout). `all_layouts`
// takes every combination.
inline void add_elementwise_ops(SpecCollection& c, bool all_layouts = false) {
  for (size_t o = 0; o < std::size(kOpInfo); ++o) {
    Op op = static_cast<Op>(o);
    if (!is_elementwise(op)) continue;
    for (DType t : kAllDTypes) {
      for (int layout = 0; layout < 4; ++layout) {
        if (!all_layouts && layout != static_cast<int>(t) % 4) continue;
        Graph g;
        try {
          std::vector<NodeId> args;
          int arity = info(op).arity;
          for (int k = 0; k < arity; ++k) {
            DType dt = op == Op::Where && k == 0 ? DType::Bool : t;
            args.push_back(k == 1 && layout == 2 ? g.constant(t, 2.0) : input_in_layout(g, dt, (layout + k) % 4));
          }
          Attr attr;
          if (op == Op::Cast) attr.ints = {static_cast<int64_t>(kAllDTypes[(static_cast<int>(t) + 3 + layout) % 9])};
          g.outputs.push_back(g.apply(op, args, attr));
        } catch (const std::exception&) {
          continue;  // a dtype the op does not take
        }
        c.add(g);
      }
    }
  }
}

// Casts between every pair of dtypes.
inline void add_casts(SpecCollection& c) {
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes) {
      Graph g;
      g.outputs.push_back(g.apply(Op::Cast, {g.input(from, {4, 9})}, Attr{{static_cast<int64_t>(to)}, {}}));
      c.add(g);
    }
}

// Every reduction over rows, columns and everything, in every dtype, alone
// and with an epilogue that reads the result back per element; and over
// few long columns ([200, 7] over axis 0: split across a block's threads).
inline void add_reductions(SpecCollection& c) {
  for (Op op : {Op::Sum, Op::Prod, Op::Max, Op::Min, Op::ArgMax, Op::ArgMin})
    for (DType t : kAllDTypes)
      for (std::vector<int64_t> axes : {std::vector<int64_t>{1}, {0}, {0, 1}, {0, 2}, {2}, {}}) {
        Graph g;
        try {
          Shape shape = axes.empty() ? Shape{200, 7} : Shape{6, 33, 5};
          if (axes.empty()) axes = {0};
          NodeId x = g.input(t, shape);
          NodeId r = g.apply(op, {x}, Attr{axes, {}});
          g.outputs.push_back(r);
          if (op == Op::Max || op == Op::Sum) g.outputs.push_back(g.apply(Op::Sub, {x, g.broadcast_to(r, shape)}));
        } catch (const std::exception&) {
          continue;
        }
        c.add(g);
      }
}

inline void add_composites(SpecCollection& c) {
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
    Tensor x = astype(random_tensor({8, 300}, 1), t);
    Tensor w = astype(random_tensor({300}, 2), t);
    c.add({softmax(x), log_softmax(x), layer_norm(x, w, w), rms_norm(x, w), logsumexp(x, Axes{{-1}}),
           var(x, Axes{{0}}), gelu(x), gelu(x, "tanh"), silu(x), softmax(x, 0), std(x, Axes{{-1}}, 1.0)});
  }
  Tensor logits = random_tensor({16, 10}, 3);
  c.add({cross_entropy(logits, astype(arange(0, 16) % 10, DType::Int64)), mse_loss(logits, logits * 0.5)});
  c.add({arange(0, 100) * 2.0 + 1.0, sum(arange(0, 7), Axes{{0}})});
}

inline void add_random_graphs(SpecCollection& c, uint32_t count) {
  for (uint32_t seed = 0; seed < count; ++seed) {
    std::vector<Array> inputs;
    c.add(RandomGraph(seed).build(inputs));
  }
}

}  // namespace braze::testing
