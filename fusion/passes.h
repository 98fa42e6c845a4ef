// The fusion pass pipeline: each pass takes a graph and returns a graph.
#pragma once

#include <functional>
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

// Note [Constant folding] (fusion/fold_constants.cpp): an element-wise op
// on constants becomes the constant the reference would store, where every
// backend computes that same value.
Graph fold_constants(const Graph& g);

// Note [Exact simplification] (fusion/simplify.cpp): rewrites such as
// x * 1 -> x that give the same bits for every input, NaN, infinities and
// signed zeros included.
Graph simplify(const Graph& g);

// Note [Dead nodes] (fusion/eliminate_dead.cpp): drops what no output reads.
Graph eliminate_dead(const Graph& g);

// A graph output that is a view or a leaf becomes a Copy of it, so every
// output is a value some kernel writes densely.
Graph dense_outputs(const Graph& g);

// Rebuilds the nodes of `g` that its outputs reach, in topological order:
// `rewrite` gets each with its inputs already renumbered into `out` and
// returns its id there (`out.add(n)` keeps it as it is). Every input keeps
// its number, read or not. What the local passes are made of.
Graph rewrite_nodes(const Graph& g, const std::function<NodeId(Graph& out, const Node& n)>& rewrite);

struct PassEntry {
  std::string_view name;
  Graph (*run)(const Graph&);
};

// In order. Folding first: it turns constant subexpressions into the
// constants that simplify's rules look for. eliminate_dead then drops the
// leaves those rewrites left unread (the 1 of x * 1), before dense_outputs
// gives every output a dense value and push_views sinks the views, which
// both want the final set of outputs and values.
inline constexpr PassEntry kPipeline[] = {
    {"fold_constants", fold_constants},
    {"simplify", simplify},
    {"eliminate_dead", eliminate_dead},
    {"dense_outputs", dense_outputs},
    {"push_views", push_views},
};

Graph run_pipeline(Graph g);

}  // namespace braze
