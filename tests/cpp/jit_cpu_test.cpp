// The CPU JIT against the spec interpreter, on both ISAs: hand-picked
// kernels (tails, blocks, transposed and half inputs, NaN), a fuzzer over
// random graphs, and the error of the vector math over dense sweeps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <random>

#include "fusion/schedule.h"
#include "fusion/spec_interpreter.h"
#include "graph/half.h"
#include "graph/reference.h"
#include "jit_cpu/kernel_cache.h"
#include "runtime/braze.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "tests/cpp/random_graph.h"

namespace braze {
namespace {

std::vector<jit::Isa> isas() {
  std::vector<jit::Isa> out;
  for (jit::Isa i : {jit::Isa::Avx512, jit::Isa::Avx2})
    if (jit::cpu_supports(i)) out.push_back(i);
  return out;
}

double value_at(const Array& a, int64_t i) { return load_double(a.dtype, a.data.get(), i); }

// Within a relative and absolute tolerance; NaN only where NaN; same inf.
::testing::AssertionResult close(const Array& got, const Array& want, double tol) {
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = value_at(got, i), w = value_at(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (g == w) continue;
    if (std::isnan(g) || std::isnan(w) || std::isinf(g) || std::isinf(w) ||
        std::abs(g - w) > tol * (1 + std::abs(w)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

struct Checked {
  int compiled = 0, interpreted = 0;
  std::vector<std::string> why;  // per interpreted kernel
};

// Runs every kernel step of the schedule both generated (for `isa`) and
// interpreted, compares their outputs, and feeds the interpreted ones on.
Checked check_schedule(const Schedule& s, std::span<const Array> inputs, jit::Isa isa, double tol) {
  Checked c;
  const Graph& g = s.graph;
  std::unordered_map<NodeId, Array> buffers;
  for (NodeId id : g.inputs()) buffers[id] = inputs[g[id].attr.ints[0]];
  for (const Step& st : s.steps) {
    if (st.group.kind == FusedGroup::Kind::Library) {
      NodeId id = st.group.nodes[0];
      std::vector<reference::StridedArray> in;
      for (NodeId i : g[id].inputs) in.push_back({&buffers.at(g.base(i)), g[i].view});
      buffers[id] = reference::evaluate_node(g[id], in);
      continue;
    }
    std::vector<KernelArg> args(st.reads.size());
    for (size_t k = 0; k < st.reads.size(); ++k) {
      const Node& n = g[st.reads[k]];
      if (st.spec.inputs[k].kind == KernelInput::Kind::Buffer) args[k].data = buffers.at(st.reads[k]).data.get();
      for (size_t j = 0; j < n.attr.reals.size(); ++j) args[k].real[j] = n.attr.reals[j];
      for (size_t j = 0; j < n.attr.ints.size(); ++j) args[k].integer[j] = n.attr.ints[j];
    }
    std::vector<Array> want, got;
    std::vector<std::byte*> want_ptr, got_ptr;
    for (NodeId o : st.group.outputs) {
      want.push_back(allocate_array(g[o].dtype, g[o].shape()));
      got.push_back(allocate_array(g[o].dtype, g[o].shape()));
      want_ptr.push_back(want.back().data.get());
      got_ptr.push_back(got.back().data.get());
    }
    interpret_spec(st.spec, args, want_ptr);
    std::string why;
    std::unique_ptr<jit::CompiledKernel> k = jit::compile(st.spec, isa, why);
    if (k) {
      ++c.compiled;
      jit::launch(*k, st.spec, args, got_ptr);
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_TRUE(close(got[i], want[i], tol)) << "output " << i << " on " << jit::name(isa) << "\n"
                                                 << canonical_text(st.spec);
    } else {
      ++c.interpreted;
      c.why.push_back(why);
    }
    for (size_t i = 0; i < want.size(); ++i) buffers[st.group.outputs[i]] = want[i];
  }
  return c;
}

Checked check(std::initializer_list<Tensor> roots, double tol = 2e-6) {
  Lowered l = lower(std::span<const Tensor>(roots.begin(), roots.size()));
  Schedule s = make_schedule(l.graph);
  Checked total;
  for (jit::Isa isa : isas()) {
    Checked c = check_schedule(s, l.inputs, isa, tol);
    total.compiled += c.compiled;
    total.interpreted += c.interpreted;
    total.why.insert(total.why.end(), c.why.begin(), c.why.end());
  }
  return total;
}

Tensor random_tensor(Shape shape, uint32_t seed, float scale = 2.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = dist(rng);
  return from_vector<float>(v, std::move(shape));
}

TEST(JitCpu, RowKernelsAtEveryTailAndBlockLength) {
  for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 100, 257, 1000, 4099}) {
    SCOPED_TRACE("row length " + std::to_string(n));
    Tensor x = random_tensor({3, n}, static_cast<uint32_t>(n));
    Checked c = check({softmax(x), log_softmax(x), layer_norm(x), rms_norm(x), sum(x, Axes{{-1}}),
                       max(x, Axes{{-1}}), min(x * 2.0, Axes{{-1}}), logsumexp(x, Axes{{-1}}), exp(x) + 1.0},
                      1e-5);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    EXPECT_GT(c.compiled, 0);
  }
}

TEST(JitCpu, TransposedSlicedAndBroadcastInputs) {
  Tensor a = random_tensor({37, 19}, 1), b = random_tensor({19}, 2);
  std::vector<Index> rev{Slice{std::nullopt, std::nullopt, -1}, Slice{1, std::nullopt, 2}};
  Tensor y = tanh(transpose(a) * reshape(b, {19, 1})) + sigmoid(transpose(a));
  Tensor z = index(a, rev) - 1.0;
  Checked c = check({y, z, softmax(transpose(a))});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, TiledTransposesAtEveryGroupAndBlockEdge) {
  // Note [Tiled transposes]: groups of 64 rows, 16-column blocks; rows past
  // the last full group and columns past the last full block take the
  // per-row path, and launch splits rows across threads off group bounds.
  for (int64_t rows : {64, 65, 130, 200}) {
    for (int64_t cols : {3, 8, 16, 17, 40}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor a = random_tensor({cols, rows}, 5), b = random_tensor({cols, rows}, 6);
      Tensor x = random_tensor({rows, cols}, 7), s = random_tensor({rows, 1}, 8);
      Tensor t = transpose(a);
      Checked c = check({t + x, t * s - transpose(b), astype(t, DType::Float16), maximum(t, 0.0) * x + s,
                         index(t, std::vector<Index>{Slice{std::nullopt, std::nullopt, -1}}) + 1.0},
                        0);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
  Tensor p = random_tensor({3, 70, 21}, 9);
  Checked c = check({permute(p, {2, 0, 1}) * 2.0, permute(p, {0, 2, 1}) + permute(p, {0, 2, 1})}, 0);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, ColumnReductionsAtEveryTileAndBlockEdge) {
  // Note [Column reductions]: tiles of 1024 columns, sums blocked by 64 rows.
  for (int64_t rows : {0, 2, 63, 64, 65, 130}) {
    for (int64_t cols : {2, 7, 8, 17, 1023, 1025, 2049}) {
      if (rows * cols > 70000) continue;
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = random_tensor({rows, cols}, 10), b = random_tensor({cols}, 11);
      Checked c = rows == 0 ? check({sum(x, Axes{{0}}), prod(x, Axes{{0}})})
                            : check({sum(x, Axes{{0}}), max(x * 2.0, Axes{{0}}), min(x, Axes{{0}}) + b,
                                     prod(x * 0.5 + 1.0, Axes{{0}}), mean(exp(x) * b, Axes{{0}}, true)},
                                    1e-5);
      if (rows > 0) check({astype(mean(x, Axes{{0}}), DType::Float16)}, 1e-3);  // a half ulp of rounding apart
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
  // The middle axis of three, a transposed input, a half input.
  Tensor y = random_tensor({3, 70, 21}, 12), t = random_tensor({40, 30}, 13);
  Checked c = check({sum(y, Axes{{1}}), max(transpose(t), Axes{{0}}), sum(astype(y, DType::BFloat16), Axes{{1}})}, 1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  // Reduced axes further out, with kept axes between them and the row (a
  // batch axis of NCHW-like data); a reduced group of two merged axes.
  Tensor z = random_tensor({9, 5, 4, 33}, 14);
  c = check({sum(z, Axes{{0}}), max(z, Axes{{1}}), mean(z * 2.0, Axes{{0, 1}}), min(transpose(z, {{0, 2, 1, 3}}), Axes{{0}}),
             sum(z, Axes{{0, 2}}, true)},
            1e-5);
  EXPECT_EQ(c.interpreted, 1) << ::testing::PrintToString(c.why);  // only the last: two separate reduced groups
  // Reduced again or broadcast back down the columns: interpreted, still right.
  check({var(t, Axes{{0}}), t - mean(t, Axes{{0}}, true)}, 1e-5);
}

TEST(JitCpu, HalfAndBoolInputsAndOutputs) {
  Tensor x = random_tensor({5, 33}, 3);
  for (DType t : {DType::Float16, DType::BFloat16}) {
    Tensor h = astype(x, t);
    realize({h});
    Checked c = check({h * 2.0 + 1.0, softmax(h), sum(h, Axes{{-1}}), astype(h, DType::Float32),
                       where(h > 0.0, h, -h)},
                      1e-2);
    EXPECT_EQ(c.interpreted, 0) << name(t) << ::testing::PrintToString(c.why);
  }
  Tensor m = x > 0.5;
  realize({m});
  Checked c = check({where(m, x, 0.0), logical_not(m) || (x < -1.0), astype(m, DType::Float32) + x});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, NaNAndInfinityPropagate) {
  float nan = std::nanf(""), inf = INFINITY;
  Tensor x = from_vector<float>({1, nan, 3, -inf, inf, 0, -0.0f, 2, 5, nan, 1, 1, 4, -2, 7, 8, 9}, {1, 17});
  Checked c = check({max(x, Axes{{-1}}), min(x, Axes{{-1}}), sum(x, Axes{{-1}}), maximum(x, 1.0), minimum(x, 1.0),
                     relu(x), sign(x), abs(x), exp(x), log(x), tanh(x), sigmoid(x), isnan(x), isinf(x), floor(x)});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, ZeroSizeRowsAndScalars) {
  Tensor e = random_tensor({4, 0}, 4);
  Tensor s = from_vector<float>({2.5f}, {});
  check({sum(e, Axes{{-1}}), exp(e), s * s + 1.0, sum(s)});
}

// The differential fuzzer: every kernel of a random graph generated for
// each ISA against the spec interpreter, then the whole graph as realize
// runs it against the reference interpreter.
TEST(JitCpu, RandomGraphsMatchTheReference) {
  int compiled = 0, interpreted = 0;
  std::map<std::string, int> why;
  const uint32_t graphs = testing::fuzz_graphs(500);
  for (uint32_t seed = testing::fuzz_first(); seed < testing::fuzz_first() + graphs; ++seed) {
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed, /*well_conditioned=*/true).build(inputs);
    SCOPED_TRACE("seed " + std::to_string(seed));
    Schedule s = make_schedule(g);
    for (jit::Isa isa : isas()) {
      Checked c = check_schedule(s, inputs, isa, 1e-4);
      compiled += c.compiled;
      interpreted += c.interpreted;
      for (const std::string& w : c.why) ++why[w];
    }
    std::vector<Array> got = execute(s, inputs, allocate_array);
    std::vector<Array> want = reference::evaluate(g, inputs, g.outputs);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(close(got[i], want[i], 1e-4)) << "output " << i << "\n" << explain(s);
    if (HasFailure()) break;
  }
  std::cout << graphs << " graphs: " << compiled << " kernels generated, " << interpreted << " interpreted\n";
  for (auto& [w, n] : why) std::cout << "  " << n << " x " << w << "\n";
  EXPECT_GT(compiled, 3 * interpreted) << compiled << " compiled, " << interpreted << " interpreted";
}

// Units in the last place between a float result and the exact value.
double ulps(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : INFINITY;
  constexpr double kMax = 3.4028234663852886e38;  // FLT_MAX
  if (std::isinf(exact)) return static_cast<double>(got) == exact ? 0 : INFINITY;
  if (std::abs(exact) >= kMax + std::ldexp(1.0, 103))  // rounds to inf in float32
    return std::isinf(got) && std::signbit(got) == std::signbit(exact) ? 0 : INFINITY;
  // Past FLT_MAX, measure in the ulp at FLT_MAX: inf is 1 ulp above it.
  double g = std::isinf(got) ? std::copysign(kMax + std::ldexp(1.0, 104), got) : got;
  float e = static_cast<float>(std::min(std::abs(exact), kMax));
  double ulp = std::nextafter(e, INFINITY) - static_cast<double>(e);
  if (e == static_cast<float>(kMax)) ulp = std::ldexp(1.0, 104);
  if (std::abs(exact) < 1.1754943508222875e-38) ulp = 1.401298464324817e-45;  // denormal spacing
  return std::abs(g - exact) / ulp;
}

// Dense sweep: every 97th float bit pattern (both signs), plus the edges.
std::vector<float> sweep() {
  std::vector<float> v;
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 97) v.push_back(bits_float(static_cast<uint32_t>(bits)));
  for (float e : {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e-45f, -1e-45f, 1.17549435e-38f, 88.72f, 88.73f,
                  -87.33f, -103.97f, -104.0f, 0.625f, -0.625f, 1.0f, -1.0f})
    v.push_back(e);
  return v;
}

TEST(JitCpu, VectorMathErrorBounds) {
  // The bounds each function documents in jit_cpu/vector_ops.h.
  struct Case {
    Tensor (*f)(const Operand&);
    double (*exact)(double);
    double max_ulps;
    const char* name;
  };
  const Case cases[] = {
      {exp, [](double x) { return std::exp(x); }, 2, "exp"},
      {log, [](double x) { return std::log(x); }, 2, "log"},
      {tanh, [](double x) { return std::tanh(x); }, 2, "tanh"},
      {sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, 3, "sigmoid"},
  };
  std::vector<float> xs = sweep();
  Tensor x = from_vector<float>(xs, {static_cast<int64_t>(xs.size())});
  for (const Case& c : cases) {
    Lowered l = lower(std::vector<Tensor>{c.f(x)});
    Schedule s = make_schedule(l.graph);
    ASSERT_EQ(s.steps.size(), 1u);
    for (jit::Isa isa : isas()) {
      std::string why;
      auto k = jit::compile(s.steps[0].spec, isa, why);
      ASSERT_TRUE(k) << why;
      Array out = allocate_array(DType::Float32, {x.shape()[0]});
      KernelArg in;
      in.data = l.inputs[0].data.get();
      std::byte* o = out.data.get();
      jit::launch(*k, s.steps[0].spec, {&in, 1}, {&o, 1});
      const float* got = reinterpret_cast<const float*>(out.data.get());
      double worst = 0;
      float worst_x = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        double e = ulps(got[i], c.exact(xs[i]));
        if (e > worst) worst = e, worst_x = xs[i];
      }
      EXPECT_LE(worst, c.max_ulps) << c.name << " on " << jit::name(isa) << ": worst at x = " << worst_x;
    }
  }
}

}  // namespace
}  // namespace braze
