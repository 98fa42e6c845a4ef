// `--expr`: a short expression typed on the command line, recorded with
// the runtime's C++ API into a graph. The grammar is in docs/cli.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "graph/graph.h"
#include "runtime/tensor.h"

namespace braze::cli {

// A named input, declared as "x:f32[4096,4096]" (dtype as parse_dtype
// reads it; "[]" is a scalar).
struct ExprInput {
  std::string name;
  DType dtype;
  Shape shape;
};
ExprInput parse_input_decl(std::string_view decl);

struct ExprGraph {
  Graph graph;
  std::vector<std::string> input_names;  // by input number: the order the expression first uses them
};
// Throws std::invalid_argument naming the position and what was expected,
// an unknown function or name, or the op's own shape or dtype error.
ExprGraph graph_of_expression(std::string_view text, const std::vector<ExprInput>& inputs);

// --- the function table (expr_functions.cpp) --------------------------------

struct Word {
  std::string text;  // a name that is not an input (f32, tanh) or a 'string'
};
// What an argument can be: None, a tensor, a number, a list of integers, a word.
using Value = std::variant<std::monostate, Tensor, Scalar, std::vector<int64_t>, Word>;

struct CallArgs {
  std::vector<Value> positional;
  std::map<std::string, Value> keyword;
};

// Calls function `name` of the expression language; throws for an unknown
// name or arguments it does not take.
Tensor call_function(const std::string& name, CallArgs args);
// Every function name, sorted (for error messages and docs/cli.md's test).
std::vector<std::string> function_names();

}  // namespace braze::cli
