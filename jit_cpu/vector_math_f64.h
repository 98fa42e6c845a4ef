// Vector math in float64 lanes (Note [Wide kernels] in lanes.h), one code
// for both ISAs like vector_math.h. Maximum errors against the exact value
// (long double), checked over a dense sweep of float64 inputs and their
// edges by `JitCpuF64.VectorMathErrorBounds` (tests/cpp/jit_cpu_f64_test.cpp):
//
//   exp      1 ulp  2^n e^r, |r| <= ln2/2, degree-13 Taylor polynomial;
//                   2^n as 2^(n/2) 2^(n - n/2) so overflow and denormal
//                   results round once, with no slow path
//   exp2     1 ulp  as exp, r = (x - n) ln 2
//   log      1 ulp  fdlibm's log: m in [sqrt(1/2), sqrt(2)), s = f/(2+f),
//                   its degree-14 minimax polynomial in s
//   log2     2 ulp  log, times log2(e)
//   log1p    2 ulp  log(u) + c/u, u = 1 + x and c its exact rounding error
//   expm1    1 ulp  2 (2^(n-1) e^r - 1/2) summed in double-double, one rounding
//   sigmoid  2 ulp  1/(1 + e^-|x|), or e^-|x|/(1 + e^-|x|) for x < 0, the
//                   rounding of 1 + e^-|x| put back
//   tanh     2 ulp  below |x| = 0.55 its Taylor series to x^39 (the terms
//                   shrink by (x 2/pi)^2 < 0.123); above, 1 - 2/(e^2|x| + 1),
//                   which cancels no more than one bit there
//
// Each takes dst distinct from x, keeps x, and clobbers its scratch.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class VectorMathF64 {
 public:
  using Scratch = std::array<R, 5>;

  VectorMathF64(Xbyak::CodeGenerator& c, ConstantPool& k, VectorOps<R>& ops) : c_(c), k_(k), ops_(ops) {}

  void exp(const R& dst, const R& x, const Scratch& s) { exp_like(dst, x, s, /*two=*/false); }
  void exp2(const R& dst, const R& x, const Scratch& s) { exp_like(dst, x, s, /*two=*/true); }

  // log(x) = k ln2 + log(m), x = m 2^k: fdlibm's e_log.c, with the split
  // of ln2 in two so k ln2 adds no rounding of its own. Denormals are
  // scaled by 2^54 first. Specials: NaN, x < 0 -> NaN; +-0 -> -inf; inf -> inf.
  void log(const R& dst, const R& x, const Scratch& s) {
    log_core(dst, x, s);
    log_specials(dst, x, s[0], s[1]);
  }

  // log1p(x) = log(u) + c/u, u = 1 + x rounded and c = (1 + x) - u exact
  // (TwoSum): the correction restores what rounding u lost, so small x keep
  // full relative accuracy (|x| < 2^-53: u = 1, log(u) = 0, c = x).
  // Specials follow from u's: -1 -> -inf, x < -1 -> NaN, inf -> inf.
  void log1p(const R& dst, const R& x, const Scratch& s) {
    c_.vaddpd(s[4], x, k_.f64(1.0));
    log_core(dst, s[4], s);  // reads s[4] before it clobbers it
    c_.vaddpd(s[0], x, k_.f64(1.0));   // u again
    log_specials(dst, s[0], s[1], s[2]);
    c_.vsubpd(s[1], s[0], x);          // b' = u - x
    c_.vsubpd(s[2], s[0], s[1]);       // a' = u - b'
    c_.vmovapd(s[3], k_.f64(1.0));
    c_.vsubpd(s[3], s[3], s[1]);       // 1 - b'
    c_.vsubpd(s[2], x, s[2]);          // x - a'
    c_.vaddpd(s[3], s[3], s[2]);       // c
    c_.vdivpd(s[3], s[3], s[0]);       // c / u: NaN where u is 0 or inf, where
    ops_.cmp(s[2], s[3], s[3], VectorOps<R>::Ord, Width::k64);  // log(u) is +-inf already: dropped
    c_.vandpd(s[3], s[3], s[2]);
    c_.vaddpd(dst, dst, s[3]);
    c_.vandpd(s[0], x, k_.bits64(0x8000000000000000ull));
    c_.vorpd(dst, dst, s[0]);          // log1p(-0) = -0; negative x give negative results anyway
  }

  // expm1(x) = 2 (T (1 + e^r - 1) - 1/2), T = 2^(n-1), x = n ln2 + r,
  // |r| <= ln2/2, summed in double-double so that only the last addition
  // rounds: r = rh + rl exactly enough (x - n ln2_hi exact, n ln2_lo as a
  // correction), e^r - 1 = rh + [rh^2 q(rh) + rl (1 + rh)] with q the
  // Taylor series to rh^14 (rh^15/15! < 2^-60 rh), T rh exact, T - 1/2 and
  // its rounding error exact, and TwoSum of the two large terms. Halving
  // keeps T finite up to n = 1024 (x is clamped to [-40, 710]: beyond,
  // expm1 rounds to -1 or overflows). |x| < 2^-54 returns x (its
  // sign, zeros and denormals kept).
  void expm1(const R& dst, const R& x, const Scratch& s) {
    c_.vmovapd(s[0], k_.f64(-40.0));
    c_.vmaxpd(s[0], s[0], x);
    c_.vmovapd(s[1], k_.f64(710.0));
    c_.vminpd(s[0], s[1], s[0]);                                         // NaN stays
    c_.vmovapd(s[1], k_.f64(0x1.8p52));
    c_.vfmadd231pd(s[1], s[0], k_.f64(1.4426950408889634));              // n in the low bits
    c_.vsubpd(s[2], s[1], k_.f64(0x1.8p52));                             // n
    c_.vfnmadd231pd(s[0], s[2], k_.f64(6.93147180369123816490e-01));     // x - n ln2_hi, exact
    c_.vmulpd(s[3], s[2], k_.f64(-1.90821492927058770002e-10));          // -n ln2_lo
    c_.vaddpd(dst, s[0], s[3]);                                          // rh
    c_.vsubpd(s[0], s[0], dst);
    c_.vaddpd(s[0], s[0], s[3]);                                         // rl
    std::vector<double> q;
    long double f = 2;
    for (int i = 2; i <= 14; f *= ++i) q.push_back(static_cast<double>(1 / f));
    horner(s[2], dst, q);                                                // q(rh)
    c_.vmulpd(s[3], dst, dst);
    c_.vmulpd(s[2], s[2], s[3]);                                         // rh^2 q
    c_.vfmadd231pd(s[2], s[0], dst);
    c_.vaddpd(s[2], s[2], s[0]);                                         // lo = rh^2 q + rl rh + rl
    c_.vpsllq(s[1], s[1], 52);
    c_.vpaddq(s[1], s[1], k_.f64(0.5));                                  // T = 2^(n-1)
    c_.vsubpd(s[0], s[1], k_.f64(0.5));                                  // A = T - 1/2
    c_.vsubpd(s[3], s[0], s[1]);                                         // TwoSum of T and -1/2: b' = A - T
    c_.vsubpd(s[4], s[0], s[3]);
    c_.vsubpd(s[4], s[1], s[4]);                                         // T - (A - b')
    c_.vaddpd(s[3], s[3], k_.f64(0.5));
    c_.vsubpd(s[3], s[4], s[3]);                                         // A's rounding error (T < 2^-54 or >= 2^53)
    c_.vfmadd231pd(s[3], s[2], s[1]);                                    // + T lo
    c_.vmulpd(s[2], s[1], dst);                                          // B = T rh, exact
    c_.vaddpd(s[4], s[0], s[2]);                                         // S = A + B
    c_.vsubpd(dst, s[4], s[0]);                                          // TwoSum: b' = S - A
    c_.vsubpd(s[2], s[2], dst);                                          // B - b'
    c_.vsubpd(dst, s[4], dst);                                           // S - b'
    c_.vsubpd(s[0], s[0], dst);                                          // A - (S - b')
    c_.vaddpd(s[0], s[0], s[2]);                                         // the rounding error of S
    c_.vaddpd(s[0], s[0], s[3]);
    c_.vaddpd(dst, s[4], s[0]);
    c_.vaddpd(dst, dst, dst);
    c_.vandpd(s[0], x, k_.bits64(0x7fffffffffffffffull));
    ops_.cmp(s[0], s[0], k_.f64(0x1p-54), VectorOps<R>::Lt, Width::k64);
    ops_.blend(dst, dst, x, s[0], Width::k64);
  }

  void log2(const R& dst, const R& x, const Scratch& s) {
    log(dst, x, s);
    c_.vmulpd(dst, dst, k_.f64(1.4426950408889634));
  }

  void tanh(const R& dst, const R& x, const Scratch& s) {
    c_.vandpd(s[4], x, k_.bits64(0x7fffffffffffffffull));  // |x|
    c_.vaddpd(s[4], s[4], s[4]);
    exp(dst, s[4], {s[0], s[1], s[2], s[3], s[4]});          // e^2|x|
    c_.vaddpd(dst, dst, k_.f64(1.0));
    c_.vmovapd(s[0], k_.f64(-2.0));
    c_.vdivpd(dst, s[0], dst);
    c_.vaddpd(dst, dst, k_.f64(1.0));                         // 1 - 2/(e^2|x| + 1)
    c_.vmulpd(s[1], x, x);                                    // z = x^2
    const std::vector<double> c = tanh_series();
    horner(s[2], s[1], std::vector<double>(c.begin() + 1, c.end()));
    c_.vmulpd(s[2], s[2], s[1]);
    c_.vfmadd213pd(s[2], x, x);                               // x + x z q(z)
    c_.vandpd(s[0], x, k_.bits64(0x7fffffffffffffffull));
    ops_.cmp(s[0], s[0], k_.f64(0.55), VectorOps<R>::Lt, Width::k64);
    ops_.blend(dst, dst, s[2], s[0], Width::k64);
    c_.vandpd(s[0], x, k_.bits64(0x8000000000000000ull));
    c_.vorpd(dst, dst, s[0]);  // the sign of x (of -0 too)
  }

  // Note: e^-|x| never overflows, so neither form divides inf by inf. The
  // rounding d of u = 1 + e (exact by Fast2Sum, 1 >= e) is put back as
  // q (1 - d/u), so only e's error and the division's remain.
  void sigmoid(const R& dst, const R& x, const Scratch& s) {
    c_.vandpd(s[4], x, k_.bits64(0x7fffffffffffffffull));
    c_.vxorpd(s[4], s[4], k_.bits64(0x8000000000000000ull));  // -|x|
    exp(dst, s[4], {s[0], s[1], s[2], s[3], s[4]});           // e = e^-|x|
    c_.vaddpd(s[0], dst, k_.f64(1.0));                        // u = 1 + e
    c_.vmovapd(s[3], k_.f64(1.0));
    c_.vsubpd(s[3], s[3], s[0]);
    c_.vaddpd(s[3], s[3], dst);                               // d = (1 - u) + e
    c_.vmovapd(s[1], k_.f64(1.0));
    ops_.cmp(s[2], x, k_.f64(0.0), VectorOps<R>::Lt, Width::k64);
    ops_.blend(s[1], s[1], dst, s[2], Width::k64);                    // x < 0 ? e : 1
    c_.vdivpd(dst, s[1], s[0]);                               // q
    c_.vdivpd(s[3], s[3], s[0]);
    c_.vfnmadd231pd(dst, s[3], dst);                          // q - q d/u
  }

 private:
  // dst = e^x (or 2^x). x is clamped to +-1100 first (NaN stays NaN: the
  // constant is the first operand of max/min, which return the second
  // when either is NaN), past which every result is inf or 0 anyway.
  void exp_like(const R& dst, const R& x, const Scratch& s, bool two) {
    c_.vmovapd(s[0], k_.f64(-1100.0));
    c_.vmaxpd(s[0], s[0], x);
    c_.vmovapd(s[1], k_.f64(1100.0));
    c_.vminpd(s[0], s[1], s[0]);
    c_.vmovapd(s[1], k_.f64(0x1.8p52));
    c_.vfmadd231pd(s[1], s[0], k_.f64(two ? 1.0 : 1.4426950408889634));  // n in the low bits
    c_.vsubpd(s[2], s[1], k_.f64(0x1.8p52));                              // n
    if (two) {
      c_.vsubpd(s[0], s[0], s[2]);  // exact
      c_.vmulpd(s[0], s[0], k_.f64(0.6931471805599453));
    } else {
      c_.vfnmadd231pd(s[0], s[2], k_.f64(6.93147180369123816490e-01));  // exact: ln2_hi has 21 zero bits
      c_.vfnmadd231pd(s[0], s[2], k_.f64(1.90821492927058770002e-10));
    }
    // e^r, |r| <= ln2/2: the Taylor polynomial to r^13 (r^14/14! < 2^-57).
    std::array<double, 14> c{};
    c[0] = 1;
    for (int i = 1; i < 14; ++i) c[i] = c[i - 1] / i;
    c_.vmovapd(dst, k_.f64(c[13]));
    for (int i = 12; i >= 0; --i) c_.vfmadd213pd(dst, s[0], k_.f64(c[i]));
    // 2^n = 2^n1 2^(n - n1), n1 = floor(n/2): both normal for |n| <= 1587.
    c_.vmulpd(s[3], s[2], k_.f64(0.5));
    ops_.round_f64(s[3], s[3], 1);   // n1
    c_.vsubpd(s[2], s[2], s[3]);     // n2
    for (const R& n : {s[3], s[2]}) {
      c_.vaddpd(n, n, k_.f64(0x1p52 + 1023));
      c_.vpsllq(n, n, 52);  // the biased exponent into place: 2^n
      c_.vmulpd(dst, dst, n);
    }
  }

  // tanh x = sum_k c[k] x^(2k+1) to k = 19, from tanh' = 1 - tanh^2:
  // (n + 1) a[n+1] = [n == 0] - sum_{i+j=n} a[i] a[j], a the coefficients of
  // x^n, in long double.
  static std::vector<double> tanh_series() {
    constexpr int kTerms = 20;
    std::vector<long double> a(2 * kTerms + 1, 0.0L);
    a[1] = 1;
    for (int n = 1; n + 1 <= 2 * kTerms; ++n) {
      long double sq = 0;
      for (int i = 0; i <= n; ++i) sq += a[i] * a[n - i];
      a[n + 1] = -sq / (n + 1);
    }
    std::vector<double> c;
    for (int k = 0; k < kTerms; ++k) c.push_back(static_cast<double>(a[2 * k + 1]));
    return c;
  }

  // The core of log: x read only by the first three instructions, so it
  // may be one of the scratch registers (log1p's u in s[4]).
  void log_core(const R& dst, const R& x, const Scratch& s) {
    c_.vmovapd(s[0], x);
    ops_.cmp(s[1], x, k_.f64(0x1p-1022), VectorOps<R>::Lt, Width::k64);
    c_.vmulpd(s[2], x, k_.f64(0x1p54));
    ops_.blend(s[0], s[0], s[2], s[1], Width::k64);
    c_.vandpd(s[1], s[1], k_.f64(54.0));                      // the scaling's share of k
    c_.vpaddq(s[0], s[0], k_.bits64(0x3ff0000000000000ull - 0x3fe6a09e00000000ull));
    c_.vpsrlq(s[2], s[0], 52);                                // k + 1023 (biased)
    c_.vorpd(s[2], s[2], k_.bits64(0x4330000000000000ull));    // 2^52 + that
    c_.vsubpd(s[2], s[2], k_.f64(0x1p52 + 1023));
    c_.vsubpd(s[2], s[2], s[1]);                              // k
    c_.vandpd(s[0], s[0], k_.bits64(0x000fffffffffffffull));
    c_.vpaddq(s[0], s[0], k_.bits64(0x3fe6a09e00000000ull));  // m in [sqrt(1/2), sqrt(2))
    c_.vsubpd(s[0], s[0], k_.f64(1.0));                       // f = m - 1, exact
    c_.vaddpd(s[1], s[0], k_.f64(2.0));
    c_.vdivpd(s[1], s[0], s[1]);                              // s = f / (2 + f)
    c_.vmulpd(s[3], s[1], s[1]);                              // z = s^2
    horner(dst, s[3], {6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
                       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
                       1.479819860511658591e-01});
    c_.vmulpd(dst, dst, s[3]);                                // R
    c_.vmulpd(s[4], s[0], s[0]);
    c_.vmulpd(s[4], s[4], k_.f64(0.5));                       // hfsq = f^2 / 2
    c_.vaddpd(dst, dst, s[4]);
    c_.vmulpd(dst, dst, s[1]);                                // s (hfsq + R)
    c_.vfmadd231pd(dst, s[2], k_.f64(1.90821492927058770002e-10));  // + k ln2_lo
    c_.vsubpd(dst, s[4], dst);
    c_.vsubpd(dst, dst, s[0]);                                // hfsq - (...) - f
    c_.vfmsub231pd(dst, s[2], k_.f64(6.93147180369123816490e-01));  // k ln2_hi - that
  }
  // dst = log(x) where x is inf, 0, negative or NaN; t1, t2 clobbered.
  void log_specials(const R& dst, const R& x, const R& t1, const R& t2) {
    ops_.cmp(t1, x, k_.f64(INFINITY), VectorOps<R>::Eq, Width::k64);
    c_.vmovapd(t2, k_.f64(INFINITY));
    ops_.blend(dst, dst, t2, t1, Width::k64);
    ops_.cmp(t1, x, k_.f64(0.0), VectorOps<R>::Eq, Width::k64);
    c_.vmovapd(t2, k_.f64(-INFINITY));
    ops_.blend(dst, dst, t2, t1, Width::k64);
    ops_.cmp(t1, x, k_.f64(0.0), VectorOps<R>::Lt, Width::k64);
    c_.vmovapd(t2, k_.f64(NAN));
    ops_.blend(dst, dst, t2, t1, Width::k64);
    ops_.cmp(t1, x, x, VectorOps<R>::Unord, Width::k64);
    ops_.blend(dst, dst, x, t1, Width::k64);
  }

  void horner(const R& acc, const R& t, const std::vector<double>& c) { ops_.horner_f64(acc, t, c); }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  VectorOps<R>& ops_;
};

}  // namespace braze::jit
