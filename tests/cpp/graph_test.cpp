// The graph builder (graph/graph.h): interning, implicit broadcasting, view
// composition, constants, and the user errors thrown when an op is recorded.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "graph/graph.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::contains;
using testing::error_of;

TEST(Graph, IdenticalNodesShareAnId) {
  Graph g;
  NodeId x = g.input(DType::Float32, {2, 3});
  NodeId a = g.apply(Op::Exp, {x});
  NodeId b = g.apply(Op::Exp, {x});
  EXPECT_EQ(a, b);
  EXPECT_EQ(g.apply(Op::Add, {a, x}), g.apply(Op::Add, {b, x}));
  EXPECT_EQ(g.apply(Op::Sum, {x}, Attr{{1}, {}}), g.apply(Op::Sum, {x}, Attr{{1}, {}}));
  size_t size = g.size();
  (void)g.apply(Op::Exp, {x});
  EXPECT_EQ(g.size(), size);
}

TEST(Graph, NodesThatDifferAreDistinct) {
  Graph g;
  NodeId x = g.input(DType::Float32, {2, 3});
  NodeId y = g.input(DType::Float32, {2, 3});  // same type, another input number
  EXPECT_NE(x, y);
  EXPECT_EQ(g.inputs(), (std::vector<NodeId>{x, y}));
  EXPECT_EQ(g[y].attr.ints, (std::vector<int64_t>{1}));
  EXPECT_NE(g.apply(Op::Add, {x, y}), g.apply(Op::Add, {y, x}));  // inputs in order, commutative or not
  EXPECT_NE(g.apply(Op::Sum, {x}, Attr{{0}, {}}), g.apply(Op::Sum, {x}, Attr{{1}, {}}));
  EXPECT_NE(g.apply(Op::Cast, {x}, Attr{{static_cast<int64_t>(DType::Float16)}, {}}),
            g.apply(Op::Cast, {x}, Attr{{static_cast<int64_t>(DType::Float64)}, {}}));
}

TEST(Graph, NodesAreInTopologicalOrder) {
  Graph g;
  NodeId x = g.input(DType::Float32, {3});
  NodeId c = g.constant(DType::Float32, 2.0);
  NodeId y = g.apply(Op::Mul, {g.apply(Op::Exp, {x}), c});
  for (NodeId id = 0; id < g.size(); ++id)
    for (NodeId in : g[id].inputs) EXPECT_LT(in, id);
  EXPECT_EQ(g[y].op, Op::Mul);
}

TEST(Graph, ImplicitBroadcastingInsertsReshapeAndExpand) {
  Graph g;
  NodeId a = g.input(DType::Float32, {2, 3});
  NodeId b = g.input(DType::Float32, {3});
  NodeId sum = g.apply(Op::Add, {a, b});
  const Node& n = g[sum];
  EXPECT_EQ(n.shape(), (Shape{2, 3}));
  EXPECT_EQ(n.inputs[0], a);  // already the result's shape: read as it is
  const Node& expand = g[n.inputs[1]];
  ASSERT_EQ(expand.op, Op::Expand);
  EXPECT_EQ(expand.attr.ints, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(expand.view.strides, (Strides{0, 1}));
  const Node& reshape = g[expand.inputs[0]];
  ASSERT_EQ(reshape.op, Op::Reshape);
  EXPECT_EQ(reshape.attr.ints, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(reshape.inputs[0], b);
  EXPECT_EQ(g.base(n.inputs[1]), b);
}

TEST(Graph, SameRankBroadcastNeedsNoReshape) {
  Graph g;
  NodeId a = g.input(DType::Float32, {2, 1});
  NodeId b = g.input(DType::Float32, {1, 3});
  const Node& n = g[g.apply(Op::Mul, {a, b})];
  EXPECT_EQ(n.shape(), (Shape{2, 3}));
  for (NodeId in : n.inputs) {
    EXPECT_EQ(g[in].op, Op::Expand);
    EXPECT_NE(g[g[in].inputs[0]].op, Op::Reshape);
  }
  EXPECT_EQ(g[n.inputs[0]].view.strides, (Strides{1, 0}));
  EXPECT_EQ(g[n.inputs[1]].view.strides, (Strides{0, 1}));
}

TEST(Graph, ScalarConstantBroadcastsToTheOtherOperand) {
  Graph g;
  NodeId x = g.input(DType::Float32, {4});
  NodeId c = g.constant(DType::Float32, 0.5);
  const Node& n = g[g.apply(Op::Add, {x, c})];
  EXPECT_EQ(n.shape(), (Shape{4}));
  EXPECT_EQ(g.base(n.inputs[1]), c);
  EXPECT_EQ(g[n.inputs[1]].view.strides, (Strides{0}));
}

TEST(Graph, ViewsComposeOverTheBase) {
  Graph g;
  NodeId x = g.input(DType::Float32, {4, 6});
  NodeId t = g.apply(Op::Permute, {x}, Attr{{1, 0}, {}});
  // t[::-1, 1:3] as starts, steps, lengths.
  NodeId s = g.apply(Op::Slice, {t}, Attr{{5, 1, -1, 1, 6, 2}, {}});
  EXPECT_EQ(g.base(s), x);
  EXPECT_EQ(g[s].shape(), (Shape{6, 2}));
  EXPECT_EQ(g[s].view.strides, (Strides{-1, 6}));
  EXPECT_EQ(g[s].view.offset, 5 + 6);
  // A node that computes reads its inputs through their views and is dense.
  NodeId e = g.apply(Op::Exp, {s});
  EXPECT_TRUE(g[e].view.is_contiguous());
  EXPECT_EQ(g.base(e), e);
}

TEST(Graph, ReshapeThatStridesCannotExpressGetsACopy) {
  Graph g;
  NodeId x = g.input(DType::Float32, {2, 3});
  NodeId t = g.apply(Op::Permute, {x}, Attr{{1, 0}, {}});
  NodeId r = g.apply(Op::Reshape, {t}, Attr{{6}, {}});
  ASSERT_EQ(g[r].op, Op::Reshape);
  NodeId copy = g[r].inputs[0];
  EXPECT_EQ(g[copy].op, Op::Copy);
  EXPECT_EQ(g[copy].inputs[0], t);
  EXPECT_EQ(g.base(r), copy);
  EXPECT_TRUE(g[r].view.is_contiguous());
  // A reshape strides can express stays a view of the input.
  NodeId r2 = g.apply(Op::Reshape, {t}, Attr{{3, 1, 2}, {}});
  EXPECT_EQ(g[r2].inputs[0], t);
  EXPECT_EQ(g.base(r2), x);
}

TEST(Graph, Constants) {
  Graph g;
  NodeId a = g.constant(DType::Float32, 2.5);
  EXPECT_EQ(a, g.constant(DType::Float32, 2.5));
  EXPECT_NE(a, g.constant(DType::Float64, 2.5));
  EXPECT_NE(a, g.constant(DType::Float32, 3.5));
  EXPECT_EQ(g[a].attr.reals, (std::vector<double>{2.5}));
  EXPECT_TRUE(g[a].attr.ints.empty());
  EXPECT_EQ(g[a].shape(), Shape{});
  // Integer dtypes keep the value as an integer (truncated, as NumPy's cast).
  NodeId i = g.constant(DType::Int32, -2.7);
  EXPECT_EQ(g[i].attr.ints, (std::vector<int64_t>{-2}));
  EXPECT_TRUE(g[i].attr.reals.empty());
  EXPECT_EQ(i, g.constant_int(DType::Int32, -2));
  // And float dtypes as a real, whichever builder made them.
  EXPECT_EQ(g.constant_int(DType::Float16, 3), g.constant(DType::Float16, 3.0));
  // Large int64 values are not squeezed through a double.
  int64_t big = (int64_t{1} << 62) + 1;
  EXPECT_EQ(g[g.constant_int(DType::Int64, big)].attr.ints[0], big);
}

// -0.0 == 0.0 as doubles, but a constant -0.0 is a different value: 1 / -0.0
// is -inf. Interning must not merge them; and NaN constants, though NaN !=
// NaN, are the same node.
TEST(Graph, ConstantsAreInternedByBitPattern) {
  Graph g;
  NodeId pos = g.constant(DType::Float32, 0.0);
  NodeId neg = g.constant(DType::Float32, -0.0);
  EXPECT_NE(pos, neg);
  EXPECT_TRUE(std::signbit(g[neg].attr.reals[0]));
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(g.constant(DType::Float32, nan), g.constant(DType::Float32, nan));
}

TEST(Graph, Arange) {
  Graph g;
  NodeId f = g.arange(DType::Float32, 5, 0.5, 0.25);
  EXPECT_EQ(g[f].shape(), (Shape{5}));
  EXPECT_EQ(g[f].attr.reals, (std::vector<double>{0.5, 0.25}));
  NodeId i = g.arange(DType::Int64, 3, 2, -1);
  EXPECT_EQ(g[i].attr.ints, (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g[g.arange(DType::Int64, 0, 0, 1)].shape(), (Shape{0}));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { g.arange(DType::Int64, -1, 0, 1); }), "arange"));
}

TEST(Graph, LeavesCannotBeApplied) {
  Graph g;
  std::string msg = error_of<std::invalid_argument>([&] { g.apply(Op::Const, {}); });
  EXPECT_TRUE(contains(msg, "full"));
}

// --- errors: thrown when the op is recorded, naming the op and the values ---

struct ErrorCase {
  const char* what;
  std::function<void(Graph&, NodeId /*f32 [2, 3]*/)> record;
  bool index_error;  // std::out_of_range rather than std::invalid_argument
  std::vector<std::string> mentions;
};

TEST(GraphErrors, NameTheOpAndTheValues) {
  using V = std::vector<std::string>;
  const ErrorCase cases[] = {
      {"broadcast", [](Graph& g, NodeId x) { g.apply(Op::Add, {x, g.input(DType::Float32, {4})}); }, false,
       V{"add", "[2, 3]", "[4]", "axis 1", "3 vs 4"}},
      {"arity", [](Graph& g, NodeId x) { g.apply(Op::Add, {x}); }, false, V{"add", "takes 2 inputs, got 1"}},
      {"bool negative",
       [](Graph& g, NodeId) { g.apply(Op::Neg, {g.input(DType::Bool, {2})}); }, false,
       V{"negative", "bool", "[2]"}},
      {"where condition",
       [](Graph& g, NodeId x) { g.apply(Op::Where, {x, x, x}); }, false, V{"where", "condition", "float32"}},
      {"reduce axis", [](Graph& g, NodeId x) { g.apply(Op::Sum, {x}, Attr{{2}, {}}); }, true,
       V{"sum", "axis 2", "[2, 3]"}},
      {"reduce unsorted axes", [](Graph& g, NodeId x) { g.apply(Op::Max, {x}, Attr{{1, 0}, {}}); }, false,
       V{"max", "sorted"}},
      {"max of empty",
       [](Graph& g, NodeId) { g.apply(Op::Max, {g.input(DType::Float32, {2, 0})}, Attr{{1}, {}}); }, false,
       V{"max", "axis 1", "[2, 0]", "identity"}},
      {"argmin of empty",
       [](Graph& g, NodeId) { g.apply(Op::ArgMin, {g.input(DType::Float32, {0})}, Attr{{0}, {}}); }, false,
       V{"argmin", "[0]"}},
      {"reshape size", [](Graph& g, NodeId x) { g.apply(Op::Reshape, {x}, Attr{{4}, {}}); }, false,
       V{"reshape", "[2, 3]", "[4]", "6 elements", "4 elements"}},
      {"reshape negative", [](Graph& g, NodeId x) { g.apply(Op::Reshape, {x}, Attr{{-1, 6}, {}}); }, false,
       V{"reshape", "negative"}},
      {"permute", [](Graph& g, NodeId x) { g.apply(Op::Permute, {x}, Attr{{0, 0}, {}}); }, false,
       V{"permute", "[0, 0]", "[2, 3]"}},
      {"expand", [](Graph& g, NodeId x) { g.apply(Op::Expand, {x}, Attr{{2, 4}, {}}); }, false,
       V{"broadcast_to", "[2, 3]", "[2, 4]"}},
      {"slice bounds", [](Graph& g, NodeId x) { g.apply(Op::Slice, {x}, Attr{{0, 1, 1, 1, 2, 3}, {}}); }, true,
       V{"slice", "axis 1", "[2, 3]"}},
      {"slice attr", [](Graph& g, NodeId x) { g.apply(Op::Slice, {x}, Attr{{0}, {}}); }, false, V{"slice"}},
      {"cast attr", [](Graph& g, NodeId x) { g.apply(Op::Cast, {x}, Attr{{99}, {}}); }, false, V{"astype"}},
      {"matmul", [](Graph& g, NodeId x) { g.apply(Op::MatMul, {x, x}); }, false,
       V{"matmul", "[2, 3]", "not aligned", "3", "2"}},
      {"matmul rank", [](Graph& g, NodeId) {
         NodeId v = g.input(DType::Float32, {3});
         g.apply(Op::MatMul, {v, v});
       }, false, V{"matmul", "at least 2 dims"}},
      {"conv2d channels", [](Graph& g, NodeId) {
         g.apply(Op::Conv2d, {g.input(DType::Float32, {1, 3, 5, 5}), g.input(DType::Float32, {2, 4, 3, 3})},
                 Attr{{1, 1, 0, 0, 1, 1, 1}, {}});
       }, false, V{"conv2d", "[1, 3, 5, 5]", "[2, 4, 3, 3]"}},
      {"conv2d bool", [](Graph& g, NodeId) {
         g.apply(Op::Conv2d, {g.input(DType::Bool, {1, 1, 3, 3}), g.input(DType::Bool, {1, 1, 3, 3})},
                 Attr{{1, 1, 0, 0, 1, 1, 1}, {}});
       }, false, V{"conv2d", "bool"}},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.what);
    Graph g;
    NodeId x = g.input(DType::Float32, {2, 3});
    std::string msg = c.index_error ? error_of<std::out_of_range>([&] { c.record(g, x); })
                                    : error_of<std::invalid_argument>([&] { c.record(g, x); });
    for (const std::string& m : c.mentions) EXPECT_TRUE(contains(msg, m));
    // The graph stays usable after a rejected op.
    EXPECT_EQ(g[g.apply(Op::Exp, {x})].shape(), (Shape{2, 3}));
  }
}

TEST(GraphErrors, AMovementErrorIsNotAnInternalError) {
  // A user mistake must not surface as "bug in braze" (std::logic_error).
  Graph g;
  NodeId x = g.input(DType::Float32, {2, 3});
  try {
    g.apply(Op::Permute, {x}, Attr{{0}, {}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_FALSE(contains(e.what(), "bug in braze"));
  }
}

TEST(GraphAdd, RebuildsNodesAndChecksTheRecordedType) {
  Graph g;
  NodeId x = g.input(DType::Int32, {2, 3});
  NodeId y = g.apply(Op::Exp, {x});
  Graph h;
  EXPECT_EQ(h.add(g[x]), x);
  EXPECT_EQ(h.add(g[y]), y);
  EXPECT_EQ(h[y], g[y]);
  Node wrong = g[y];
  wrong.dtype = DType::Float64;
  std::string msg = error_of<std::invalid_argument>([&] { h.add(wrong); });
  EXPECT_TRUE(contains(msg, "exp"));
  EXPECT_TRUE(contains(msg, "float64"));
  EXPECT_TRUE(contains(msg, "float32"));
  Node input = g[x];
  input.attr.ints = {5};  // inputs must be numbered in order
  EXPECT_THROW(h.add(input), std::invalid_argument);
  Node late = g[y];
  late.inputs = {42};
  EXPECT_THROW(h.add(late), std::invalid_argument);
}

}  // namespace
}  // namespace braze
