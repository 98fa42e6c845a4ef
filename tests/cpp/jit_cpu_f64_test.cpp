// float64 through the CPU JIT (Note [Wide kernels] in jit_cpu/lanes.h), on
// both ISAs, against the spec interpreter: softmax, layer_norm and
// element-wise chains as one generated kernel each, mixed dtypes, and the
// error of the float64 vector math over dense sweeps. On a CPU without
// AVX-512 its kernels are generated but not run (Checked::not_run).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string_view>

#include "runtime/context.h"
#include "tests/cpp/jit_check.h"

namespace braze {
namespace {

using testing::Checked;
using testing::check_on;
using testing::isas;
using testing::run_single_kernel;

constexpr jit::Isa kBothIsas[] = {jit::Isa::Avx512, jit::Isa::Avx2};

Checked check_both(std::initializer_list<Tensor> roots, double tol = 1e-13) {
  return check_on(kBothIsas, std::span<const Tensor>(roots.begin(), roots.size()), tol);
}

void expect_all_generated(const Checked& c) {
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  EXPECT_GT(c.compiled, 0);
}

// rows x cols of float64, normal(0, 3) with NaN, +-inf and -0 sprinkled in
// when `specials`.
Tensor f64s(int64_t rows, int64_t cols, uint32_t seed, bool specials = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0.0, 3.0);
  std::vector<double> v(static_cast<size_t>(rows * cols));
  const double kSpecial[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
  for (size_t i = 0; i < v.size(); ++i) v[i] = specials && i % 13 == 5 ? kSpecial[i / 13 % 5] : d(rng);
  return from_vector<double>(v, {rows, cols}, DType::Float64);
}

int64_t stat(std::string_view name) {
  for (const auto& [k, v] : Runtime::get().stats_snapshot())
    if (k == name) return v;
  ADD_FAILURE() << "no counter " << name;
  return -1;
}

// The composites of NumPy's default dtype, each one generated kernel on
// both ISAs, at lengths with tails and several sum blocks.
TEST(JitCpuF64, SoftmaxLayerNormLogsumexpVarAreOneKernelEach) {
  for (int64_t cols : {1, 3, 4, 8, 19, 1000, 1027}) {
    SCOPED_TRACE(cols);
    Tensor x = f64s(5, cols, 1);
    for (const Tensor& y : {softmax(x), log_softmax(x), layer_norm(x), logsumexp(x, std::vector<int64_t>{1}),
                            var(x, std::vector<int64_t>{1}), mean(x, std::vector<int64_t>{1}), rms_norm(x)}) {
      Checked c = check_both({y}, 1e-12);
      expect_all_generated(c);
      EXPECT_EQ(c.compiled, 2) << "one kernel per ISA";
    }
  }
}

// Through the runtime: nothing is interpreted (kernels_interpreted == 0).
TEST(JitCpuF64, RuntimeInterpretsNoFloat64Kernel) {
  Runtime& rt = Runtime::get();
  if (rt.backend() == BackendKind::Reference) GTEST_SKIP() << "the reference backend runs no kernels";
  Tensor x = f64s(64, 300, 2), w = f64s(1, 300, 3);
  rt.reset_stats();
  Tensor chain = sqrt(abs(exp(x * 0.5 - w) + 1.0) / (maximum(x, w) * x + 2.0)) - log(abs(x) + 1.0) +
                 sin(x) * cos(w) + power(abs(x), w) + erf(x) - expm1(w) * log1p(abs(x));
  realize({softmax(x), layer_norm(x, reshape(w, {300})), chain});
  EXPECT_EQ(stat("kernels_interpreted"), 0);
  EXPECT_GE(stat("kernels_launched"), 3);
}

// expm1, log1p, sin, cos, erf and pow of float64 in one kernel per ISA
// (AVX-512 generated, run where the CPU has it), with specials and sin/cos
// arguments past the fast reduction (the host call) in the data, at every
// tail length.
TEST(JitCpuF64, TranscendentalsInOneKernel) {
  for (int64_t n : {1, 3, 4, 9, 33}) {
    SCOPED_TRACE(n);
    Tensor a = f64s(7, n, 21, true), b = f64s(7, n, 22, true);
    std::vector<double> big;
    for (int64_t i = 0; i < 7 * n; ++i) big.push_back(i % 3 == 0 ? 1e300 / (i + 1) : i % 3 == 1 ? -7e9 * i : 0.5 * i);
    Tensor c = from_vector<double>(big, {7, n}, DType::Float64);
    Tensor y = sin(a) + cos(b) * erf(a) + power(abs(a), b * 0.25) + expm1(a * 0.5) - log1p(abs(b));
    Checked k = check_both({y, sin(c) - cos(c), power(a, 3.0) + power(-2.0 + a * 0.0, b)}, 1e-12);
    expect_all_generated(k);
    EXPECT_EQ(k.compiled, 6) << "one kernel per root and ISA";
  }
}

// A 10-op chain over contiguous, transposed and broadcast float64 inputs
// is one kernel, at every tail length.
TEST(JitCpuF64, ElementwiseChainWithBroadcastAndTransposedInputs) {
  for (int64_t n : {1, 3, 5, 8, 17, 70}) {
    SCOPED_TRACE(n);
    Tensor a = f64s(n, 33, 4, true), b = transpose(f64s(33, n, 5, true)), c = f64s(1, 33, 6);
    Tensor y = where(a > b, exp(a - c), -b) * 0.25 + minimum(abs(a), sqrt(abs(b))) / (c * c + 1.0);
    Checked k = check_both({y});
    expect_all_generated(k);
    EXPECT_EQ(k.compiled, 2);
  }
}

// float32, int32 and bool values beside float64 ones: widened on load,
// float32 results rounded as float32 arithmetic rounds, bools stored.
TEST(JitCpuF64, MixedDtypesInOneKernel) {
  Tensor d = f64s(9, 21, 7, true);
  Tensor f = astype(f64s(9, 21, 8, true), DType::Float32);
  Tensor i = astype(f64s(9, 21, 9) * 1000.0, DType::Int32);
  Tensor m = f64s(9, 21, 10) > 0.0;
  realize({f, i, m});  // inputs of these dtypes, not casts in the kernels below
  expect_all_generated(check_both({d + f, d * i, where(m, d, f)}));
  expect_all_generated(check_both({d > f, (d < 1.0) && m, astype(d, DType::Float32)}));
  expect_all_generated(check_both({astype(d, DType::Float32) * f + f, astype(m, DType::Float64) - d, f + sum(d)}));
  expect_all_generated(check_both({equal(i, d), maximum(i, d), m + m * d}));
  expect_all_generated(check_both({sum(d * i, std::vector<int64_t>{1}), max(d, std::vector<int64_t>{1}),
                                   min(abs(d), std::vector<int64_t>{1}), prod(d / 4.0, std::vector<int64_t>{1})}));
}

// Math functions of float32 values beside float64 ones: computed in
// float64 and rounded once to float32 (Note [Wide kernels]), within an ulp
// of float32 of the reference's float32 functions.
TEST(JitCpuF64, Float32MathInWideKernels) {
  Tensor d = f64s(9, 21, 31, true);
  Tensor f = astype(f64s(9, 21, 32, true), DType::Float32);
  realize({f});
  expect_all_generated(check_both({d + exp(f), sin(f) * d - cos(f), d / (tanh(f) + 2.0)}, 2e-6));
  expect_all_generated(check_both({erf(f) + d, power(abs(f), f) - d, d * sigmoid(f) + log1p(abs(f))}, 2e-6));
  expect_all_generated(check_both({expm1(f) + d, log(abs(f)) + log2(abs(f)) * d, exp2(f) - d}, 2e-6));
}

// Reductions down the columns (Note [Column reductions]), and down the
// columns and along the rows at once, at tile, block and tail edges.
TEST(JitCpuF64, ColumnReductions) {
  for (int64_t rows : {1, 7, 64, 65, 200})
    for (int64_t cols : {1, 5, 8, 2049}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = f64s(rows, cols, 11, rows == 7);
      const std::vector<int64_t> down{0};
      expect_all_generated(check_both({sum(x, down), max(x, down)}, 1e-12));
      expect_all_generated(check_both({x - mean(x, down, true)}, 1e-12));
      expect_all_generated(check_both({var(x, down)}, 1e-12));
    }
  Tensor nchw = reshape(f64s(4 * 3, 5 * 7, 12), {4, 3, 5, 7});
  expect_all_generated(check_both({mean(nchw, std::vector<int64_t>{0, 2, 3})}, 1e-12));
}

// int64 arguments of float64 ops (NumPy's default int beside its default
// float): rounded to float64 once on load, as the reference converts them,
// past 2^53 and at both ends of the range; strided, broadcast and scalar.
TEST(JitCpuF64, Int64ArgumentsOfFloat64Ops) {
  std::vector<int64_t> v;
  const int64_t kEdges[] = {INT64_MIN, INT64_MIN + 1, -(int64_t{1} << 53) - 1, -65537, -1, 0, 1, 7,
                            (int64_t{1} << 53) + 1, (int64_t{1} << 62) + 3, INT64_MAX};
  std::mt19937_64 rng(5);
  for (int i = 0; i < 23 * 19; ++i) v.push_back(i % 3 == 0 ? kEdges[i / 3 % 11] : static_cast<int64_t>(rng()) >> (i % 60));
  Tensor n = from_vector<int64_t>(v, {23, 19}, DType::Int64);
  Tensor x = f64s(23, 19, 13, true), row = f64s(1, 19, 14);
  expect_all_generated(check_both({x * n, n + row, astype(n, DType::Float64) - x}));
  expect_all_generated(check_both({transpose(n) / transpose(x), x + from_vector<int64_t>({-3}, {1}, DType::Int64)}));
  expect_all_generated(check_both({softmax(x * n, 1) + n}));
  expect_all_generated(check_both({astype(n, DType::Float64), astype(transpose(n), DType::Float64)}, /*tol=*/0));  // rounded exactly so
}

// A long row's sum adds blocks (Note [Blocked sums]): its error is far
// below n ulps of the plain left-to-right sum.
TEST(JitCpuF64, BlockedRowSums) {
  const int64_t n = 1 << 20;
  std::vector<double> v(n, 0.1);
  Tensor x = from_vector<double>(v, {1, n}, DType::Float64);
  Tensor s = sum(x, std::vector<int64_t>{1});
  const double exact = static_cast<double>(static_cast<long double>(0.1) * n);  // 0.1 as a double, n times
  double plain = 0;
  for (double e : v) plain += e;
  EXPECT_LT(std::abs(s.item() - exact), std::abs(plain - exact) / 16) << s.item() << " vs " << plain;
  expect_all_generated(check_both({s}, 1e-12));
}

// --- the float64 vector math (jit_cpu/vector_math_f64.h) ------------------

// Units in the last place between a double result and the exact value.
double ulps(double got, long double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : INFINITY;
  const double e = static_cast<double>(exact);
  if (std::isinf(e)) return got == e ? 0 : INFINITY;
  if (std::isnan(got) || std::isinf(got)) return INFINITY;
  double ulp = std::nextafter(std::abs(e), INFINITY) - std::abs(e);
  if (std::abs(e) == DBL_MAX) ulp = std::ldexp(1.0, 971);
  if (std::abs(e) < DBL_MIN) ulp = std::ldexp(1.0, -1074);
  return static_cast<double>(std::abs(static_cast<long double>(got) - exact) / ulp);
}

// Every 2^44-th bit pattern (both signs, all exponents), dense linear
// sweeps where the functions live, and the edges: zeros, infinities, NaN,
// denormals, the overflow and underflow thresholds.
std::vector<double> sweep() {
  std::vector<double> v;
  for (uint64_t bits = 12345; bits < (1ull << 63); bits += (1ull << 44) + 977) {
    double x;
    std::memcpy(&x, &bits, 8);
    v.push_back(x);
    v.push_back(-x);
  }
  for (int i = 0; i <= 200000; ++i) v.push_back(-760.0 + 1480.0 * i / 200000);
  for (int i = 0; i <= 100000; ++i) v.push_back(0.5 + 1.5 * i / 100000);
  for (int i = 0; i <= 100000; ++i) v.push_back(-6.5 + 13.0 * i / 100000);  // erf's quarters
  for (int k = 1; k < 50; ++k) v.push_back(1 + std::ldexp(1.0, -k)), v.push_back(1 - std::ldexp(1.0, -k));
  for (double e : std::initializer_list<double>{0.0, INFINITY, NAN, 4.9406564584124654e-324, 1e-320, 2.2250738585072009e-308, 2.2250738585072014e-308,
                   DBL_MAX, 1.0, 709.78271289338397, 709.782712893384, 709.79, 710.0, 745.13321910194111, 745.1332191019412,
                   745.2, 708.39641853226408, 708.4, 1023.0, 1024.0, 1074.0, 1075.0, 1100.0, 1e300, 0.34657359027997264,
                   0.5, 2.0, 36.0, 37.0, 37.5, 40.0, 0x1p-54, 0x1p-53, 1e-10, 0.9999999999, 1.0000000001,
                   0x1p32, 0x1.0000000000001p32, 0x1p33, 1e15, 1e22, 0x1p1023, 6381956970095103.0 * 0x1p797})
    for (double sign : {1.0, -1.0}) v.push_back(sign * e);
  // log1p near -1 and expm1 where its halves change; sin and cos near
  // multiples of pi/2 (the reduction's hardest inputs) out to the fast
  // domain's end and past it.
  for (int i = 0; i <= 20000; ++i) v.push_back(-1 + std::ldexp(1.0, -1 - i % 53) * (1 + i / 53));
  for (double k = 1; k < 0x1p40; k = k * 1.37 + 1) {
    const double x = static_cast<double>(static_cast<long double>(k) * 1.57079632679489661923132169163975144L);
    for (double y = std::nextafter(std::nextafter(x, 0.0), 0.0), n = 0; n < 5; ++n, y = std::nextafter(y, INFINITY))
      v.push_back(y), v.push_back(-y);
  }
  return v;
}

TEST(JitCpuF64, VectorMathErrorBounds) {
  struct Case {
    Tensor (*f)(const Operand&);
    long double (*exact)(long double);
    double max_ulps;
    const char* name;
  };
  const Case cases[] = {
      {exp, [](long double x) { return expl(x); }, 1, "exp"},
      {exp2, [](long double x) { return exp2l(x); }, 1, "exp2"},
      {log, [](long double x) { return logl(x); }, 1, "log"},
      {log2, [](long double x) { return log2l(x); }, 2, "log2"},
      {sigmoid, [](long double x) { return 1 / (1 + expl(-x)); }, 2, "sigmoid"},
      {tanh, [](long double x) { return tanhl(x); }, 2, "tanh"},
      {expm1, [](long double x) { return expm1l(x); }, 1, "expm1"},
      {log1p, [](long double x) { return log1pl(x); }, 2, "log1p"},
      {sin, [](long double x) { return sinl(x); }, 1, "sin"},
      {cos, [](long double x) { return cosl(x); }, 1, "cos"},
      {tan, [](long double x) { return tanl(x); }, 2, "tan"},
      {erf, [](long double x) { return erfl(x); }, 1, "erf"},
  };
  const std::vector<double> xs = sweep();
  Tensor x = from_vector<double>(xs, {static_cast<int64_t>(xs.size())}, DType::Float64);
  for (const Case& c : cases)
    for (jit::Isa isa : isas()) {
      std::vector<double> got = run_single_kernel<double>(c.f(x), isa);
      ASSERT_EQ(got.size(), xs.size());
      double worst = 0, worst_x = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        double e = ulps(got[i], c.exact(xs[i]));
        if (!(e <= worst)) worst = e, worst_x = xs[i];
      }
      std::printf("%s on %s: %.3f ulp at most\n", c.name, std::string(jit::name(isa)).c_str(), worst);
      EXPECT_LE(worst, c.max_ulps) << c.name << " on " << jit::name(isa) << ": worst at x = " << worst_x;
    }
}

// pow over pairs: every special base against every special exponent, and
// random bases of every magnitude with exponents that make y log|x| sweep
// [-760, 760] (all of the float64 range, overflow and underflow included),
// integers with negative bases, and bases next to 1 with huge exponents.
TEST(JitCpuF64, PowErrorBounds) {
  std::vector<double> xs, ys;
  const double kSpecial[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 10.0,
                             4.9406564584124654e-324, 2.2250738585072014e-308, DBL_MAX, -DBL_MAX, 1 + 0x1p-52,
                             1 - 0x1p-53, -1 - 0x1p-52, 0.9999, 1.0001};
  const double kSpecialY[] = {0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 1.5, 1 / 3.0, 7.0, -7.0,
                              1023.0, -1022.0, -1074.0, 1024.0, 0x1p53, 0x1p53 + 2, 0x1p53 - 1, 1e300, -1e300,
                              INFINITY, -INFINITY, NAN, 0x1p-60, 0x1p62, -0x1p62, 0x1p70};
  for (double x : kSpecial)
    for (double y : kSpecialY) xs.push_back(x), ys.push_back(y);
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 400000; ++i) {
    double x = std::ldexp(1 + unit(rng), static_cast<int>(unit(rng) * 2098) - 1075);
    if (i % 4 == 0) x = 1 + (unit(rng) - 0.5) * std::ldexp(1.0, -static_cast<int>(unit(rng) * 52));
    const double w = -760 + 1520 * unit(rng);
    double y = w / std::log(x);
    if (i % 3 == 0) y = std::nearbyint(y), x = -x;  // negative bases with integer exponents
    xs.push_back(x), ys.push_back(y);
  }
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor x = from_vector<double>(xs, {n}, DType::Float64), y = from_vector<double>(ys, {n}, DType::Float64);
  for (jit::Isa isa : isas()) {
    std::vector<double> got = run_single_kernel<double>(power(x, y), isa);
    ASSERT_EQ(got.size(), xs.size());
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const long double want = powl(xs[i], ys[i]);
      double e = ulps(got[i], want);
      if (!std::isnan(want) && !std::isnan(got[i]) && want == 0 && got[i] == 0 && std::signbit(got[i]) != std::signbit(static_cast<double>(want)))
        e = INFINITY;  // the sign of a zero result
      if (!(e <= worst)) worst = e, at = i;
    }
    std::printf("pow on %s: %.3f ulp at most\n", std::string(jit::name(isa)).c_str(), worst);
    EXPECT_LE(worst, 1) << "pow on " << jit::name(isa) << ": worst at " << xs[at] << " ** " << ys[at] << " = "
                        << got[at] << ", want " << static_cast<double>(powl(xs[at], ys[at]));
  }
}

// The float64 math keeps the sign of zero and saturates exactly.
TEST(JitCpuF64, VectorMathEdges) {
  Tensor x = from_vector<double>({-0.0, 0.0, -INFINITY, INFINITY, NAN, -800.0, 800.0, 1.0}, {8}, DType::Float64);
  Tensor x1 = from_vector<double>({-0.0, 0.0, -INFINITY, INFINITY, NAN, -1.0, -2.0, 1.0}, {8}, DType::Float64);
  for (jit::Isa isa : isas()) {
    std::vector<double> e = run_single_kernel<double>(exp(x), isa), l = run_single_kernel<double>(log(x), isa),
                        s = run_single_kernel<double>(sigmoid(x), isa), t = run_single_kernel<double>(tanh(x), isa);
    EXPECT_TRUE(std::signbit(t[0]) && t[0] == 0.0);
    EXPECT_EQ(t[2], -1.0);
    EXPECT_EQ(t[3], 1.0);
    EXPECT_TRUE(std::isnan(t[4]));
    EXPECT_EQ(e[0], 1.0);
    EXPECT_EQ(e[2], 0.0);
    EXPECT_EQ(e[3], INFINITY);
    EXPECT_TRUE(std::isnan(e[4]));
    EXPECT_EQ(e[5], 0.0);
    EXPECT_EQ(e[6], INFINITY);
    EXPECT_EQ(e[7], std::exp(1.0));
    EXPECT_EQ(l[0], -INFINITY);
    EXPECT_EQ(l[1], -INFINITY);
    EXPECT_TRUE(std::isnan(l[2]));
    EXPECT_EQ(l[3], INFINITY);
    EXPECT_TRUE(std::isnan(l[4]));
    EXPECT_EQ(l[7], 0.0);
    EXPECT_FALSE(std::signbit(l[7]));
    EXPECT_EQ(s[2], 0.0);
    EXPECT_EQ(s[3], 1.0);
    EXPECT_EQ(s[0], 0.5);
    EXPECT_TRUE(std::isnan(s[4]));
    // Odd functions keep -0; saturation and the ends of the domains.
    for (Tensor (*f)(const Operand&) : {sin, tan, expm1, log1p, erf}) {
      std::vector<double> y = run_single_kernel<double>(f(x), isa);
      EXPECT_TRUE(y[0] == 0.0 && std::signbit(y[0]));
      EXPECT_TRUE(y[1] == 0.0 && !std::signbit(y[1]));
      EXPECT_TRUE(std::isnan(y[4]));
    }
    std::vector<double> m = run_single_kernel<double>(expm1(x), isa), p = run_single_kernel<double>(log1p(x1), isa),
                        r = run_single_kernel<double>(erf(x), isa), c = run_single_kernel<double>(cos(x), isa),
                        n = run_single_kernel<double>(sin(x), isa);
    EXPECT_EQ(m[2], -1.0);
    EXPECT_EQ(m[3], INFINITY);
    EXPECT_EQ(m[5], -1.0);
    EXPECT_EQ(m[6], INFINITY);
    EXPECT_EQ(p[5], -INFINITY);  // log1p(-1)
    EXPECT_TRUE(std::isnan(p[6]));  // log1p(-2)
    EXPECT_TRUE(std::isnan(p[2]));
    EXPECT_EQ(p[3], INFINITY);
    EXPECT_EQ(r[2], -1.0);
    EXPECT_EQ(r[3], 1.0);
    EXPECT_EQ(r[6], 1.0);
    EXPECT_EQ(c[0], 1.0);
    EXPECT_TRUE(std::isnan(c[2]) && std::isnan(c[3]) && std::isnan(n[2]) && std::isnan(n[3]));
  }
}

}  // namespace
}  // namespace braze
