// The fusion pass pipeline: each pass takes a graph and returns a graph.
#pragma once

#include <string_view>

#include "graph/graph.h"

namespace braze {

// Note [Views sink to the leaves]
// A view of an element-wise result is the element-wise op applied to views
// of its inputs: (x * 2).T == x.T * 2. push_views rewrites every chain of
// movement ops down through element-wise ops until it sits on a leaf (an
// input, a constant, an arange) or on a node that ends an index space (a
// reduction, a library call, a copy). After it, consumers in one kernel
// share one index space and every input is read through its own baked
// strides, so a transposed, sliced or broadcast input costs no copy. An
// element-wise node seen through two different views is computed twice,
// once per view: cheaper than writing it out and reading it back. One
// exception: a broadcast of a value computed from a reduction (a row
// statistic such as rsqrt(var + eps)) stays where it is, so the statistic is
// computed once per row; the partition reads it back over the row.
Graph push_views(const Graph& g);

// A graph output that is a view or a leaf becomes a Copy of it, so every
// output is a value some kernel writes densely.
Graph dense_outputs(const Graph& g);

struct PassEntry {
  std::string_view name;
  Graph (*run)(const Graph&);
};

// In order. Dead nodes disappear on the way: every pass rebuilds the graph
// from its outputs.
inline constexpr PassEntry kPipeline[] = {
    {"dense_outputs", dense_outputs},
    {"push_views", push_views},
};

Graph run_pipeline(Graph g);

}  // namespace braze
