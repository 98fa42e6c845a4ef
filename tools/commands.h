// The subcommands, each a function from its options to text on `out`.
// They throw std::exception subclasses on bad input; run_cli turns those
// into a one-line reason and an exit code.
#pragma once

#include <iosfwd>
#include <string>

#include "tools/graph_source.h"

namespace braze::cli {

// `braze graph`: nodes, shapes and dtypes. format: text, json, dot.
void show_graph(const GraphSource& src, const std::string& format, std::ostream& out);

// `braze fuse`: the fused groups and every edge not fused, with why.
// format: text (explain()), json.
void show_fusion(const GraphSource& src, const std::string& format, std::ostream& out);

// `braze kernels --target cpu`: per kernel, its fused text and its x86-64
// assembly for `isa` ("avx2", "avx512"; "" = what this CPU would run).
// format: text, json.
void show_kernels(const GraphSource& src, const std::string& isa, const std::string& format, std::ostream& out);

}  // namespace braze::cli
