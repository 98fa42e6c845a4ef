// The JSON graph format (graph/serialize.h, docs/graph-format.md): a graph
// holding every op of the table survives a round trip node for node, and bad
// files are rejected with a message that says what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "graph/reference.h"
#include "graph/serialize.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::contains;
using testing::error_of;
using testing::make_array;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct EveryOp {
  Graph graph;
  std::vector<Array> inputs;
};

// One node of every op in graph/ops.def (found by iterating the table), all
// of them outputs. Fails loudly for an op it does not know how to build.
EveryOp every_op_graph() {
  EveryOp e;
  Graph& g = e.graph;
  NodeId x = g.input(DType::Float32, {2, 3});
  NodeId y = g.input(DType::Float32, {3});
  NodeId c = g.input(DType::Bool, {2, 3});
  NodeId img = g.input(DType::Float32, {1, 2, 5, 5});
  NodeId w = g.input(DType::Float32, {3, 2, 3, 3});
  e.inputs.push_back(make_array(DType::Float32, {2, 3}, {1, -2, 3.5, 0, 1e-3, -7}));
  e.inputs.push_back(make_array(DType::Float32, {3}, {0.5, 2, -1}));
  e.inputs.push_back(make_array(DType::Bool, {2, 3}, {1, 0, 0, 1, 1, 0}));
  std::vector<double> pixels(50), weights(54);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<double>(i % 7) - 3;
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<double>(i % 5) * 0.25;
  e.inputs.push_back(make_array(DType::Float32, {1, 2, 5, 5}, pixels));
  e.inputs.push_back(make_array(DType::Float32, {3, 2, 3, 3}, weights));

  for (size_t i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<Op>(i);
    const OpInfo& oi = info(op);
    std::vector<NodeId> made;
    switch (oi.kind) {
      case FusionKind::Leaf:
        if (op == Op::Input) made = {x};
        else if (op == Op::Const)  // non-finite reals travel as strings
          made = {g.constant(DType::Float32, 0.5), g.constant(DType::Float32, kNaN),
                  g.constant(DType::Float64, -kInf), g.constant(DType::Float16, kInf),
                  g.constant(DType::Float32, -0.0), g.constant_int(DType::Int32, -3),
                  g.constant_int(DType::Int64, (int64_t{1} << 60) + 1), g.constant_int(DType::Bool, 1)};
        else if (op == Op::Arange) made = {g.arange(DType::Float32, 3, 0.5, 0.25), g.arange(DType::Int64, 4, 7, -2)};
        break;
      case FusionKind::ElemWise: {
        // The bitwise ops take no floats: x and y as int32.
        const bool ints = oi.dtype_rule == DTypeRule::Bitwise || oi.dtype_rule == DTypeRule::Shift;
        auto as_int = [&](NodeId v) {
          return ints ? g.apply(Op::Cast, {v}, Attr{{static_cast<int64_t>(DType::Int32)}, {}}) : v;
        };
        if (op == Op::Cast) made = {g.apply(op, {x}, Attr{{static_cast<int64_t>(DType::Float16)}, {}})};
        else if (oi.arity == 1) made = {g.apply(op, {as_int(x)})};
        else if (oi.arity == 2) made = {g.apply(op, {as_int(x), as_int(y)})};
        else if (oi.arity == 3) made = {g.apply(op, {c, x, y})};
        break;
      }
      case FusionKind::Broadcast:
      case FusionKind::View:
        if (op == Op::Expand) made = {g.apply(op, {x}, Attr{{4, 2, 3}, {}})};
        else if (op == Op::Reshape) made = {g.apply(op, {x}, Attr{{3, 2}, {}})};
        else if (op == Op::Permute) made = {g.apply(op, {x}, Attr{{1, 0}, {}})};
        else if (op == Op::Slice) made = {g.apply(op, {x}, Attr{{1, 2, -1, -2, 2, 2}, {}})};
        else if (op == Op::Pad) made = {g.apply(op, {x}, Attr{{1, 0, 2, 3}, {}})};
        break;
      case FusionKind::Reduce: made = {g.apply(op, {x}, Attr{{1}, {}})}; break;
      case FusionKind::Opaque:
        if (op == Op::MatMul) made = {g.apply(op, {x, g.apply(Op::Permute, {x}, Attr{{1, 0}, {}})})};
        else if (op == Op::Conv2d) made = {g.apply(op, {img, w}, Attr{{1, 1, 1, 1, 1, 1, 1}, {}})};
        break;
    }
    if (made.empty()) ADD_FAILURE() << oi.name << ": serialize_test.cpp does not know how to build this op; add it";
    for (NodeId id : made) g.outputs.push_back(id);
  }
  return e;
}

TEST(Serialize, GraphHasEveryOp) {
  EveryOp e = every_op_graph();
  std::vector<bool> seen(kNumOps, false);
  for (const Node& n : e.graph.nodes()) seen[static_cast<size_t>(n.op)] = true;
  for (size_t i = 0; i < kNumOps; ++i) EXPECT_TRUE(seen[i]) << kOpInfo[i].name;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(Serialize, RoundTripOfEveryOpWithData) {
  EveryOp e = every_op_graph();
  std::string text = graph_to_json(e.graph, e.inputs);
  SavedGraph back = graph_from_json(text);
  ASSERT_EQ(back.graph.size(), e.graph.size());
  for (NodeId id = 0; id < e.graph.size(); ++id) {
    const Node& a = e.graph[id];
    const Node& b = back.graph[id];
    SCOPED_TRACE(std::string(info(a.op).name) + " node " + std::to_string(id));
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.view, b.view);  // views are rebuilt by the same builder
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.attr.ints, b.attr.ints);
    ASSERT_EQ(a.attr.reals.size(), b.attr.reals.size());
    for (size_t k = 0; k < a.attr.reals.size(); ++k)
      EXPECT_TRUE(same_bits(a.attr.reals[k], b.attr.reals[k]) || (std::isnan(a.attr.reals[k]) && std::isnan(b.attr.reals[k])))
          << a.attr.reals[k] << " vs " << b.attr.reals[k];
  }
  EXPECT_EQ(back.graph.outputs, e.graph.outputs);
  EXPECT_EQ(back.graph.inputs(), e.graph.inputs());
  ASSERT_EQ(back.inputs.size(), e.inputs.size());
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    EXPECT_EQ(back.inputs[k].dtype, e.inputs[k].dtype);
    EXPECT_EQ(back.inputs[k].shape, e.inputs[k].shape);
    EXPECT_EQ(std::memcmp(back.inputs[k].data.get(), e.inputs[k].data.get(), e.inputs[k].bytes()), 0) << k;
  }
  // Writing the loaded graph again gives the same text.
  EXPECT_EQ(graph_to_json(back.graph, back.inputs), text);
  // And it computes the same values, bit for bit.
  std::vector<Array> want = reference::evaluate(e.graph, e.inputs, e.graph.outputs);
  std::vector<Array> got = reference::evaluate(back.graph, back.inputs, back.graph.outputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_EQ(std::memcmp(want[k].data.get(), got[k].data.get(), want[k].bytes()), 0) << "output " << k;
}

TEST(Serialize, StructureOnlyHasNoData) {
  EveryOp e = every_op_graph();
  std::string text = graph_to_json(e.graph, {});
  EXPECT_FALSE(contains(text, "input_data"));
  SavedGraph back = graph_from_json(text);
  EXPECT_TRUE(back.inputs.empty());
  EXPECT_EQ(back.graph.size(), e.graph.size());
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] {
                         graph_to_json(e.graph, std::span<const Array>(e.inputs).subspan(1));
                       }),
                       "input arrays"));
}

TEST(Serialize, DataOfEveryLengthSurvivesBase64) {
  for (int64_t n = 0; n <= 7; ++n) {
    Graph g;
    g.outputs.push_back(g.input(DType::UInt8, {n}));
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(255 - 37 * i % 256));
    std::vector<Array> in{make_array(DType::UInt8, {n}, v)};
    SavedGraph back = graph_from_json(graph_to_json(g, in));
    ASSERT_EQ(back.inputs.size(), 1u);
    EXPECT_EQ(testing::doubles(back.inputs[0]), v) << "length " << n;
  }
}

TEST(Serialize, FileRoundTrip) {
  EveryOp e = every_op_graph();
  std::string path = ::testing::TempDir() + "braze_serialize_test.json";
  save_graph_file(path, e.graph, e.inputs);
  SavedGraph back = load_graph_file(path);
  EXPECT_EQ(back.graph.size(), e.graph.size());
  EXPECT_EQ(back.inputs.size(), e.inputs.size());
  std::remove(path.c_str());
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([] { load_graph_file("/nonexistent/braze.json"); }),
                       "cannot open"));
}

// A valid two-node file, and variants of it with one thing wrong.
const std::string kTiny = R"({"format": "braze-graph", "version": 1, "nodes": [
  {"op": "Input", "dtype": "float32", "shape": [2], "inputs": [], "ints": [0], "reals": []},
  {"op": "Exp", "dtype": "float32", "shape": [2], "inputs": [0], "ints": [], "reals": []}],
 "outputs": [1], "input_data": ["AACAPwAAAEA="]})";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(Serialize, TinyFileLoads) {
  SavedGraph g = graph_from_json(kTiny);
  ASSERT_EQ(g.graph.size(), 2u);
  EXPECT_EQ(g.graph[1].op, Op::Exp);
  EXPECT_EQ(testing::doubles(g.inputs.at(0)), (std::vector<double>{1, 2}));
  // Ops may also be named by their API name.
  EXPECT_EQ(graph_from_json(replaced(kTiny, "\"Exp\"", "\"exp\"")).graph[1].op, Op::Exp);
}

TEST(Serialize, VersionIsChecked) {
  EXPECT_TRUE(contains(graph_to_json(Graph{}, {}), "\"version\": " + std::to_string(kGraphFormatVersion)));
  std::string msg = error_of<std::invalid_argument>([] { graph_from_json(replaced(kTiny, "\"version\": 1", "\"version\": 2")); });
  EXPECT_TRUE(contains(msg, "version 2"));
  EXPECT_TRUE(contains(msg, "version 1"));
  EXPECT_THROW(graph_from_json(replaced(kTiny, "\"version\": 1,", "")), std::invalid_argument);
  EXPECT_THROW(graph_from_json(replaced(kTiny, "\"version\": 1", "\"version\": \"1\"")), std::invalid_argument);
}

TEST(Serialize, BadFilesGiveClearErrors) {
  struct Case {
    const char* what;
    std::string text;
    std::string mentions;
  };
  const Case cases[] = {
      {"not JSON", "{\"format\": ", "not valid JSON"},
      {"empty", "", "not valid JSON"},
      {"not an object", "[1, 2]", "not a braze graph"},
      {"format of the wrong type", "{\"format\": 5}", "malformed graph"},
      {"wrong format", replaced(kTiny, "braze-graph", "onnx"), "not a braze graph"},
      {"unknown op", replaced(kTiny, "\"Exp\"", "\"Frobnicate\""), "unknown op 'Frobnicate'"},
      {"unknown dtype", replaced(kTiny, "\"float32\", \"shape\": [2], \"inputs\": [0]",
                                 "\"float33\", \"shape\": [2], \"inputs\": [0]"),
       "unknown dtype 'float33'"},
      {"no nodes", replaced(kTiny, "\"nodes\"", "\"nodez\""), "malformed graph"},
      {"missing field", replaced(kTiny, ", \"ints\": [], \"reals\": []}]", "}]"), "malformed graph"},
      {"field of the wrong type", replaced(kTiny, "\"shape\": [2], \"inputs\": [0]", "\"shape\": 2, \"inputs\": [0]"),
       "malformed graph"},
      {"forward reference", replaced(kTiny, "\"inputs\": [0]", "\"inputs\": [1]"), "does not come before it"},
      {"output out of range", replaced(kTiny, "\"outputs\": [1]", "\"outputs\": [2]"), "output 2"},
      {"recorded type disagrees", replaced(kTiny, "\"float32\", \"shape\": [2], \"inputs\": [0]",
                                           "\"float64\", \"shape\": [2], \"inputs\": [0]"),
       "differs from the inferred"},
      {"recorded shape disagrees", replaced(kTiny, "\"shape\": [2], \"inputs\": [0]", "\"shape\": [3], \"inputs\": [0]"),
       "differs from the inferred"},
      {"op invalid for its inputs", replaced(kTiny, "\"Exp\"", "\"Add\""), "takes 2 inputs"},
      {"bad base64", replaced(kTiny, "AACAPwAAAEA=", "AAC*PwAAAEA="), "not base64"},
      {"data of the wrong size", replaced(kTiny, "AACAPwAAAEA=", "AACAPw=="), "bytes of data"},
      {"data for missing inputs", replaced(kTiny, "[\"AACAPwAAAEA=\"]", "[\"AACAPwAAAEA=\", \"\"]"), "input arrays"},
      {"bad real", replaced(kTiny, "\"reals\": []}]", "\"reals\": [\"NaNa\"]}]"), "is not a number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string msg = error_of<std::invalid_argument>([&] { graph_from_json(c.text); });
    EXPECT_TRUE(contains(msg, c.mentions));
    EXPECT_TRUE(contains(msg, "load_graph") || contains(msg, "dtype") || contains(msg, "exp") ||
                contains(msg, "add"))
        << msg;
  }
}

}  // namespace
}  // namespace braze
