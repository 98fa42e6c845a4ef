// The reference interpreter (graph/reference.h) against values computed
// here with <cmath> and plain integer arithmetic, or written out by hand.
//
// Every element-wise row of graph/ops.def is run (found by iterating
// kOpInfo), in every dtype it accepts, on inputs laid out contiguously,
// transposed, sliced with negative steps, broadcast, zero-size and 0-d. A new
// row without an expected-value function below fails ExpectedValuesCoverTheTable.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "graph/infer.h"
#include "graph/reference.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::close;
using testing::contains;
using testing::doubles;
using testing::error_of;
using testing::ints;
using testing::make_array;
using testing::make_int_array;
using testing::round_to;
using testing::tolerance;
using testing::wrap_to;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// --- expected values --------------------------------------------------------

// Integer arithmetic that wraps, without signed-overflow UB in the test.
int64_t wadd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wsub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wmul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

int64_t int_pow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;  // 1/a^|b| truncated toward zero
  uint64_t r = 1, x = static_cast<uint64_t>(a);
  for (int64_t i = 0; i < b; ++i) r *= x;
  return static_cast<int64_t>(r);
}

// Python's % (the sign of the divisor); NaN for a zero float divisor.
double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  if (r == 0) r = std::copysign(0.0, b);
  return r;
}
int64_t py_mod_int(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;  // INT64_MIN % -1 would trap
  int64_t r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

// NumPy's shifts of int64 (npy_lshift64, npy_rshift64): a count outside
// [0, 64) shifts every bit out. Narrower dtypes wrap these int64 results.
int64_t np_left_shift(int64_t a, int64_t b) {
  return b < 0 || b >= 64 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}
int64_t np_right_shift(int64_t a, int64_t b) { return b < 0 || b >= 64 ? (a < 0 ? -1 : 0) : a >> b; }

double round_half_even(double x) {
  if (!std::isfinite(x)) return x;
  double f = std::floor(x), d = x - f;
  if (d > 0.5 || (d == 0.5 && std::fmod(f, 2.0) != 0)) f += 1;
  return f;
}

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b); }

// An op's value on real inputs (computed in double) and, where the op is
// defined on integers without becoming float, on int64 inputs.
struct Expected {
  std::function<double(const double*)> real;
  std::function<int64_t(const int64_t*)> integer;  // empty: integer inputs compute as reals
};

const std::map<Op, Expected>& expected_values() {
  // R: real only. RI: the same expression in both domains. RJ: separate ones.
#define R(op, expr) {Op::op, {[](const double* a) -> double { return (expr); }, {}}}
#define RI(op, expr) \
  {Op::op, {[](const double* a) -> double { return (expr); }, [](const int64_t* a) -> int64_t { return (expr); }}}
#define RJ(op, rexpr, iexpr) \
  {Op::op, {[]([[maybe_unused]] const double* a) -> double { return (rexpr); }, []([[maybe_unused]] const int64_t* a) -> int64_t { return (iexpr); }}}
  static const std::map<Op, Expected> table = {
      RJ(Neg, -a[0], wsub(0, a[0])),
      RJ(Abs, std::fabs(a[0]), a[0] < 0 ? wsub(0, a[0]) : a[0]),
      RJ(Sign, std::isnan(a[0]) ? kNaN : (a[0] > 0) - (a[0] < 0), (a[0] > 0) - (a[0] < 0)),
      R(Exp, std::exp(a[0])),
      R(Exp2, std::exp2(a[0])),
      R(Expm1, std::expm1(a[0])),
      R(Log, std::log(a[0])),
      R(Log2, std::log2(a[0])),
      R(Log1p, std::log1p(a[0])),
      R(Sqrt, std::sqrt(a[0])),
      R(Rsqrt, 1 / std::sqrt(a[0])),
      R(Reciprocal, 1 / a[0]),
      RJ(Square, a[0] * a[0], wmul(a[0], a[0])),
      R(Sin, std::sin(a[0])),
      R(Cos, std::cos(a[0])),
      R(Tan, std::tan(a[0])),
      R(Tanh, std::tanh(a[0])),
      R(Sigmoid, 1 / (1 + std::exp(-a[0]))),
      RJ(Relu, std::isnan(a[0]) ? kNaN : std::max(a[0], 0.0), std::max<int64_t>(a[0], 0)),
      R(Erf, std::erf(a[0])),
      RJ(Floor, std::floor(a[0]), a[0]),
      RJ(Ceil, std::ceil(a[0]), a[0]),
      RJ(Round, round_half_even(a[0]), a[0]),
      RJ(IsNan, std::isnan(a[0]), 0),
      RJ(IsInf, std::isinf(a[0]), 0),
      RJ(SignBit, std::signbit(a[0]), a[0] < 0),
      RI(LogicalNot, a[0] == 0),
      RI(Cast, a[0]),
      RI(Copy, a[0]),
      RI(StopGradient, a[0]),
      RI(Depend, a[0]),
      RJ(Add, a[0] + a[1], wadd(a[0], a[1])),
      RJ(Sub, a[0] - a[1], wsub(a[0], a[1])),
      RJ(Mul, a[0] * a[1], wmul(a[0], a[1])),
      R(Div, a[0] / a[1]),
      RJ(Pow, std::pow(a[0], a[1]), int_pow(a[0], a[1])),
      RJ(Maximum, nan_max(a[0], a[1]), std::max(a[0], a[1])),
      RJ(Minimum, nan_min(a[0], a[1]), std::min(a[0], a[1])),
      RJ(Mod, py_mod(a[0], a[1]), py_mod_int(a[0], a[1])),
      RI(Eq, a[0] == a[1]),
      RI(Ne, a[0] != a[1]),
      RI(Lt, a[0] < a[1]),
      RI(Le, a[0] <= a[1]),
      RI(Gt, a[0] > a[1]),
      RI(Ge, a[0] >= a[1]),
      RI(LogicalAnd, a[0] != 0 && a[1] != 0),
      RI(LogicalOr, a[0] != 0 || a[1] != 0),
      RI(Where, a[0] != 0 ? a[1] : a[2]),
      // Integers and bools only: the real forms are never called.
      RJ(BitwiseInvert, kNaN, ~a[0]),
      RJ(BitwiseAnd, kNaN, a[0] & a[1]),
      RJ(BitwiseOr, kNaN, a[0] | a[1]),
      RJ(BitwiseXor, kNaN, a[0] ^ a[1]),
      RJ(LeftShift, kNaN, np_left_shift(a[0], a[1])),
      RJ(RightShift, kNaN, np_right_shift(a[0], a[1])),
  };
#undef R
#undef RI
#undef RJ
  return table;
}

std::vector<Op> elementwise_ops() {
  std::vector<Op> out;
  for (size_t i = 0; i < kNumOps; ++i)
    if (kOpInfo[i].kind == FusionKind::ElemWise) out.push_back(static_cast<Op>(i));
  return out;
}

TEST(ReferenceElementwise, ExpectedValuesCoverTheTable) {
  for (Op op : elementwise_ops())
    EXPECT_TRUE(expected_values().count(op))
        << info(op).name << " has no expected-value function in tests/cpp/reference_test.cpp; add one";
}

// A float -> integer store as docs/semantics.md states it: truncation toward
// zero, NaN and values out of int64 range as INT64_MIN, then wrapped.
int64_t float_to_int(DType t, double v) {
  if (t == DType::Bool) return v != 0;
  if (std::isnan(v) || v >= 9223372036854775808.0 || v < -9223372036854775808.0)
    return wrap_to(t, std::numeric_limits<int64_t>::min());
  return wrap_to(t, static_cast<int64_t>(std::trunc(v)));
}

// --- layouts ----------------------------------------------------------------

enum class Layout { Contiguous, Transposed, NegativeStep, Broadcast, ZeroSize, Scalar };
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::NegativeStep: return "negative-step";
    case Layout::Broadcast: return "broadcast";
    case Layout::ZeroSize: return "zero-size";
    case Layout::Scalar: return "0-d";
  }
  return "?";
}
constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::NegativeStep,
                               Layout::Broadcast,  Layout::ZeroSize,   Layout::Scalar};

Shape result_shape(Layout l) {
  if (l == Layout::ZeroSize) return {0, 4};
  if (l == Layout::Scalar) return {};
  return {3, 4};
}

// One input: its stored array, the movement ops that make the logical [3, 4]
// (or [0, 4], or []) operand from it, and where logical element (i, j) sits.
struct Operand {
  Array stored;
  std::function<NodeId(Graph&, NodeId)> view;
  std::function<int64_t(int64_t, int64_t)> at;
};

// Values that exercise signs, zero, fractions, ties and the specials.
const std::vector<double> kRealPool = {-2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0,
                                       kNaN,  kInf, -kInf, 1e-3, -7.25, 100.0, 2.5, -3.0};
const std::vector<int64_t> kIntPool = {-7, -3, -2, -1, 0, 1, 2, 3, 5, 100, -128, 127, 4, 9};

Array fill(DType t, const Shape& shape, int k) {
  Array a = allocate_array(t, shape);
  for (int64_t e = 0; e < a.numel(); ++e) {
    size_t pick = static_cast<size_t>(e * 7 + k * 3);
    if (t == DType::Bool) store_int(t, a.data.get(), e, (e * 7 + k * 3) % 5 < 2);
    else if (is_float(t)) store_double(t, a.data.get(), e, kRealPool[pick % kRealPool.size()]);
    else store_int(t, a.data.get(), e, kIntPool[pick % kIntPool.size()]);
  }
  return a;
}

Operand make_operand(Layout l, DType t, int k, int arity) {
  auto none = [](Graph&, NodeId id) { return id; };
  switch (l) {
    case Layout::Contiguous:
      return {fill(t, {3, 4}, k), none, [](int64_t i, int64_t j) { return i * 4 + j; }};
    case Layout::Transposed:
      return {fill(t, {4, 3}, k), [](Graph& g, NodeId id) { return g.apply(Op::Permute, {id}, Attr{{1, 0}, {}}); },
              [](int64_t i, int64_t j) { return j * 3 + i; }};
    case Layout::NegativeStep:
      // stored [6, 8]; operand = stored[5::-2, 7::-2]
      return {fill(t, {6, 8}, k),
              [](Graph& g, NodeId id) { return g.apply(Op::Slice, {id}, Attr{{5, 7, -2, -2, 3, 4}, {}}); },
              [](int64_t i, int64_t j) { return (5 - 2 * i) * 8 + (7 - 2 * j); }};
    case Layout::Broadcast:
      // Unary ops broadcast explicitly; n-ary ones rely on the implicit
      // broadcasting of apply(): inputs [3, 1], [4] and [] meet at [3, 4].
      if (arity == 1)
        return {fill(t, {4}, k), [](Graph& g, NodeId id) { return g.broadcast_to(id, {3, 4}); },
                [](int64_t, int64_t j) { return j; }};
      if (k == 0) return {fill(t, {3, 1}, k), none, [](int64_t i, int64_t) { return i; }};
      if (k == 1) return {fill(t, {4}, k), none, [](int64_t, int64_t j) { return j; }};
      return {fill(t, {}, k), none, [](int64_t, int64_t) { return int64_t{0}; }};
    case Layout::ZeroSize: return {fill(t, {0, 4}, k), none, [](int64_t, int64_t) { return int64_t{0}; }};
    case Layout::Scalar: return {fill(t, {}, k), none, [](int64_t, int64_t) { return int64_t{0}; }};
  }
  return {};
}

// Builds op(inputs of `dtypes` in layout `l`), evaluates it with the
// reference, and checks every element against the expected-value function.
// Returns false (checking nothing) when infer() rejects the dtypes.
bool check_elementwise(Op op, const std::vector<DType>& dtypes, Layout l, const Attr& attr = {}) {
  const std::string what = std::string(info(op).api) + " " + layout_name(l);
  Graph g;
  std::vector<Operand> operands;
  std::vector<NodeId> ids;
  std::vector<Array> inputs;
  for (size_t k = 0; k < dtypes.size(); ++k) {
    operands.push_back(make_operand(l, dtypes[k], static_cast<int>(k), info(op).arity));
    NodeId in = g.input(dtypes[k], operands[k].stored.shape);
    inputs.push_back(operands[k].stored);
    ids.push_back(operands[k].view(g, in));
  }
  NodeId out;
  try {
    out = g.apply(op, ids, attr);
  } catch (const std::invalid_argument&) {
    return false;
  }
  const Node& n = g[out];
  EXPECT_EQ(n.shape(), result_shape(l)) << what;
  Array got = reference::evaluate(g, inputs, std::vector<NodeId>{out})[0];
  EXPECT_EQ(got.dtype, n.dtype) << what;
  EXPECT_EQ(got.shape, n.shape()) << what;
  // n.op, not op: a bool's bitwise_invert is recorded as logical_not.
  const Expected& e = expected_values().at(n.op);
  bool real = is_float(n.dtype);
  for (DType t : dtypes) real |= is_float(t);
  if (!e.integer) real = true;
  const int64_t rows = l == Layout::Scalar ? 1 : result_shape(l)[0], cols = l == Layout::Scalar ? 1 : 4;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      int64_t flat = i * cols + j;
      std::string where = what + " at (" + std::to_string(i) + ", " + std::to_string(j) + ") of " +
                          std::string(name(dtypes[0])) + (dtypes.size() > 1 ? std::string(",").append(name(dtypes[1])) : std::string());
      if (real) {
        double args[3];
        for (size_t k = 0; k < operands.size(); ++k)
          args[k] = load_double(dtypes[k], operands[k].stored.data.get(), operands[k].at(i, j));
        double want = e.real(args);
        if (is_float(n.dtype)) {
          EXPECT_TRUE(close(load_double(n.dtype, got.data.get(), flat), round_to(n.dtype, want), tolerance(n.dtype)))
              << where << " inputs " << args[0] << (operands.size() > 1 ? ", " + std::to_string(args[1]) : "");
        } else {
          EXPECT_EQ(load_int(n.dtype, got.data.get(), flat), float_to_int(n.dtype, want))
              << where << " inputs " << args[0] << (operands.size() > 1 ? ", " + std::to_string(args[1]) : "");
        }
      } else {
        int64_t args[3];
        for (size_t k = 0; k < operands.size(); ++k)
          args[k] = load_int(dtypes[k], operands[k].stored.data.get(), operands[k].at(i, j));
        EXPECT_EQ(load_int(n.dtype, got.data.get(), flat), wrap_to(n.dtype, e.integer(args)))
            << where << " inputs " << args[0] << (operands.size() > 1 ? ", " + std::to_string(args[1]) : "");
      }
    }
  return true;
}

TEST(ReferenceElementwise, EveryOpEveryDTypeEveryLayout) {
  int ran = 0;
  for (Op op : elementwise_ops()) {
    if (!expected_values().count(op)) continue;  // reported by ExpectedValuesCoverTheTable
    for (Layout l : kLayouts)
      for (DType t : kAllDTypes) {
        if (op == Op::Cast) {
          for (DType to : kAllDTypes) ran += check_elementwise(op, {t}, l, Attr{{static_cast<int64_t>(to)}, {}});
          continue;
        }
        std::vector<DType> dts(info(op).arity, t);
        if (op == Op::Where) dts[0] = DType::Bool;
        ran += check_elementwise(op, dts, l);
      }
  }
  EXPECT_GT(ran, 1500);
}

TEST(ReferenceElementwise, MixedDTypePairs) {
  const std::pair<DType, DType> pairs[] = {
      {DType::Int32, DType::Float32}, {DType::UInt8, DType::Int8},    {DType::Float16, DType::BFloat16},
      {DType::Bool, DType::Int8},     {DType::Int64, DType::Float16}, {DType::Float64, DType::Float32},
  };
  for (Op op : elementwise_ops()) {
    if (info(op).arity != 2 || !expected_values().count(op)) continue;
    for (auto [a, b] : pairs)
      for (Layout l : {Layout::Contiguous, Layout::Broadcast}) check_elementwise(op, {a, b}, l);
  }
  for (auto [a, b] : pairs) check_elementwise(Op::Where, {DType::Bool, a, b}, Layout::Broadcast);
}

// --- hand-computed values ---------------------------------------------------

// op(inputs) with 1-d inputs of `t` (or per-input dtypes), values given.
Array eval(Op op, std::vector<DType> dts, std::vector<std::vector<double>> values, Attr attr = {}) {
  Graph g;
  std::vector<NodeId> ids;
  std::vector<Array> inputs;
  for (size_t k = 0; k < values.size(); ++k) {
    inputs.push_back(make_array(dts[k], {static_cast<int64_t>(values[k].size())}, values[k]));
    ids.push_back(g.input(dts[k], inputs.back().shape));
  }
  NodeId out = g.apply(op, ids, std::move(attr));
  return reference::evaluate(g, inputs, std::vector<NodeId>{out})[0];
}

TEST(ReferenceHandComputed, RoundHalfToEven) {
  Array r = eval(Op::Round, {DType::Float64}, {{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 3.5000001}});
  EXPECT_EQ(doubles(r), (std::vector<double>{0, 2, 2, -0.0, -2, -2, 2, 4}));
  EXPECT_TRUE(std::signbit(doubles(r)[3]));  // -0.5 rounds to -0.0, as NumPy
}

TEST(ReferenceHandComputed, FloatRemainderHasTheDivisorsSign) {
  Array r = eval(Op::Mod, {DType::Float64, DType::Float64},
                 {{5.5, -5.5, 5.5, -5.5, -4.0, 4.0, 1.0, -1.0, 1.0}, {2, 2, -2, -2, 2, -2, kInf, kInf, 0}});
  std::vector<double> v = doubles(r);
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 8), (std::vector<double>{1.5, 0.5, -0.5, -1.5, 0, -0.0, 1, kInf}));
  EXPECT_FALSE(std::signbit(v[4]));  // -4.0 % 2.0 is +0.0
  EXPECT_TRUE(std::signbit(v[5]));   // 4.0 % -2.0 is -0.0
  EXPECT_TRUE(std::isnan(v[8]));     // x % 0.0 is NaN
}

TEST(ReferenceHandComputed, IntegerRemainderByZeroIsZero) {
  for (DType t : {DType::Int8, DType::Int32, DType::Int64}) {
    Array r = eval(Op::Mod, {t, t}, {{7, -7, 7, -7, 5, 0, -5}, {3, 3, -3, -3, 0, 0, 0}});
    EXPECT_EQ(ints(r), (std::vector<int64_t>{1, 2, -2, -1, 0, 0, 0})) << name(t);
  }
  Array u = eval(Op::Mod, {DType::UInt8, DType::UInt8}, {{200, 7}, {0, 0}});
  EXPECT_EQ(ints(u), (std::vector<int64_t>{0, 0}));
}

TEST(ReferenceHandComputed, IntegerPower) {
  Array r = eval(Op::Pow, {DType::Int64, DType::Int64},
                 {{2, 2, 1, -1, -1, 0, 3, -2, 5}, {10, -1, -5, -3, -2, 0, 3, 3, 0}});
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1024, 0, 1, -1, 1, 1, 27, -8, 1}));
  // Wraps like repeated multiplication in the dtype: 2^7 in int8 is -128.
  EXPECT_EQ(ints(eval(Op::Pow, {DType::Int8, DType::Int8}, {{2, 3}, {7, 5}})), (std::vector<int64_t>{-128, -13}));
}

TEST(ReferenceHandComputed, BitwiseOps) {
  EXPECT_EQ(ints(eval(Op::BitwiseAnd, {DType::Int32, DType::Int32}, {{1, 2, 12}, {3, 1, 10}})),
            (std::vector<int64_t>{1, 0, 8}));
  EXPECT_EQ(ints(eval(Op::BitwiseOr, {DType::Int8, DType::Int8}, {{1, 2, -128}, {3, 1, 1}})),
            (std::vector<int64_t>{3, 3, -127}));
  EXPECT_EQ(ints(eval(Op::BitwiseXor, {DType::UInt8, DType::UInt8}, {{255, 2}, {15, 3}})),
            (std::vector<int64_t>{240, 1}));
  // NumPy: invert(uint8 5, 255, 128) = 250, 0, 127; of int8 it is -x - 1.
  EXPECT_EQ(ints(eval(Op::BitwiseInvert, {DType::UInt8}, {{5, 255, 128}})), (std::vector<int64_t>{250, 0, 127}));
  EXPECT_EQ(ints(eval(Op::BitwiseInvert, {DType::Int8}, {{5, -128, 127}})), (std::vector<int64_t>{-6, 127, -128}));
  // A bool's invert is its logical not (recorded as logical_not), and bool & bool is bool.
  Array b = eval(Op::BitwiseInvert, {DType::Bool}, {{1, 0}});
  EXPECT_EQ(b.dtype, DType::Bool);
  EXPECT_EQ(ints(b), (std::vector<int64_t>{0, 1}));
  Array c = eval(Op::BitwiseXor, {DType::Bool, DType::Bool}, {{1, 1, 0}, {1, 0, 0}});
  EXPECT_EQ(c.dtype, DType::Bool);
  EXPECT_EQ(ints(c), (std::vector<int64_t>{0, 1, 0}));
}

TEST(ReferenceHandComputed, ShiftsAsNumPy) {
  // NumPy 2.4 on int8 [-5, 5, -128, 127] by counts 7, 8, 9, -1, -8, 100:
  // a count outside [0, 8) shifts every bit out (0, or -1 for >> of a negative value).
  const std::vector<double> x{-5, 5, -128, 127};
  const std::vector<std::pair<int, std::vector<int64_t>>> left{{7, {-128, -128, 0, -128}}, {8, {0, 0, 0, 0}},
                                                               {-1, {0, 0, 0, 0}}, {100, {0, 0, 0, 0}}};
  for (const auto& [count, want] : left) {
    std::vector<double> n(x.size(), count);
    EXPECT_EQ(ints(eval(Op::LeftShift, {DType::Int8, DType::Int8}, {x, n})), want) << count;
    EXPECT_EQ(ints(eval(Op::RightShift, {DType::Int8, DType::Int8}, {x, n})), (std::vector<int64_t>{-1, 0, -1, 0}))
        << count;  // from 7 on, every count leaves the sign
  }
  EXPECT_EQ(ints(eval(Op::RightShift, {DType::Int8, DType::Int8}, {{-128, 100, -7}, {1, 2, 1}})),
            (std::vector<int64_t>{-64, 25, -4}));  // arithmetic: -7 >> 1 is -4
  // uint8: logical, and 8 or more shifts everything out.
  EXPECT_EQ(ints(eval(Op::LeftShift, {DType::UInt8, DType::UInt8}, {{5, 255, 128, 1}, {8, 8, 200, 7}})),
            (std::vector<int64_t>{0, 0, 0, 128}));
  EXPECT_EQ(ints(eval(Op::RightShift, {DType::UInt8, DType::UInt8}, {{255, 255, 128}, {7, 8, 200}})),
            (std::vector<int64_t>{1, 0, 0}));
  // int32 at its width, int64 at and past 64 and by negative counts.
  EXPECT_EQ(ints(eval(Op::LeftShift, {DType::Int32, DType::Int32}, {{1, 1, 3}, {31, 32, -1}})),
            (std::vector<int64_t>{-2147483648LL, 0, 0}));
  EXPECT_EQ(ints(eval(Op::RightShift, {DType::Int32, DType::Int32}, {{-1, -2147483648LL, 5}, {32, 31, 33}})),
            (std::vector<int64_t>{-1, -1, 0}));
  EXPECT_EQ(ints(eval(Op::LeftShift, {DType::Int64, DType::Int64}, {{1, 2, 1}, {63, 64, -1}})),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0, 0}));
  EXPECT_EQ(ints(eval(Op::RightShift, {DType::Int64, DType::Int64}, {{-1, -1, -1, 8}, {64, -1, 63, 65}})),
            (std::vector<int64_t>{-1, -1, -1, 0}));
  // Bools shift as int8, as NumPy's: True << True is 2.
  Array s = eval(Op::LeftShift, {DType::Bool, DType::Bool}, {{1, 1, 0}, {1, 0, 1}});
  EXPECT_EQ(s.dtype, DType::Int8);
  EXPECT_EQ(ints(s), (std::vector<int64_t>{2, 1, 0}));
}

TEST(ReferenceHandComputed, BitwiseOpsRejectFloats) {
  for (Op op : {Op::BitwiseAnd, Op::BitwiseOr, Op::BitwiseXor, Op::LeftShift, Op::RightShift}) {
    std::string e = error_of<std::invalid_argument>([&] { eval(op, {DType::Int32, DType::Float32}, {{1}, {1}}); });
    EXPECT_TRUE(contains(e, std::string(info(op).api) + ": not supported for float inputs")) << e;
    EXPECT_TRUE(contains(e, "float32")) << e;
  }
  std::string e = error_of<std::invalid_argument>([&] { eval(Op::BitwiseInvert, {DType::Float16}, {{1}}); });
  EXPECT_TRUE(contains(e, "bitwise_invert: not supported for float inputs")) << e;
}

TEST(ReferenceHandComputed, FloatNegationFlipsTheSignOfZero) {
  // As NumPy and the kernels: -(+0.0) is -0.0, so -(-x) is x for every x.
  for (DType t : {DType::Float32, DType::Float64, DType::Float16}) {
    Array r = eval(Op::Neg, {t}, {{0.0, -0.0, 1.5}});
    std::vector<double> v = doubles(r);
    EXPECT_TRUE(std::signbit(v[0])) << name(t);
    EXPECT_FALSE(std::signbit(v[1])) << name(t);
    EXPECT_EQ(v[2], -1.5) << name(t);
  }
}

TEST(ReferenceHandComputed, IntegerArithmeticWraps) {
  EXPECT_EQ(ints(eval(Op::Add, {DType::Int8, DType::Int8}, {{127, -128}, {1, -1}})), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(ints(eval(Op::Mul, {DType::Int8, DType::Int8}, {{16}, {16}})), (std::vector<int64_t>{0}));
  EXPECT_EQ(ints(eval(Op::Sub, {DType::UInt8, DType::UInt8}, {{0}, {1}})), (std::vector<int64_t>{255}));
  EXPECT_EQ(ints(eval(Op::Add, {DType::UInt8, DType::UInt8}, {{200}, {100}})), (std::vector<int64_t>{44}));
  EXPECT_EQ(ints(eval(Op::Add, {DType::Int32, DType::Int32}, {{2147483647}, {1}})),
            (std::vector<int64_t>{-2147483648LL}));
  EXPECT_EQ(ints(eval(Op::Neg, {DType::Int8}, {{-128}})), (std::vector<int64_t>{-128}));
  EXPECT_EQ(ints(eval(Op::Abs, {DType::Int8}, {{-128}})), (std::vector<int64_t>{-128}));  // as NumPy
  // int64 itself: values built exactly, not through doubles.
  Graph g;
  NodeId a = g.input(DType::Int64, {2});
  NodeId b = g.input(DType::Int64, {2});
  NodeId s = g.apply(Op::Add, {a, b});
  NodeId m = g.apply(Op::Mul, {a, b});
  const int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
  std::vector<Array> in{make_int_array(DType::Int64, {2}, {max, min}), make_int_array(DType::Int64, {2}, {1, -1})};
  std::vector<Array> r = reference::evaluate(g, in, std::vector<NodeId>{s, m});
  EXPECT_EQ(ints(r[0]), (std::vector<int64_t>{min, max}));
  EXPECT_EQ(ints(r[1]), (std::vector<int64_t>{max, min}));  // min * -1 wraps to min
  // The cases that trap or are undefined in C++: min % -1, -min, sum past max.
  NodeId mod = g.apply(Op::Mod, {a, b});
  NodeId neg = g.apply(Op::Neg, {a});
  NodeId sum = g.apply(Op::Sum, {g.apply(Op::Mul, {a, a})}, Attr{{0}, {}});
  std::vector<Array> q = reference::evaluate(g, in, std::vector<NodeId>{mod, neg, sum});
  EXPECT_EQ(ints(q[0]), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(ints(q[1]), (std::vector<int64_t>{-max, min}));
  EXPECT_EQ(ints(q[2]), (std::vector<int64_t>{1}));  // max*max + min*min wraps to 1 + 0
}

TEST(ReferenceHandComputed, FloatToIntCasts) {
  std::vector<double> x = {2.7, -2.7, 0.5, -0.5, 1e20, kNaN, 300.0, -1.0, -kInf};
  auto cast = [&](DType to) {
    return ints(eval(Op::Cast, {DType::Float64}, {x}, Attr{{static_cast<int64_t>(to)}, {}}));
  };
  const int64_t min = std::numeric_limits<int64_t>::min();
  // Truncation toward zero; NaN and out-of-range values are INT64_MIN wrapped.
  EXPECT_EQ(cast(DType::Int64), (std::vector<int64_t>{2, -2, 0, 0, min, min, 300, -1, min}));
  EXPECT_EQ(cast(DType::Int32), (std::vector<int64_t>{2, -2, 0, 0, 0, 0, 300, -1, 0}));
  EXPECT_EQ(cast(DType::Int8), (std::vector<int64_t>{2, -2, 0, 0, 0, 0, 44, -1, 0}));
  EXPECT_EQ(cast(DType::UInt8), (std::vector<int64_t>{2, 254, 0, 0, 0, 0, 44, 255, 0}));
  // To bool: nonzero (NaN included) is true, as NumPy.
  EXPECT_EQ(cast(DType::Bool), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(ints(eval(Op::Cast, {DType::Float32}, {{0.0, -0.0}}, Attr{{static_cast<int64_t>(DType::Bool)}, {}})),
            (std::vector<int64_t>{0, 0}));
}

TEST(ReferenceHandComputed, IntToFloatCastsRound) {
  Graph g;
  NodeId x = g.input(DType::Int64, {2});
  NodeId f = g.apply(Op::Cast, {x}, Attr{{static_cast<int64_t>(DType::Float64)}, {}});
  NodeId h = g.apply(Op::Cast, {x}, Attr{{static_cast<int64_t>(DType::Float16)}, {}});
  std::vector<Array> in{make_int_array(DType::Int64, {2}, {(int64_t{1} << 53) + 1, 65520})};
  std::vector<Array> r = reference::evaluate(g, in, std::vector<NodeId>{f, h});
  EXPECT_EQ(doubles(r[0])[0], 9007199254740992.0);  // 2^53 + 1 ties to even
  EXPECT_EQ(doubles(r[1])[1], kInf);               // past the largest half
}

TEST(ReferenceHandComputed, Division) {
  EXPECT_EQ(doubles(eval(Op::Div, {DType::Int32, DType::Int32}, {{7, -7}, {2, 2}})),
            (std::vector<double>{3.5, -3.5}));
  std::vector<double> v = doubles(eval(Op::Div, {DType::Float32, DType::Float32}, {{1, -1, 0}, {0, 0, 0}}));
  EXPECT_EQ(v[0], kInf);
  EXPECT_EQ(v[1], -kInf);
  EXPECT_TRUE(std::isnan(v[2]));
}

// Found by the JIT fuzzer: negative was 0 - x, so negative(+0.0) was +0.0
// and 1 / -x had the wrong sign.
TEST(ReferenceHandComputed, NegativeFlipsTheSignOfZero) {
  std::vector<double> v = doubles(eval(Op::Neg, {DType::Float32}, {{0.0, -0.0}}));
  EXPECT_TRUE(std::signbit(v[0]));
  EXPECT_FALSE(std::signbit(v[1]));
}

TEST(ReferenceHandComputed, NaNPropagationAndPredicates) {
  std::vector<double> mx = doubles(eval(Op::Maximum, {DType::Float32, DType::Float32}, {{kNaN, 1, 2}, {1, kNaN, 1}}));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 2);
  std::vector<double> mn = doubles(eval(Op::Minimum, {DType::Float32, DType::Float32}, {{kNaN, 1}, {1, kNaN}}));
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
  for (Op op : {Op::Eq, Op::Lt, Op::Le, Op::Gt, Op::Ge})
    EXPECT_EQ(ints(eval(op, {DType::Float32, DType::Float32}, {{kNaN}, {kNaN}}))[0], 0) << info(op).name;
  EXPECT_EQ(ints(eval(Op::Ne, {DType::Float32, DType::Float32}, {{kNaN}, {kNaN}}))[0], 1);
  EXPECT_EQ(ints(eval(Op::LogicalNot, {DType::Float32}, {{kNaN, 0, -0.0, 2}})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_TRUE(std::isnan(doubles(eval(Op::Sign, {DType::Float32}, {{kNaN}}))[0]));
  EXPECT_TRUE(std::isnan(doubles(eval(Op::Relu, {DType::Float32}, {{kNaN}}))[0]));
  EXPECT_EQ(doubles(eval(Op::Sigmoid, {DType::Float32}, {{-1000, 1000}})), (std::vector<double>{0, 1}));
  EXPECT_EQ(ints(eval(Op::IsNan, {DType::Int32}, {{0, 1}})), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(ints(eval(Op::IsInf, {DType::Float16}, {{kInf, -kInf, 1, kNaN}})), (std::vector<int64_t>{1, 1, 0, 0}));
}

TEST(ReferenceHandComputed, HalfPrecisionRoundsOnceOnStore) {
  // 2049 is not a float16; 2048 + 1 computed in double rounds to even: 2048.
  EXPECT_EQ(doubles(eval(Op::Add, {DType::Float16, DType::Float16}, {{2048}, {1}})), (std::vector<double>{2048}));
  EXPECT_EQ(doubles(eval(Op::Add, {DType::Float16, DType::Float16}, {{2048}, {3}})), (std::vector<double>{2052}));
  EXPECT_EQ(doubles(eval(Op::Mul, {DType::Float16, DType::Float16}, {{300}, {300}})), (std::vector<double>{kInf}));
  EXPECT_EQ(doubles(eval(Op::Add, {DType::BFloat16, DType::BFloat16}, {{256}, {1}})), (std::vector<double>{256}));
}

// --- reductions ---------------------------------------------------------------

// op over `axes` of a float64 array of `shape` holding `values`, read
// through `view` (movement ops applied to the input).
Array reduce(Op op, DType t, const Shape& shape, const std::vector<double>& values, std::vector<int64_t> axes,
             const std::function<NodeId(Graph&, NodeId)>& view = {}) {
  Graph g;
  NodeId x = g.input(t, shape);
  if (view) x = view(g, x);
  NodeId r = g.apply(op, {x}, Attr{std::move(axes), {}});
  std::vector<Array> in{make_array(t, shape, values)};
  return reference::evaluate(g, in, std::vector<NodeId>{r})[0];
}

TEST(ReferenceReduce, SumOverEachAxisKeepsThemAsOne) {
  std::vector<double> m = {1, 2, 3, 4, 5, 6};  // [[1, 2, 3], [4, 5, 6]]
  Array a0 = reduce(Op::Sum, DType::Float32, {2, 3}, m, {0});
  EXPECT_EQ(a0.shape, (Shape{1, 3}));
  EXPECT_EQ(doubles(a0), (std::vector<double>{5, 7, 9}));
  Array a1 = reduce(Op::Sum, DType::Float32, {2, 3}, m, {1});
  EXPECT_EQ(a1.shape, (Shape{2, 1}));
  EXPECT_EQ(doubles(a1), (std::vector<double>{6, 15}));
  Array all = reduce(Op::Sum, DType::Float32, {2, 3}, m, {0, 1});
  EXPECT_EQ(all.shape, (Shape{1, 1}));
  EXPECT_EQ(doubles(all), (std::vector<double>{21}));
  EXPECT_EQ(doubles(reduce(Op::Prod, DType::Float32, {2, 3}, m, {1})), (std::vector<double>{6, 120}));
}

TEST(ReferenceReduce, KeepdimsFalseIsAReshapeOfTheResult) {
  Graph g;
  NodeId x = g.input(DType::Float64, {2, 3, 4});
  NodeId r = g.apply(Op::Sum, {x}, Attr{{0, 2}, {}});
  NodeId dropped = g.apply(Op::Reshape, {r}, Attr{{3}, {}});
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  std::vector<Array> in{make_array(DType::Float64, {2, 3, 4}, v)};
  std::vector<Array> out = reference::evaluate(g, in, std::vector<NodeId>{r, dropped});
  // Brute force: sum over i and k of x[i][j][k] = 12 i + 4 j + k.
  std::vector<double> want(3, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want[j] += 12 * i + 4 * j + k;
  EXPECT_EQ(out[0].shape, (Shape{1, 3, 1}));
  EXPECT_EQ(doubles(out[0]), want);
  EXPECT_EQ(out[1].shape, (Shape{3}));
  EXPECT_EQ(doubles(out[1]), want);
}

TEST(ReferenceReduce, ReadsThroughViews) {
  std::vector<double> m = {1, 2, 3, 4, 5, 6};  // [[1, 2, 3], [4, 5, 6]]
  auto transpose = [](Graph& g, NodeId id) { return g.apply(Op::Permute, {id}, Attr{{1, 0}, {}}); };
  // x.T is [[1, 4], [2, 5], [3, 6]]; max over its axis 1 and argmax over its axis 0.
  EXPECT_EQ(doubles(reduce(Op::Max, DType::Float32, {2, 3}, m, {1}, transpose)), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(ints(reduce(Op::ArgMax, DType::Float32, {2, 3}, m, {0}, transpose)), (std::vector<int64_t>{2, 2}));
  // x[::-1, ::-2] is [[6, 4], [3, 1]].
  auto reversed = [](Graph& g, NodeId id) { return g.apply(Op::Slice, {id}, Attr{{1, 2, -1, -2, 2, 2}, {}}); };
  EXPECT_EQ(doubles(reduce(Op::Sum, DType::Float32, {2, 3}, m, {1}, reversed)), (std::vector<double>{10, 4}));
  EXPECT_EQ(ints(reduce(Op::ArgMin, DType::Float32, {2, 3}, m, {1}, reversed)), (std::vector<int64_t>{1, 1}));
  // A broadcast input: [1, 2, 3] expanded to [4, 3] sums each column 4 times.
  Graph g;
  NodeId x = g.input(DType::Int32, {3});
  NodeId s = g.apply(Op::Sum, {g.broadcast_to(x, {4, 3})}, Attr{{0}, {}});
  std::vector<Array> in{make_array(DType::Int32, {3}, {1, 2, 3})};
  EXPECT_EQ(ints(reference::evaluate(g, in, std::vector<NodeId>{s})[0]), (std::vector<int64_t>{4, 8, 12}));
}

TEST(ReferenceReduce, MaxMinPropagateNaN) {
  std::vector<double> v = {1, kNaN, 3, -1, 0, 2};
  std::vector<double> mx = doubles(reduce(Op::Max, DType::Float64, {2, 3}, v, {1}));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], 2);
  std::vector<double> mn = doubles(reduce(Op::Min, DType::Float64, {2, 3}, v, {1}));
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_EQ(mn[1], -1);
  // A NaN first must not be replaced by what follows.
  EXPECT_TRUE(std::isnan(doubles(reduce(Op::Max, DType::Float32, {3}, {kNaN, 1, 2}, {0}))[0]));
  EXPECT_EQ(doubles(reduce(Op::Max, DType::Float32, {2}, {-kInf, -kInf}, {0}))[0], -kInf);
}

TEST(ReferenceReduce, ArgMaxArgMinOfNaNAndTies) {
  // The first NaN wins, as NumPy.
  EXPECT_EQ(ints(reduce(Op::ArgMax, DType::Float32, {5}, {1, kNaN, 3, kNaN, 9}, {0})), (std::vector<int64_t>{1}));
  EXPECT_EQ(ints(reduce(Op::ArgMin, DType::Float32, {5}, {1, -5, kNaN, kNaN, -9}, {0})), (std::vector<int64_t>{2}));
  EXPECT_EQ(ints(reduce(Op::ArgMax, DType::Float32, {2}, {kNaN, 1}, {0})), (std::vector<int64_t>{0}));
  // Ties: the first occurrence.
  EXPECT_EQ(ints(reduce(Op::ArgMax, DType::Int32, {5}, {3, 1, 3, 0, 3}, {0})), (std::vector<int64_t>{0}));
  EXPECT_EQ(ints(reduce(Op::ArgMin, DType::Int32, {5}, {3, 0, 3, 0, 3}, {0})), (std::vector<int64_t>{1}));
  // Over both axes: the row-major position, as NumPy's argmax without axis.
  EXPECT_EQ(ints(reduce(Op::ArgMax, DType::Float32, {2, 3}, {1, 2, 3, 9, 5, 9}, {0, 1})), (std::vector<int64_t>{3}));
  Array a = reduce(Op::ArgMax, DType::Float32, {2, 3}, {1, 2, 3, 9, 5, 9}, {1});
  EXPECT_EQ(a.dtype, DType::Int64);
  EXPECT_EQ(ints(a), (std::vector<int64_t>{2, 0}));
}

TEST(ReferenceReduce, IntegerSumsAccumulateInInt64) {
  Array s = reduce(Op::Sum, DType::Int8, {3}, {100, 100, 100}, {0});
  EXPECT_EQ(s.dtype, DType::Int64);
  EXPECT_EQ(ints(s), (std::vector<int64_t>{300}));
  EXPECT_EQ(ints(reduce(Op::Sum, DType::Bool, {4}, {1, 0, 1, 1}, {0})), (std::vector<int64_t>{3}));
  EXPECT_EQ(ints(reduce(Op::Prod, DType::UInt8, {3}, {200, 2, 3}, {0})), (std::vector<int64_t>{1200}));
  EXPECT_EQ(ints(reduce(Op::Max, DType::Int8, {3}, {-128, 5, 127}, {0})), (std::vector<int64_t>{127}));
  EXPECT_EQ(ints(reduce(Op::Min, DType::UInt8, {3}, {200, 5, 255}, {0})), (std::vector<int64_t>{5}));
}

TEST(ReferenceReduce, HalfPrecisionAccumulatesWide) {
  // 4096 ones: a float16 accumulator would stop at 2048.
  Array s = reduce(Op::Sum, DType::Float16, {4096}, std::vector<double>(4096, 1.0), {0});
  EXPECT_EQ(s.dtype, DType::Float16);
  EXPECT_EQ(doubles(s), (std::vector<double>{4096}));
}

TEST(ReferenceReduce, EmptyAxesGiveTheIdentity) {
  Array s = reduce(Op::Sum, DType::Float32, {2, 0}, {}, {1});
  EXPECT_EQ(s.shape, (Shape{2, 1}));
  EXPECT_EQ(doubles(s), (std::vector<double>{0, 0}));
  EXPECT_EQ(doubles(reduce(Op::Prod, DType::Float32, {2, 0}, {}, {1})), (std::vector<double>{1, 1}));
  EXPECT_EQ(ints(reduce(Op::Prod, DType::Int32, {0}, {}, {0})), (std::vector<int64_t>{1}));
  // Reducing the non-empty axis of an empty array is empty.
  EXPECT_EQ(reduce(Op::Max, DType::Float32, {0, 3}, {}, {1}).shape, (Shape{0, 1}));
}

// --- library ops, leaves, outputs ---------------------------------------------

TEST(ReferenceLibrary, MatMulIncludingATransposedOperand) {
  Graph g;
  NodeId a = g.input(DType::Float32, {2, 3});
  NodeId b = g.input(DType::Float32, {2, 3});
  NodeId bt = g.apply(Op::Permute, {b}, Attr{{1, 0}, {}});
  NodeId c = g.apply(Op::MatMul, {a, bt});  // a @ b.T
  std::vector<Array> in{make_array(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                        make_array(DType::Float32, {2, 3}, {1, 0, -1, 2, 1, 0})};
  Array r = reference::evaluate(g, in, std::vector<NodeId>{c})[0];
  EXPECT_EQ(r.shape, (Shape{2, 2}));
  EXPECT_EQ(doubles(r), (std::vector<double>{-2, 4, -2, 13}));
}

TEST(ReferenceLibrary, Conv2dWithPadding) {
  Graph g;
  NodeId x = g.input(DType::Float32, {1, 1, 2, 2});
  NodeId w = g.input(DType::Float32, {1, 1, 2, 2});
  NodeId y = g.apply(Op::Conv2d, {x, w}, Attr{{1, 1, 1, 1, 1, 1, 1}, {}});
  std::vector<Array> in{make_array(DType::Float32, {1, 1, 2, 2}, {1, 2, 3, 4}),
                        make_array(DType::Float32, {1, 1, 2, 2}, {1, 1, 1, 1})};
  Array r = reference::evaluate(g, in, std::vector<NodeId>{y})[0];
  EXPECT_EQ(r.shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(doubles(r), (std::vector<double>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
}

TEST(ReferenceLeaves, ConstAndArange) {
  Graph g;
  NodeId c = g.constant(DType::Float16, 0.1);
  NodeId fa = g.arange(DType::Float32, 4, 1.0, -0.5);
  NodeId ia = g.arange(DType::Int8, 4, 126, 1);
  std::vector<Array> r = reference::evaluate(g, {}, std::vector<NodeId>{c, fa, ia});
  EXPECT_EQ(doubles(r[0]), (std::vector<double>{round_to(DType::Float16, 0.1)}));
  EXPECT_EQ(doubles(r[1]), (std::vector<double>{1, 0.5, 0, -0.5}));
  EXPECT_EQ(ints(r[2]), (std::vector<int64_t>{126, 127, -128, -127}));  // wraps in the dtype
}

TEST(ReferenceLeaves, NegativeZeroConstantKeepsItsSign) {
  Graph g;
  NodeId z = g.constant(DType::Float32, -0.0);
  NodeId inv = g.apply(Op::Div, {g.constant(DType::Float32, 1.0), z});
  std::vector<Array> r = reference::evaluate(g, {}, std::vector<NodeId>{z, inv});
  EXPECT_TRUE(std::signbit(doubles(r[0])[0]));
  EXPECT_EQ(doubles(r[1])[0], -kInf);
}

TEST(ReferenceOutputs, AViewOutputIsMadeDense) {
  Graph g;
  NodeId x = g.input(DType::Int32, {2, 3});
  NodeId t = g.apply(Op::Permute, {x}, Attr{{1, 0}, {}});
  std::vector<Array> in{make_array(DType::Int32, {2, 3}, {1, 2, 3, 4, 5, 6})};
  std::vector<Array> r = reference::evaluate(g, in, std::vector<NodeId>{t, x});
  EXPECT_EQ(r[0].shape, (Shape{3, 2}));
  EXPECT_EQ(ints(r[0]), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(ints(r[1]), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(ReferenceOutputs, WrongInputsAreUserErrors) {
  Graph g;
  NodeId x = g.input(DType::Float32, {2});
  std::vector<NodeId> outs{g.apply(Op::Exp, {x})};
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([&] { reference::evaluate(g, {}, outs); }), "1 inputs, got 0"));
  std::vector<Array> wrong{make_array(DType::Float64, {2}, {1, 2})};
  std::string msg = error_of<std::invalid_argument>([&] { reference::evaluate(g, wrong, outs); });
  EXPECT_TRUE(contains(msg, "float64[2]"));
  EXPECT_TRUE(contains(msg, "float32[2]"));
}

}  // namespace
}  // namespace braze
