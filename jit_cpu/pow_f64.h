// pow in float64 lanes (Note [Wide kernels] in lanes.h), checked against
// long double by `JitCpuF64.PowErrorBounds` (tests/cpp/jit_cpu_f64_test.cpp).
//
// pow(x, y) = e^(y log|x|), where y log|x| reaches +-745 before the result
// leaves the float64 range, so log|x| needs about 64 bits for the result
// to keep 53: it is computed as a double-double lh + ll.
//
// log|x| (musl's pow takes the same route): x = 2^k z, z in [0.706, 1.412),
// i = the top 7 bits of z's mantissa (from 0.706 on), c_i the centre of z's
// interval (exactly 1 for the one holding 1), invc_i = 1/c_i rounded;
// r = z invc_i - 1 exactly as rh + rl (FMA), |r| < 2^-7;
// log|x| = k ln2 + log(c_i) + log1p(r), log(c_i) = -log(invc_i) from a
// table (Note [Tables of the float64 math] in erf_f64.h) in two parts,
// log1p(r) = r - r^2/2 + r^3 (1/3 - r/4 + ... + r^8/11) + rl/(1 + r)
// (|rl| reaches 2^-53, so rl r^2 still counts: to rl r^3), the
// large sums by TwoSum: the error left is near 2^-70 |log x|
// w = y (lh + ll) = wh + wl (FMA); e^w = 2^n e^r, r = wh - n ln2 + wl kept
// as rr + c, e^r = (1 + rr) + (rr^2 q(rr) + c (1 + rr)) (q: Taylor to
// 1/14!) with 1 + rr by Fast2Sum: one rounding, then 2^n in two factors.
// Special values as C99 and NumPy: pow(x, +-0) = 1 and pow(1, y) = 1 even
// for NaN; a negative x gives a signed result for an integer y and NaN for
// a non-integer finite y; pow(+-0, y < 0) = inf (signed for odd y);
// pow(-1, +-inf) = 1. Max error 1 ulp.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class PowF64 {
 public:
  using Ops = VectorOps<R>;
  static constexpr uint64_t kOff = 0x3fe6955500000000ull;  // z's intervals start at this float64
  static constexpr int kBits = 7;                          // 128 intervals

  PowF64(Xbyak::CodeGenerator& c, ConstantPool& k, Ops& ops) : c_(c), k_(k), ops_(ops) {}

  // dst = pow(x, y); dst distinct from x and y (which may be one register);
  // s[0..4] and e clobbered.
  void emit(const R& dst, const R& x, const R& y, const std::array<R, 5>& s, const R& e) {
    log_dd(dst, s[0], x, s, e);
    // Where |x| is 0 or inf, log|x| is -inf or inf (the table gave garbage).
    c_.vandpd(s[1], x, k_.bits64(0x7fffffffffffffffull));
    ops_.cmp(s[2], s[1], k_.f64(0.0), Ops::Eq, Width::k64);
    c_.vmovapd(s[3], k_.f64(-INFINITY));
    ops_.blend(dst, dst, s[3], s[2], Width::k64);
    ops_.cmp(s[2], s[1], k_.f64(INFINITY), Ops::Eq, Width::k64);
    ops_.blend(dst, dst, s[1], s[2], Width::k64);
    // w = y log|x| = wh + wl. y is clamped to +-2^64 so that y = +-inf with
    // log|x| = 0 gives 1 (2^64 times the least log|x| != 0 still passes 1100).
    c_.vminpd(s[1], y, k_.f64(0x1p64));
    c_.vmaxpd(s[1], s[1], k_.f64(-0x1p64));
    c_.vmulpd(s[2], s[1], dst);           // wh
    c_.vmovapd(s[3], s[2]);
    c_.vfmsub231pd(s[3], s[1], dst);      // y lh - wh, exact
    c_.vfmadd231pd(s[3], s[1], s[0]);     // + y ll: wl
    c_.vandpd(s[4], s[2], k_.bits64(0x7fffffffffffffffull));
    ops_.cmp(s[4], s[4], k_.f64(INFINITY), Ops::Lt, Width::k64);
    c_.vandpd(s[3], s[3], s[4]);          // wl = 0 where wh is inf or NaN
    exp_dd(dst, s[2], s[3], s);
    specials(dst, x, y, s);
  }

 private:
  // lh + ll = log|x| for finite nonzero x. The table's row i: invc, log(c) hi, lo.
  void log_dd(const R& lh, const R& ll, const R& x, const std::array<R, 5>& s, const R& e) {
    c_.vandpd(s[0], x, k_.bits64(0x7fffffffffffffffull));
    ops_.cmp(s[1], s[0], k_.f64(0x1p-1022), Ops::Lt, Width::k64);
    c_.vmulpd(s[2], s[0], k_.f64(0x1p52));
    ops_.blend(s[0], s[0], s[2], s[1], Width::k64);              // denormals scaled by 2^52
    c_.vandpd(s[1], s[1], k_.f64(52.0));
    c_.vpsubq(s[2], s[0], k_.bits64(kOff));              // tmp
    c_.vpaddq(s[3], s[2], k_.bits64(1ull << 62));         // (tmp >> 52 arithmetic) + 1024, by a logical shift
    c_.vpsrlq(s[3], s[3], 52);
    c_.vorpd(s[3], s[3], k_.bits64(0x4330000000000000ull));
    c_.vsubpd(s[3], s[3], k_.f64(0x1p52 + 1024));
    c_.vsubpd(s[3], s[3], s[1]);                         // k
    c_.vandpd(s[1], s[2], k_.bits64(0xfff0000000000000ull));
    c_.vpsubq(s[0], s[0], s[1]);                         // z
    c_.vpsrlq(s[2], s[2], 52 - kBits);
    c_.vandpd(s[2], s[2], k_.bits64((1u << kBits) - 1));  // i
    c_.vpaddq(s[1], s[2], s[2]);
    c_.vpaddq(s[2], s[2], s[1]);                         // 3 i
    c_.lea(c_.rax, c_.ptr[c_.rip + k_.table_f64(table())]);
    ops_.gather_f64(s[1], c_.rax, s[2], 0, s[4]);        // invc
    c_.vmulpd(lh, s[0], s[1]);
    c_.vmovapd(s[4], lh);
    c_.vfmsub231pd(s[4], s[0], s[1]);                    // rl = z invc - (z invc rounded)
    c_.vsubpd(lh, lh, k_.f64(1.0));                      // rh, exact
    ops_.gather_f64(s[0], c_.rax, s[2], 1, s[1]);        // log(c) hi
    ops_.gather_f64(e, c_.rax, s[2], 2, s[1]);           // log(c) lo
    c_.vmulpd(s[1], s[3], k_.f64(6.93147180369123816490e-01));  // k ln2_hi, exact
    c_.vfmadd231pd(e, s[3], k_.f64(1.90821492927058770002e-10));  // lo = log(c) lo + k ln2_lo
    two_sum(s[2], s[1], s[0], s[3], e);                  // t1 = k ln2_hi + log(c) hi
    c_.vmovapd(s[1], lh);
    two_sum(s[0], s[2], s[1], s[3], e);                  // t2 = t1 + rh
    c_.vmulpd(s[1], lh, k_.f64(-0.5));                   // ar = -rh/2
    c_.vmulpd(s[2], lh, s[1]);                           // ar2 = -rh^2/2 rounded
    c_.vmovapd(s[3], s[2]);
    c_.vfmsub231pd(s[3], s[1], lh);                      // its rounding error, exact
    c_.vaddpd(e, e, s[3]);
    c_.vaddpd(s[1], s[0], s[2]);                         // hi = t2 + ar2
    c_.vsubpd(s[0], s[0], s[1]);
    c_.vaddpd(s[0], s[0], s[2]);                         // (t2 - hi) + ar2: Fast2Sum, |t2| >= |ar2|
    c_.vaddpd(e, e, s[0]);
    std::vector<double> q;
    for (int k = 3; k <= 11; ++k) q.push_back((k % 2 ? 1.0 : -1.0) / k);
    ops_.horner_f64(s[0], lh, q);
    c_.vmulpd(s[2], lh, lh);
    c_.vmulpd(s[2], s[2], lh);
    c_.vfmadd231pd(e, s[0], s[2]);                       // + rh^3 Q(rh)
    c_.vmovapd(s[0], k_.f64(1.0));
    for (int i = 0; i < 3; ++i) c_.vfnmadd213pd(s[0], lh, k_.f64(1.0));
    c_.vfmadd231pd(e, s[0], s[4]);                       // + rl / (1 + rh) = rl (1 - rh + rh^2 - rh^3)
    c_.vaddpd(lh, s[1], e);
    c_.vsubpd(ll, s[1], lh);
    c_.vaddpd(ll, ll, e);
  }

  // sum + err = a + b (TwoSum); err is added to acc, b and t clobbered.
  void two_sum(const R& sum, const R& a, const R& b, const R& t, const R& acc) {
    c_.vaddpd(sum, a, b);
    c_.vsubpd(t, sum, a);            // b'
    c_.vsubpd(b, b, t);              // b - b'
    c_.vsubpd(t, sum, t);            // sum - b'
    c_.vsubpd(t, a, t);              // a - (sum - b')
    c_.vaddpd(t, t, b);
    c_.vaddpd(acc, acc, t);
  }

  // dst = e^(wh + wl); wh, wl and s[0..4] clobbered (wh and wl are two of s).
  void exp_dd(const R& dst, const R& wh, const R& wl, const std::array<R, 5>& s) {
    c_.vmovapd(s[0], k_.f64(-1100.0));
    c_.vmaxpd(s[0], s[0], wh);
    c_.vmovapd(s[1], k_.f64(1100.0));
    c_.vminpd(s[0], s[1], s[0]);                                        // NaN stays
    c_.vmovapd(s[1], k_.f64(0x1.8p52));
    c_.vfmadd231pd(s[1], s[0], k_.f64(1.4426950408889634));
    c_.vsubpd(s[4], s[1], k_.f64(0x1.8p52));                            // n
    c_.vfnmadd231pd(s[0], s[4], k_.f64(6.93147180369123816490e-01));    // wh - n ln2_hi, exact
    c_.vfnmadd231pd(wl, s[4], k_.f64(1.90821492927058770002e-10));      // wl - n ln2_lo
    c_.vaddpd(dst, s[0], wl);                                           // rr
    c_.vsubpd(s[0], s[0], dst);
    c_.vaddpd(s[0], s[0], wl);                                          // c
    std::vector<double> q;
    long double f = 2;
    for (int i = 2; i <= 14; f *= ++i) q.push_back(static_cast<double>(1 / f));
    ops_.horner_f64(s[2], dst, q);
    c_.vmulpd(s[3], dst, dst);
    c_.vmulpd(s[2], s[2], s[3]);                                        // rr^2 q
    c_.vaddpd(s[2], s[2], s[0]);
    c_.vfmadd231pd(s[2], s[0], dst);                                    // + c (1 + rr)
    c_.vaddpd(s[0], dst, k_.f64(1.0));                                  // S = 1 + rr
    c_.vmovapd(s[3], k_.f64(1.0));
    c_.vsubpd(s[3], s[3], s[0]);
    c_.vaddpd(s[3], s[3], dst);                                         // its rounding error
    c_.vaddpd(s[3], s[3], s[2]);
    c_.vaddpd(dst, s[0], s[3]);                                         // e^r
    c_.vmulpd(s[3], s[4], k_.f64(0.5));
    ops_.round_f64(s[3], s[3], 1);                                      // n1 = floor(n/2)
    c_.vsubpd(s[4], s[4], s[3]);                                        // n2
    for (const R& n : {s[3], s[4]}) {
      c_.vaddpd(n, n, k_.f64(0x1p52 + 1023));
      c_.vpsllq(n, n, 52);
      c_.vmulpd(dst, dst, n);
    }
  }

  void specials(const R& dst, const R& x, const R& y, const std::array<R, 5>& s) {
    // Sign: x has its sign bit (-0 and -inf included) and y is an odd integer.
    ops_.round_f64(s[0], y, 0);
    ops_.cmp(s[0], s[0], y, Ops::Eq, Width::k64);            // y is an integer (or +-inf)
    c_.vmulpd(s[1], y, k_.f64(0.5));
    ops_.round_f64(s[2], s[1], 0);
    ops_.cmp(s[1], s[2], s[1], Ops::Ne, Width::k64);
    c_.vandpd(s[1], s[1], s[0]);                     // y is odd
    c_.vandpd(s[2], x, k_.bits64(0x8000000000000000ull));
    c_.vandpd(s[2], s[2], s[1]);
    c_.vxorpd(dst, dst, s[2]);
    // NaN: finite x < 0 with y not an integer, or either is NaN.
    ops_.cmp(s[1], x, k_.f64(0.0), Ops::Lt, Width::k64);
    ops_.cmp(s[2], x, k_.f64(-INFINITY), Ops::Ne, Width::k64);
    c_.vandpd(s[1], s[1], s[2]);
    c_.vandnpd(s[1], s[0], s[1]);
    ops_.cmp(s[2], x, y, Ops::Unord, Width::k64);
    c_.vorpd(s[1], s[1], s[2]);
    c_.vmovapd(s[2], k_.f64(NAN));
    ops_.blend(dst, dst, s[2], s[1], Width::k64);
    // 1: y == 0 or x == 1, NaN or not.
    ops_.cmp(s[1], y, k_.f64(0.0), Ops::Eq, Width::k64);
    ops_.cmp(s[2], x, k_.f64(1.0), Ops::Eq, Width::k64);
    c_.vorpd(s[1], s[1], s[2]);
    c_.vmovapd(s[2], k_.f64(1.0));
    ops_.blend(dst, dst, s[2], s[1], Width::k64);
  }

  static double from_bits(uint64_t b) {
    double v;
    std::memcpy(&v, &b, 8);
    return v;
  }

  // Row i: invc, -log(invc) in two parts; the interval holding 1 has c = 1.
  static std::vector<double> table() {
    std::vector<double> t;
    for (uint64_t i = 0; i < (1u << kBits); ++i) {
      const double lo = from_bits(kOff + (i << (52 - kBits))), hi = from_bits(kOff + ((i + 1) << (52 - kBits)));
      const double invc = lo <= 1.0 && 1.0 < hi ? 1.0 : static_cast<double>(2.0L / (static_cast<long double>(lo) + hi));
      const long double logc = -logl(invc);
      t.push_back(invc);
      t.push_back(static_cast<double>(logc));
      t.push_back(static_cast<double>(logc - static_cast<double>(logc)));
    }
    return t;
  }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  Ops& ops_;
};

}  // namespace braze::jit
