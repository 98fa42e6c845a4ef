// Vector math emitted with xbyak: float32 lanes in registers, polynomial
// approximations with a stated maximum error, checked over a dense sweep of
// inputs and their edges by `JitCpu.VectorMathErrorBounds`
// (tests/cpp/jit_cpu_test.cpp). One code for AVX2 (Ymm) and AVX-512 (Zmm):
// all that differs between them is in VectorOps (compares, blends, the
// float64 halves).
//
// Errors are in units in the last place of the float32 result against the
// exact value (a double-precision std:: function), denormal results measured
// in the denormal spacing. NaN in gives NaN out, except where NumPy says
// otherwise (pow).
//
// Every function writes dst and may clobber the five scratch registers s;
// dst must not be an input register (the code generator allocates a fresh
// one) and may be used as a temporary before the result is written.
// Polynomial coefficients are near-minimax fits (Chebyshev-node least
// squares with Lawson reweighting) over the reduced ranges stated.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class VectorMath {
 public:
  using Ops = VectorOps<R>;
  using Scratch = std::array<R, 5>;

  VectorMath(Xbyak::CodeGenerator& c, ConstantPool& k, Ops& ops) : c_(c), k_(k), ops_(ops) {}

  // exp(x) = 2^n e^r, n = rint(x log2 e), r = x - n ln2 (|r| <= ln2/2, ln2
  // in two parts), e^r = 1 + r + r^2 Q(r) with Q of degree 4. For |x| <= 86
  // 2^n is added into the exponent field of e^r (one vpaddd); a vector with
  // any lane beyond takes a slow path that clamps x to [-104, 89] and
  // multiplies by 2^n in two halves, so denormal results and overflow to
  // inf come out right. Max error 1 ulp.
  void exp(const R& dst, const R& x, const Scratch& s) { exp_like(dst, x, s, Base::E); }

  // exp2(x) = 2^n 2^f, n = rint(x), f = x - n exact, 2^f = 1 + f P(f) with
  // P of degree 5; fast for |x| <= 125, else the slow path as for exp.
  // Max error 1 ulp.
  void exp2(const R& dst, const R& x, const Scratch& s) { exp_like(dst, x, s, Base::Two); }

  // expm1(x) = 2 F with F = (e^x - 1) / 2 from expm1_half, x clamped to
  // [-18, 88.73] (below, the result rounds to -1; above, to inf). Keeps
  // full relative accuracy near 0. Max error 2 ulp.
  void expm1(const R& dst, const R& x, const Scratch& s) {
    clamp(dst, x, -18.0f, 88.73f, s[0]);
    expm1_half(s[3], dst, s[0], s[1], s[2]);
    c_.vaddps(dst, s[3], s[3]);
    sign_of_x(dst, x, s[0]);
  }

  // log(x): x = m 2^e, m in [sqrt(1/2), sqrt(2)), z = m - 1,
  // log(m) = z - z^2/2 + z^3 P(z) (Cephes logf), e ln2 in two parts;
  // denormal inputs are scaled first. log(0) = -inf, log(x<0) = NaN,
  // log(inf) = inf. Max error 2 ulp.
  void log(const R& dst, const R& x, const Scratch& s) {
    log_reduce(s[1], s[0], x, s[3], s[2]);
    log_tail(s[2], s[0], s[3]);
    c_.vfmadd231ps(s[2], s[1], k_(-2.12194440e-4f));  // + e C2
    c_.vaddps(s[0], s[0], s[2]);
    c_.vfmadd231ps(s[0], s[1], k_(0.693359375f));     // + e C1
    log_specials(dst, s[0], x, s[2], s[3]);
  }

  // log2(x) = e + log(m) log2(e), log2(e) in two parts so that the product
  // with z keeps its low bits; exact for powers of two. Max error 2 ulp.
  void log2(const R& dst, const R& x, const Scratch& s) {
    log_reduce(s[1], s[0], x, s[3], s[2]);
    log_tail(s[2], s[0], s[3]);
    c_.vmulps(s[2], s[2], k_(1.44269504088896341f));
    c_.vfmadd231ps(s[2], s[0], k_(1.9259629911266175e-08f));  // z log2(e)_lo
    c_.vaddps(s[2], s[2], s[1]);                                 // + e
    c_.vfmadd231ps(s[2], s[0], k_(1.4426950216293335f));       // + z log2(e)_hi
    log_specials(dst, s[2], x, s[0], s[3]);
  }

  // log1p(x) = log(u) + c/u with u = 1 + x rounded and c = (1 + x) - u
  // exact (TwoSum): the correction restores what rounding u lost, so small
  // x keep full relative accuracy. Max error 2 ulp.
  void log1p(const R& dst, const R& x, const Scratch& s) {
    c_.vaddps(s[4], x, k_(1.0f));
    log(dst, s[4], s);
    c_.vaddps(s[0], x, k_(1.0f));         // u again
    c_.vsubps(s[1], s[0], x);             // b' = u - x
    c_.vsubps(s[2], s[0], s[1]);          // a' = u - b'
    c_.vmovaps(s[3], k_(1.0f));
    c_.vsubps(s[3], s[3], s[1]);          // 1 - b'
    c_.vsubps(s[2], x, s[2]);             // x - a'
    c_.vaddps(s[3], s[3], s[2]);          // c
    c_.vdivps(s[3], s[3], s[0]);          // c / u; NaN where u is 0 or inf, where
    ops_.cmp(s[2], s[3], s[3], Ops::Ord);  // log(u) is +-inf already: drop it there
    c_.vandps(s[3], s[3], s[2]);
    c_.vaddps(dst, dst, s[3]);
    sign_of_x(dst, x, s[0]);
  }

  // tanh(x) = F / (F + 1) with F = (e^{2|x|} - 1) / 2 (expm1_half), |x|
  // clamped to 9.1 where tanh rounds to 1, x's sign put back. One
  // division, no cancellation near 0 or near 1. Max error 3 ulp.
  void tanh(const R& dst, const R& x, const Scratch& s) {
    c_.vandps(s[0], x, k_.bits_of(0x7fffffff));
    c_.vmovaps(dst, k_(9.1f));
    c_.vminps(dst, dst, s[0]);  // NaN stays (vminps returns its second operand then)
    c_.vaddps(dst, dst, dst);
    expm1_half(s[3], dst, s[0], s[1], s[2]);
    c_.vaddps(s[0], s[3], k_(1.0f));
    c_.vdivps(s[3], s[3], s[0]);
    c_.vandps(s[0], x, k_.bits_of(0x80000000));
    c_.vxorps(dst, s[3], s[0]);
  }

  // sigmoid(x) = 1 / (1 + t) for x >= 0 and t / (1 + t) for x < 0, with
  // t = e^-|x|: no overflow, and full relative accuracy down to the
  // denormal results of large negative x. Max error 3 ulp.
  void sigmoid(const R& dst, const R& x, const Scratch& s) {
    c_.vorps(s[4], x, k_.bits_of(0x80000000));  // -|x|
    exp(dst, s[4], s);                           // t
    c_.vaddps(s[0], dst, k_(1.0f));
    c_.vmovaps(s[1], k_(1.0f));
    c_.vdivps(s[1], s[1], s[0]);                 // 1 / (1 + t)
    c_.vmulps(s[0], dst, s[1]);                  // t / (1 + t)
    ops_.blend(dst, s[1], s[0], x);              // by x's sign bit
  }

  // erf(x), odd. a = |x| clamped to 4 (erf rounds to 1 from 3.9155 on, and
  // at 4 the result is exactly 1, as gelu's saturation needs):
  // a < 1: a P(a^2), P of degree 6;
  // else:  1 - e^{-a^2} R(a - 2.5), R of degree 8 fit to erfc(a) e^{a^2};
  // a^2 = hi + lo exactly (FMA) and e^{-a^2} = e^{-hi} (1 - lo), since an
  // error in a^2 becomes a relative error of erfc. Max error 3 ulp.
  void erf(const R& dst, const R& x, const Scratch& s) {
    c_.vandps(s[0], x, k_.bits_of(0x7fffffff));
    c_.vmovaps(dst, k_(4.0f));
    c_.vminps(dst, dst, s[0]);                   // a; NaN stays
    c_.vmulps(s[0], dst, dst);                   // hi
    c_.vmovaps(s[1], s[0]);
    c_.vfmsub231ps(s[1], dst, dst);              // lo = a*a - hi
    c_.vsubps(s[2], dst, k_(2.5f));
    horner(s[3], s[2], {0.21080760657787323f, -0.07434218376874924f, 0.02491462603211403f, -0.008132250048220158f,
                        0.002302503911778331f, -0.0006611228454858065f, 0.0005433166516013443f,
                        0.00022506105597130954f, 0.00010684288281481713f});
    c_.vfnmadd231ps(s[3], s[3], s[1]);           // R (1 - lo)
    c_.vxorps(s[0], s[0], k_.bits_of(0x80000000));
    exp_poly(s[1], s[2], s[0], s[4], Base::E);   // e^{-hi}: -hi >= -16, the fast path holds
    scale_fast(s[1], s[1], s[2]);
    c_.vfnmadd213ps(s[1], s[3], k_(1.0f));       // 1 - e^{-a^2} R
    c_.vmulps(s[0], dst, dst);
    horner(s[2], s[0], {1.1283791065216064f, -0.3761262595653534f, 0.11283600330352783f, -0.02685444802045822f,
                        0.005189541727304459f, -0.0008020894601941109f, 7.889283733675256e-05f});
    c_.vmulps(s[2], s[2], dst);                  // a P(a^2)
    ops_.cmp(s[3], dst, k_(1.0f), Ops::Lt);
    ops_.blend(s[2], s[1], s[2], s[3]);
    c_.vandps(s[0], x, k_.bits_of(0x80000000));
    c_.vxorps(dst, s[2], s[0]);
  }

  // sin(x), cos(x): the range reduction runs in float64, on each half of
  // the lanes: q = rint(x 2/pi), r = x - q pi/2, then r + r^3 S(r^2) and
  // 1 - r^2/2 + r^4 C(r^2) (degrees 3 and 3 in r^2) picked and signed by
  // q mod 4. For |x| <= 2^30, Cody-Waite with pi/2 in three float64 parts;
  // a vector with a lane beyond takes reduce_pi_2_any, exact to 2^-83 for
  // every float32 (a Payne-Hanek-free product with 2/pi in four parts).
  // Max error 1 ulp for all finite x; inf and NaN give NaN. tan is sin r /
  // cos r (or -cos r / sin r for odd q) of the same reduction, divided in
  // float64: also within 1 ulp.
  void sin(const R& dst, const R& x, const Scratch& s) { trig(dst, x, s, Trig::Sin); }
  void cos(const R& dst, const R& x, const Scratch& s) { trig(dst, x, s, Trig::Cos); }
  void tan(const R& dst, const R& x, const Scratch& s) { trig(dst, x, s, Trig::Tan); }
  // The same of int32 lanes, converted exactly to float64 (float32 would
  // round them past 2^24, and sin and cos of such a rounding differ);
  // |x| <= 2^31 needs only the Cody-Waite reduction.
  void trig_of_int(const R& dst, const R& x, const Scratch& s, Trig f) {
    for (int h = 0; h < 2; ++h) {
      ops_.int_to_f64(s[0], x, h);
      reduce_pi_2(s);
      trig_finish(dst, s, h, f);
    }
  }

  // pow(x, y) with C99/NumPy special values: pow(x, +-0) = 1 and
  // pow(1, y) = 1 even for NaN; negative x gives a signed result for an
  // integer y and NaN for a non-integer finite y; 0^negative = inf with the
  // sign of 0 for odd y; |x| = 1 with y = +-inf is 1. The core runs in
  // float64: log2|x| = e + log2(m) (m, e from the float32 reduction of
  // log; log2(m) = s P(s^2), s = (m-1)/(m+1), P of degree 4), w = y log2|x|
  // clamped to +-400, 2^w = 2^n (1 + f P(f)) with P of degree 6, rounded
  // once to float32 (overflow, denormals and underflow by the conversion).
  // Max error 1 ulp.
  void pow(const R& dst, const R& x, const R& y, const Scratch& s) {
    c_.vandps(s[4], x, k_.bits_of(0x7fffffff));
    log_reduce(s[1], s[0], s[4], s[2], s[3]);  // e, z = m - 1
    // log2|x| is -inf at 0 and inf at inf, NaN at NaN: put it in e.
    ops_.cmp(s[2], s[4], k_(0.0f), Ops::Eq);
    c_.vmovaps(s[3], k_(-INFINITY));
    ops_.blend(s[1], s[1], s[3], s[2]);
    ops_.cmp(s[2], s[4], k_(INFINITY), 0x05);  // not less than: inf or NaN
    ops_.blend(s[1], s[1], s[4], s[2]);
    for (int h = 0; h < 2; ++h) {
      ops_.to_f64(s[2], s[0], h);
      c_.vaddpd(s[3], s[2], k_.f64(2.0));
      c_.vdivpd(s[2], s[2], s[3]);              // s = (m - 1) / (m + 1)
      c_.vmulpd(s[3], s[2], s[2]);
      horner_f64(s[4], s[3], {2.885390081788046, 0.9617966741682273, 0.5770834966370306, 0.41167613469684833,
                              0.34068741403441544});
      c_.vmulpd(s[2], s[2], s[4]);              // log2(m)
      ops_.to_f64(s[3], s[1], h);
      c_.vaddpd(s[2], s[2], s[3]);              // log2|x|
      ops_.to_f64(s[3], y, h);
      c_.vminpd(s[3], s[3], k_.f64(0x1p60));    // y = +-inf with log2|x| = 0 gives 1; 2^60
      c_.vmaxpd(s[3], s[3], k_.f64(-0x1p60));   // times the least log2|x| != 0 still passes 400
      c_.vmulpd(s[2], s[2], s[3]);              // w
      c_.vminpd(s[2], s[2], k_.f64(400.0));     // NaN here becomes a number; fixed below
      c_.vmaxpd(s[2], s[2], k_.f64(-400.0));
      c_.vaddpd(s[3], s[2], k_.f64(0x1.8p52));  // n in the low bits
      c_.vsubpd(s[4], s[3], k_.f64(0x1.8p52));
      c_.vsubpd(s[2], s[2], s[4]);              // f in [-1/2, 1/2]
      horner_f64(s[4], s[2], {0.6931471807056965, 0.24022651068780715, 0.055504103629734264, 0.009618037768834832,
                              0.0013333936571925421, 0.0001546688256407209, 1.5196041785772198e-05});
      c_.vfmadd213pd(s[4], s[2], k_.f64(1.0));
      c_.vpsllq(s[3], s[3], 52);
      c_.vpaddq(s[4], s[4], s[3]);              // 2^n 2^f
      ops_.from_f64(dst, s[4], h);
    }
    // Sign: x has its sign bit (-0 and -inf included) and y is an odd integer.
    ops_.round(s[0], y, 0);
    ops_.cmp(s[0], s[0], y, Ops::Eq);           // y is an integer (or +-inf)
    c_.vmulps(s[1], y, k_(0.5f));
    ops_.round(s[2], s[1], 0);
    ops_.cmp(s[1], s[2], s[1], Ops::Ne);
    c_.vandps(s[1], s[1], s[0]);                // y is odd
    c_.vandps(s[2], x, k_.bits_of(0x80000000));
    c_.vandps(s[2], s[2], s[1]);
    c_.vxorps(dst, dst, s[2]);
    // NaN: finite x < 0 with y not an integer, or either is NaN.
    ops_.cmp(s[1], x, k_(0.0f), Ops::Lt);
    ops_.cmp(s[2], x, k_(-INFINITY), Ops::Ne);
    c_.vandps(s[1], s[1], s[2]);
    c_.vandnps(s[1], s[0], s[1]);
    ops_.cmp(s[2], x, y, Ops::Unord);
    c_.vorps(s[1], s[1], s[2]);
    c_.vmovaps(s[2], k_.bits_of(0x7fc00000));
    ops_.blend(dst, dst, s[2], s[1]);
    // 1: y == 0 or x == 1, NaN or not.
    ops_.cmp(s[1], y, k_(0.0f), Ops::Eq);
    ops_.cmp(s[2], x, k_(1.0f), Ops::Eq);
    c_.vorps(s[1], s[1], s[2]);
    c_.vmovaps(s[2], k_(1.0f));
    ops_.blend(dst, dst, s[2], s[1]);
  }

 private:
  enum class Base { E, Two };

  // acc = c[0] + t (c[1] + t (c[2] + ...)).
  void horner(const R& acc, const R& t, std::initializer_list<float> c) {
    const float* p = c.end() - 1;
    c_.vmovaps(acc, k_(*p));
    while (p != c.begin()) c_.vfmadd213ps(acc, t, k_(*--p));
  }
  void horner_f64(const R& acc, const R& t, const std::vector<double>& c) { ops_.horner_f64(acc, t, c); }

  // dst |= x's sign bit: for a function with the sign of x, so f(-0) = -0
  // where the arithmetic gave +0.
  void sign_of_x(const R& dst, const R& x, const R& tmp) {
    c_.vandps(tmp, x, k_.bits_of(0x80000000));
    c_.vorps(dst, dst, tmp);
  }

  // dst = x clamped to [lo, hi]; NaN stays NaN (vminps/vmaxps return their
  // second operand when either is NaN, so x goes second).
  void clamp(const R& dst, const R& x, float lo, float hi, const R& tmp) {
    c_.vmovaps(dst, k_(lo));
    c_.vmaxps(dst, dst, x);
    c_.vmovaps(tmp, k_(hi));
    c_.vminps(dst, tmp, dst);
  }

  // p = e^r or 2^f for x's reduced argument, t = n + 1.5 2^23 (n in its low
  // mantissa bits: rint by the addition, valid for |n| < 2^22); r is a
  // temporary. x may be r.
  void exp_poly(const R& p, const R& t, const R& x, const R& r, Base base) {
    if (base == Base::E) {
      c_.vmovaps(t, k_(0x1.8p23f));
      c_.vfmadd231ps(t, x, k_(1.44269504088896341f));
      c_.vsubps(p, t, k_(0x1.8p23f));                 // n
      if (r != x) c_.vmovaps(r, x);
      c_.vfnmadd231ps(r, p, k_(0.6931471824645996f));  // r = x - n ln2_hi
      c_.vfnmadd231ps(r, p, k_(-1.904654299957768e-09f));  //  - n ln2_lo
      horner(p, r, {0.4999999403953552f, 0.1666651964187622f, 0.041668400168418884f, 0.008368851616978645f,
                    0.0013814318226650357f});
      c_.vfmadd213ps(p, r, k_(1.0f));
      c_.vfmadd213ps(p, r, k_(1.0f));                  // 1 + r + r^2 Q(r)
    } else {
      c_.vaddps(t, x, k_(0x1.8p23f));
      c_.vsubps(p, t, k_(0x1.8p23f));                  // n
      c_.vsubps(r, x, p);                              // f, exact
      horner(p, r, {0.6931471824645996f, 0.24022647738456726f, 0.05550331994891167f, 0.009618439711630344f,
                    0.0013399133458733559f, 0.00015353152411989868f});
      c_.vfmadd213ps(p, r, k_(1.0f));
    }
  }
  // dst = p 2^n by adding n into p's exponent field: right while the
  // result is a normal float.
  void scale_fast(const R& dst, const R& p, const R& t) {
    c_.vpslld(t, t, 23);  // the bits of 1.5 2^23 shift out, leaving n << 23
    c_.vpaddd(dst, p, t);
  }

  void exp_like(const R& dst, const R& x, const Scratch& s, Base base) {
    const float fast_limit = base == Base::E ? 86.0f : 125.0f;
    const float lo = base == Base::E ? -104.0f : -151.0f, hi = base == Base::E ? 89.0f : 129.0f;
    Xbyak::Label done;
    exp_poly(s[1], s[0], x, s[2], base);
    scale_fast(dst, s[1], s[0]);
    c_.vandps(s[3], x, k_.bits_of(0x7fffffff));
    ops_.jump_if_none(s[2], s[3], k_(fast_limit), Ops::Nle, done);  // NaN too: its payload would reach the exponent
    // Slow path: n in [-151, 129]; 2^n as two factors, each a normal float.
    clamp(s[3], x, lo, hi, s[2]);
    exp_poly(s[1], s[0], s[3], s[2], base);
    c_.vpsubd(s[0], s[0], k_.bits_of(0x4b400000));  // n
    c_.vpsrad(s[2], s[0], 1);
    c_.vpsubd(s[0], s[0], s[2]);
    c_.vpaddd(s[2], s[2], k_.bits_of(127));
    c_.vpslld(s[2], s[2], 23);
    c_.vpaddd(s[0], s[0], k_.bits_of(127));
    c_.vpslld(s[0], s[0], 23);
    c_.vmulps(dst, s[1], s[2]);
    c_.vmulps(dst, dst, s[0]);
    c_.L(done);
  }

  // f = (e^x - 1) / 2 for x in [-18, 88.73]: x = n ln2 + r,
  // expm1(r) = r + r^2 Q(r) (Q of degree 4), and with s = 2^(n-1),
  // f = s expm1(r) + (s - 1/2): halving keeps 2^(n-1) finite up to n = 128.
  // x may be c; a, b, c are clobbered.
  void expm1_half(const R& f, const R& x, const R& a, const R& b, const R& c) {
    c_.vmovaps(a, k_(0x1.8p23f));
    c_.vfmadd231ps(a, x, k_(1.44269504088896341f));  // t
    c_.vsubps(b, a, k_(0x1.8p23f));                    // n
    if (c != x) c_.vmovaps(c, x);
    c_.vfnmadd231ps(c, b, k_(0.6931471824645996f));
    c_.vfnmadd231ps(c, b, k_(-1.904654299957768e-09f));  // r
    c_.vmulps(b, c, c);
    horner(f, c, {0.4999999701976776f, 0.16666541993618011f, 0.04166720435023308f, 0.00836664717644453f,
                  0.0013882494531571865f});
    c_.vfmadd213ps(f, b, c);                            // expm1(r)
    c_.vpslld(a, a, 23);
    c_.vpaddd(a, a, k_(0.5f));                          // 2^(n-1)
    c_.vsubps(b, a, k_(0.5f));
    c_.vfmadd213ps(f, a, b);
  }

  // x = m 2^e: e (float) and z = m - 1 with m in [sqrt(1/2), sqrt(2));
  // inputs below FLT_MIN are scaled by 2^23 first. Sign, zero, inf and NaN
  // give garbage that log_specials replaces. t1, t2 are clobbered.
  //
  // Note [Log on AVX-512]
  // AVX-512 splits x itself: vgetmantps gives m in [1, 2) and vgetexpps
  // e = floor(log2 |x|), both exact for denormals too, so the scaling and
  // the exponent arithmetic go; m >= sqrt(2) is halved (e + 1) under a
  // k-mask. The same m and e as the AVX2 steps, so the same numbers bit for
  // bit (a NaN may differ in sign), and vfixupimmps sets the special values
  // in one instruction
  // (log_specials): float32 log of 1M values 706 -> 390 us on one core,
  // NumPy 386.
  void log_reduce(const R& e, const R& z, const R& x, const R& t1, const R& t2) {
    if constexpr (Ops::kZmm) {
      c_.vgetmantps(z, x, 0x4);  // interval [1, 2), sign dropped (zero and inf give 1)
      c_.vgetexpps(e, x);        // zero: -inf, inf: inf
      ops_.cmp_k(c_.k2, z, k_(1.41421354f), Ops::Ge);
      c_.vmulps(z | c_.k2, z, k_(0.5f));
      c_.vaddps(e | c_.k2, e, k_(1.0f));
      c_.vsubps(z, z, k_(1.0f));
      return;
    }
    ops_.cmp(t1, x, k_(1.17549435e-38f), Ops::Lt);
    c_.vmulps(z, x, k_(8388608.0f));
    ops_.blend(z, x, z, t1);
    c_.vandps(t1, t1, k_(23.0f));                     // 23 where scaled, else 0
    c_.vpsrld(e, z, 23);
    c_.vpsubd(e, e, k_.bits_of(126));
    c_.vcvtdq2ps(e, e);
    c_.vsubps(e, e, t1);
    c_.vandps(z, z, k_.bits_of(0x807fffff));
    c_.vorps(z, z, k_.bits_of(0x3f000000));          // m in [0.5, 1)
    ops_.cmp(t1, z, k_(0.707106781186547524f), Ops::Lt);
    c_.vandps(t2, t1, k_(1.0f));
    c_.vsubps(e, e, t2);                              // e -= 1 where m < sqrt(1/2)
    c_.vandps(t2, t1, z);
    c_.vaddps(z, z, t2);                              // m += m there
    c_.vsubps(z, z, k_(1.0f));
  }
  // tail = log(1 + z) - z = z^3 P(z) - z^2/2. t is clobbered.
  void log_tail(const R& tail, const R& z, const R& t) {
    horner(tail, z, {3.3333331174E-1f, -2.4999993993E-1f, 2.0000714765E-1f, -1.6668057665E-1f, 1.4249322787E-1f,
                     -1.2420140846E-1f, 1.1676998740E-1f, -1.1514610310E-1f, 7.0376836292E-2f});
    c_.vmulps(t, z, z);
    c_.vmulps(tail, tail, z);
    c_.vmulps(tail, tail, t);
    c_.vfnmadd231ps(tail, t, k_(0.5f));
  }
  // dst = v, except x == 0 -> -inf, x < 0 or NaN -> NaN, x == inf -> inf.
  void log_specials(const R& dst, const R& v, const R& x, const R& t1, const R& t2) {
    if constexpr (Ops::kZmm) {  // Note [Log on AVX-512]
      // A response per class of x (vfixupimmps' table, a nibble each, class
      // 0 lowest): QNaN itself, SNaN quieted, +-0 -inf, 1 +0, -inf NaN,
      // inf inf, negative NaN, positive v.
      c_.vfixupimmps(v, x, k_.bits_of(0x03538421), 0);
      if (dst.getIdx() != v.getIdx()) c_.vmovaps(dst, v);
      return;
    }
    ops_.cmp(t2, x, k_(0.0f), Ops::Eq);
    c_.vmovaps(t1, k_(-INFINITY));
    ops_.blend(v, v, t1, t2);
    ops_.cmp(t2, x, k_(0.0f), Ops::Lt);
    ops_.cmp(t1, x, x, Ops::Unord);
    c_.vorps(t2, t2, t1);
    c_.vmovaps(t1, k_.bits_of(0x7fc00000));
    ops_.blend(v, v, t1, t2);
    ops_.cmp(t2, x, k_(INFINITY), Ops::Eq);
    ops_.blend(dst, v, x, t2);
  }

  void trig(const R& dst, const R& x, const Scratch& s, Trig f) {
    Xbyak::Label fast, done;
    c_.vandps(s[0], x, k_.bits_of(0x7fffffff));
    ops_.jump_if_none(s[1], s[0], k_(0x1p30f), Ops::Gt, fast);
    for (int h = 0; h < 2; ++h) {
      reduce_pi_2_any(x, s, h);
      trig_finish(dst, s, h, f);
    }
    c_.jmp(done, Xbyak::CodeGenerator::T_NEAR);
    c_.L(fast);
    for (int h = 0; h < 2; ++h) {
      ops_.to_f64(s[0], x, h);
      reduce_pi_2(s);
      trig_finish(dst, s, h, f);
    }
    c_.L(done);
    if (f != Trig::Cos) {  // sin(-0) = tan(-0) = -0: the reduction's sums give +0
      ops_.cmp(s[0], x, k_(0.0f), Ops::Eq);
      ops_.blend(dst, dst, x, s[0]);
    }
  }

  // x (float64, in s[0]) to s[0] = r = x - q pi/2, s[1] = q + 1.5 2^52 (q
  // in its low bits). q = rint(x 2/pi) comes right while x 2/pi has no
  // error near 1/2: |x| <= 2^40, with 2/pi to 2^-54.
  void reduce_pi_2(const Scratch& s) {
    c_.vmovapd(s[1], k_.f64(0x1.8p52));
    c_.vfmadd231pd(s[1], s[0], k_.f64(0.6366197723675814));
    c_.vsubpd(s[2], s[1], k_.f64(0x1.8p52));
    c_.vfnmadd231pd(s[0], s[2], k_.f64(1.5707963267948966));  // exact: |r| < 2 needs 53 bits
    c_.vfnmadd231pd(s[0], s[2], k_.f64(6.123233995736766e-17));
    c_.vfnmadd231pd(s[0], s[2], k_.f64(-1.4973849048591698e-33));
  }

  // The same for any float32 x, without a table (the slow path, taken by a
  // vector with a lane beyond 2^30): 2/pi = C0 + C1 + C2 + C3 (float64
  // parts, to 2^-217); each x Ci is split exactly into H + L by FMA, each
  // of the seven parts that matter reduced mod 4 (exact: a part too large
  // for its fraction is a multiple of 4 and becomes 0), and the parts
  // summed with TwoSum into s + comp. Then x 2/pi mod 4 = s + comp to
  // 2^-83, q = rint(s) and r = (s - q + comp) pi/2.
  void reduce_pi_2_any(const R& x, const Scratch& s, int h) {
    static constexpr double kTwoOverPi[] = {0.6366197723675814, -3.935735335036497e-17, -2.1442872565786008e-33,
                                            1.6107127853188224e-49};
    c_.vxorpd(s[2], s[2], s[2]);  // s
    c_.vxorpd(s[3], s[3], s[3]);  // comp
    for (int i = 0; i < 4; ++i) {
      ops_.to_f64(s[0], x, h);
      c_.vmulpd(s[0], s[0], k_.f64(kTwoOverPi[i]));  // H
      add_mod_4(s[0], s);
      if (i == 3) break;                             // L3 < 2^-86
      ops_.to_f64(s[0], x, h);
      c_.vmulpd(s[1], s[0], k_.f64(kTwoOverPi[i]));
      c_.vfmsub231pd(s[1], s[0], k_.f64(kTwoOverPi[i]));  // L = x Ci - H, exact
      c_.vmovapd(s[0], s[1]);
      add_mod_4(s[0], s);
    }
    ops_.round_f64(s[1], s[2], 0);                   // q
    c_.vsubpd(s[2], s[2], s[1]);
    c_.vaddpd(s[2], s[2], s[3]);
    c_.vmulpd(s[0], s[2], k_.f64(1.5707963267948966));  // r
    c_.vaddpd(s[1], s[1], k_.f64(0x1.8p52));
  }
  // (s[2], s[3]) += v mod 4, exactly; v and s[1], s[4] are clobbered.
  void add_mod_4(const R& v, const Scratch& s) {
    c_.vmulpd(s[1], v, k_.f64(0.25));
    ops_.round_f64(s[1], s[1], 0);
    c_.vfnmadd231pd(v, s[1], k_.f64(4.0));  // v - 4 rint(v/4)
    c_.vaddpd(s[1], s[2], v);               // TwoSum: S = s + v
    c_.vsubpd(s[4], s[1], s[2]);            // v' = S - s
    c_.vsubpd(v, v, s[4]);                  // v - v'
    c_.vsubpd(s[4], s[1], s[4]);            // S - v'
    c_.vsubpd(s[2], s[2], s[4]);            // s - (S - v')
    c_.vaddpd(s[2], s[2], v);               // the rounding error of S
    c_.vaddpd(s[3], s[3], s[2]);
    c_.vmovapd(s[2], s[1]);
  }

  // From r (s[0]) and q (low bits of s[1]): sin r or cos r by q mod 4 (for
  // cos, q + 1), or their quotient for tan, into half h of dst.
  void trig_finish(const R& dst, const Scratch& s, int h, Trig f) {
    const double kRMax = 0.7862;  // pi/4 and a little: where the polynomials were fit
    c_.vmovapd(s[2], k_.f64(-kRMax));
    c_.vmaxpd(s[2], s[2], s[0]);  // NaN stays
    c_.vmovapd(s[3], k_.f64(kRMax));
    c_.vminpd(s[0], s[3], s[2]);
    c_.vmulpd(s[2], s[0], s[0]);
    horner_f64(s[3], s[2], {-0.16666666640588676, 0.008333329280567708, -0.00019839304426927254,
                            2.7180465642273784e-06});
    c_.vfmadd213pd(s[3], s[2], k_.f64(1.0));
    c_.vmulpd(s[3], s[3], s[0]);  // sin r = r (1 + r^2 S): -0 stays -0
    horner_f64(s[4], s[2], {0.04166666661910572, -0.001388888346717071, 2.4799451529893815e-05,
                            -2.720504474805572e-07});
    c_.vfmadd213pd(s[4], s[2], k_.f64(-0.5));
    c_.vfmadd213pd(s[4], s[2], k_.f64(1.0));  // cos r
    if (f == Trig::Tan) {
      ops_.tan_of(s[3], s[3], s[4], s[1], s[0], s[2]);
      ops_.from_f64(dst, s[3], h);
      return;
    }
    if (f == Trig::Cos) c_.vpaddq(s[1], s[1], k_.f64(0x1p-1074));  // q + 1
    c_.vpsllq(s[2], s[1], 63);
    ops_.blend(s[3], s[3], s[4], s[2], Width::k64);  // odd q: the other one
    c_.vpsllq(s[1], s[1], 62);
    c_.vandpd(s[1], s[1], k_.f64(-0.0));
    c_.vxorpd(s[3], s[3], s[1]);  // q mod 4 >= 2: negate
    ops_.from_f64(dst, s[3], h);
  }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  Ops& ops_;
};

}  // namespace braze::jit
