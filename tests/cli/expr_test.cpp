// The `--expr` language (docs/cli.md): every op of the op table is
// reachable, operators follow Python's precedence, and a bad expression is
// a one-line error through the CLI.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "runtime/braze.h"
#include "tools/cli.h"
#include "tools/expr.h"

namespace braze::cli {
namespace {

const std::vector<ExprInput> kInputs = {
    {"x", DType::Float32, {3, 4}}, {"y", DType::Float32, {3, 4}}, {"v", DType::Float32, {4}},
    {"c", DType::Bool, {3, 4}},    {"img", DType::Float32, {1, 2, 5, 5}}, {"w", DType::Float32, {3, 2, 3, 3}},
    {"labels", DType::Int64, {3}},       {"i", DType::Int32, {3, 4}},     {"j", DType::Int32, {3, 4}},
};

bool has_op(const Graph& g, Op op) {
  for (const Node& n : g.nodes())
    if (n.op == op) return true;
  return false;
}

// An expression that records each op whose builder is written by hand;
// Auto rows are called by their api name with as many inputs as their arity.
const std::map<Op, std::string> kHandExamples = {
    {Op::Input, "exp(x)"},
    {Op::Const, "x + 1.5"},
    {Op::Arange, "x + arange(4)"},
    {Op::Cast, "astype(x, f16)"},
    {Op::Expand, "broadcast_to(v, [3, 4])"},
    {Op::Reshape, "reshape(x, [4, 3]) * 2"},
    {Op::Permute, "exp(transpose(x))"},
    {Op::Slice, "exp(slice(x, axis=1, start=1, stop=4, step=2))"},
    {Op::Pad, "exp(pad(x, before=[1, 0], after=[0, 2]))"},
    {Op::Sum, "sum(x, axis=1)"},
    {Op::Prod, "prod(x, axis=[0, 1])"},
    {Op::Max, "max(x, axis=0, keepdims=True)"},
    {Op::Min, "min(x)"},
    {Op::ArgMax, "argmax(x, axis=1)"},
    {Op::ArgMin, "argmin(x, 0)"},
    {Op::MatMul, "x @ transpose(y)"},
    {Op::Conv2d, "conv2d(img, w, padding=1)"},
};

TEST(Expr, EveryOpOfTheTableIsReachable) {
  for (const OpInfo& info : kOpInfo) {
    Op op = *op_from_name(info.name);
    std::string expr;
    if (info.builder == Builder::Auto) {
      const char* args[] = {"", "(x)", "(x, y)", "(c, x, y)"};
      const char* int_args[] = {"", "(i)", "(i, j)", ""};  // the bitwise ops take no floats
      const bool ints = info.dtype_rule == DTypeRule::Bitwise || info.dtype_rule == DTypeRule::Shift;
      expr = std::string(info.api) + (ints ? int_args : args)[info.arity];
    } else {
      auto it = kHandExamples.find(op);
      ASSERT_NE(it, kHandExamples.end()) << "no --expr example for " << info.name << ": add one, and to docs/cli.md";
      expr = it->second;
    }
    ExprGraph g = graph_of_expression(expr, kInputs);
    EXPECT_TRUE(has_op(g.graph, op)) << expr << " records no " << info.name;
  }
}

// Python's precedence: ** over unary minus over * / % @ over + - over
// comparisons; ** is right-associative. Checked by value.
TEST(Expr, OperatorsFollowPythonPrecedence) {
  std::vector<ExprInput> one = {{"a", DType::Float32, {}}};
  struct Case {
    std::string expr;
    double want;  // with a = 2
  };
  for (const Case& c : std::vector<Case>{{"1 + a * 3", 7},
                                          {"(1 + a) * 3", 9},
                                          {"-a ** 2", -4},
                                          {"a ** 3 ** 2", 512},
                                          {"a * 2 ** -1", 1},
                                          {"10 - a - 3", 5},
                                          {"a / 4 * 2", 1},
                                          {"7 % a + 0 * a", 1},
                                          {"where(a * 2 > 3, 1.5e1, -a)", 15},
                                          {"maximum(a, 5) - minimum(a, -1)", 6},
                                          {"sum(reshape(a, [1]) + arange(3))", 9}}) {
    ExprGraph g = graph_of_expression(c.expr, one);
    std::vector<Tensor> out = lift(g.graph, std::vector<Array>{from_vector<float>({2.0f}, {}).data()});
    EXPECT_DOUBLE_EQ(astype(out.at(0), DType::Float64).item(), c.want) << c.expr;
  }
}

TEST(Expr, InputsAreNumberedInOrderOfFirstUse) {
  ExprGraph g = graph_of_expression("v + x * 2", kInputs);
  EXPECT_EQ(g.input_names, (std::vector<std::string>{"v", "x"}));
}

TEST(Expr, InputDeclarations) {
  ExprInput in = parse_input_decl("x:f32[4096,4096]");
  EXPECT_EQ(in.name, "x");
  EXPECT_EQ(in.dtype, DType::Float32);
  EXPECT_EQ(in.shape, (Shape{4096, 4096}));
  EXPECT_EQ(parse_input_decl("s:int64[]").shape, Shape{});
  for (std::string bad : {"x", "x:f32", ":f32[3]", "x:f32[3", "x:f32[-1]", "x:f32[a]", "x y:f32[3]", "x:f99[3]"})
    EXPECT_THROW(parse_input_decl(bad), std::invalid_argument) << bad;
}

TEST(Expr, BadExpressionsAreOneLineErrorsThroughTheCli) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"graph", "--expr", "frob(x)", "--input", "x:f32[3]"}, "unknown function 'frob'"},
           {{"fuse", "--expr", "exp(z)", "--input", "x:f32[3]"}, "unknown name 'z'"},
           {{"kernels", "--expr", "x +", "--input", "x:f32[3]"}, "column 4: unexpected end"},
           {{"run", "--expr", "x + y", "--input", "x:f32[3]", "--input", "y:f32[4]"}, "do not broadcast"},
           {{"graph", "--expr", "sum(x, axs=0)", "--input", "x:f32[3]"}, "sum: unknown argument 'axs'"},
           {{"graph", "--expr", "exp(x, x)", "--input", "x:f32[3]"}, "exp: takes at most 1 positional"},
           {{"graph", "--expr", "softmax(x", "--input", "x:f32[3]"}, "expected ')'"},
           {{"graph", "--expr", "exp(x))", "--input", "x:f32[3]"}, "unexpected ')'"},
           {{"graph", "--expr", "1 + 2"}, "must be a tensor"},
           {{"graph", "--expr", "exp(x)", "--input", "x:f32[3]", "--input", "x:f32[3]"}, "declared twice"},
           {{"graph", "g.json", "--expr", "exp(x)"}, "not both"},
           {{"graph", "g.json", "--input", "x:f32[3]"}, "--input declares an input of --expr"},
       }) {
    std::ostringstream out, err;
    int code = run_cli(c.args, out, err);
    std::string e = err.str();
    EXPECT_EQ(code, 1) << c.says << ": " << e;
    EXPECT_NE(e.find(c.says), std::string::npos) << e;
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    EXPECT_TRUE(out.str().empty()) << out.str();
  }
}

TEST(Expr, SoftmaxFromTheCommandLineIsOneKernel) {
  std::ostringstream out, err;
  std::vector<std::string> args = {"fuse", "--expr", "softmax(x, axis=-1)", "--input", "x:f32[4096,4096]"};
  ASSERT_EQ(run_cli(args, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("1 fused kernel(s)"), std::string::npos) << out.str();
  std::ostringstream run_out, run_err;
  args = {"run", "--expr", "layer_norm(x) + relu(v)", "--input", "x:f32[3,4]", "--input", "v:f32[4]", "--repeat", "1"};
  ASSERT_EQ(run_cli(args, run_out, run_err), 0) << run_err.str();
  EXPECT_NE(run_out.str().find("match the reference"), std::string::npos) << run_out.str();
}

}  // namespace
}  // namespace braze::cli
