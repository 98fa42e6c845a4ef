// sin, cos and tan in float64 lanes (Note [Wide kernels] in lanes.h), checked
// against long double by `JitCpuF64.VectorMathErrorBounds`
// (tests/cpp/jit_cpu_f64_test.cpp).
//
// Reduction: q = rint(x 2/pi), r = x - q pi/2 with pi/2 = P1 + P2 + P3
// (three float64 parts, 159 bits): x - q P1 is exact by FMA (a multiple of
// 2^-52 below 1 in magnitude), q P2 is an exact product (FMA), and TwoSum
// keeps r as rh + rl. For |x| <= 2^32 (q < 2^32, the fast domain) the
// error left is below 2^-120, against |r| > 2^-62 for every float64 not a
// multiple of pi/2 (none is), so r is right to far more than 53 bits. A
// vector with a lane beyond 2^32 (or +-inf) calls the C library's sin/cos
// for those lanes (Note [Host calls] in host_call.h): long double sinl and
// cosl, which reduce exactly over the whole range.
//
// Kernels on |r| <= pi/4 (and the little more a rounded q allows), as
// fdlibm's __kernel_sin/__kernel_cos: sin = r + r^3 S(r^2) + rl (1 - r^2/2),
// cos = w + ((1 - w) - r^2/2) + (r^4 C(r^2) - r rl) with w = 1 - r^2/2,
// S and C fdlibm's minimax polynomials. Picked and signed by q mod 4; tan
// is their quotient (VectorOps::tan_of). Max error 1 ulp for sin and cos, 2
// for tan, for every float64; inf and NaN give NaN.
#pragma once

#include <xbyak/xbyak.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <array>
#include <type_traits>
#include <vector>

#include "jit_cpu/host_call.h"
#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class SinCosF64 {
 public:
  using Ops = VectorOps<R>;
  static constexpr double kFastDomain = 0x1p32;

  SinCosF64(Xbyak::CodeGenerator& c, ConstantPool& k, Ops& ops) : c_(c), k_(k), ops_(ops) {}

  // dst = sin(x), cos(x) or tan(x); dst distinct from x, s[0..4] clobbered.
  void emit(const R& dst, const R& x, const std::array<R, 5>& s, Trig f) {
    reduce(dst, x, s);
    finish(dst, s, f);
    if (f != Trig::Cos) {  // sin(-0) = tan(-0) = -0: the reduction's sums give +0
      ops_.cmp(s[0], x, k_.f64(0.0), Ops::Eq, Width::k64);
      ops_.blend(dst, dst, x, s[0], Width::k64);
    }
    Xbyak::Label done;
    c_.vandpd(s[0], x, k_.bits64(0x7fffffffffffffffull));
    ops_.jump_if_none(s[1], s[0], k_.f64(kFastDomain), Ops::Gt, done, /*f64=*/true);  // NaN: not greater
    constexpr int lanes = std::is_same_v<R, Xbyak::Zmm> ? 8 : 4;
    if (f == Trig::Sin) call_host(c_, &host_sin, "host_sin_f64", dst, x, lanes);
    else if (f == Trig::Cos) call_host(c_, &host_cos, "host_cos_f64", dst, x, lanes);
    else call_host(c_, &host_tan, "host_tan_f64", dst, x, lanes);
    c_.L(done);
  }

  // The slow path's lanes: the C library's long double sinl/cosl reduce
  // any float64 exactly and carry 11 bits more than the result keeps.
  // (glibc's double cos is 8 ulp off at x = 5.3193726483265414e255, whose
  // cosine is -4.687e-19; the tests hold this path to 1 ulp there.)
  static void host_sin(double* dst, const double* x, int64_t lanes) {
    for (int64_t i = 0; i < lanes; ++i)
      if (std::abs(x[i]) > kFastDomain) dst[i] = static_cast<double>(sinl(x[i]));
  }
  static void host_cos(double* dst, const double* x, int64_t lanes) {
    for (int64_t i = 0; i < lanes; ++i)
      if (std::abs(x[i]) > kFastDomain) dst[i] = static_cast<double>(cosl(x[i]));
  }
  static void host_tan(double* dst, const double* x, int64_t lanes) {
    for (int64_t i = 0; i < lanes; ++i)
      if (std::abs(x[i]) > kFastDomain) dst[i] = static_cast<double>(tanl(x[i]));
  }

 private:
  // s[0] = rh, s[4] = rl, s[1] = q + 1.5 2^52 (q mod 4 in its low bits);
  // dst and s[2], s[3] clobbered.
  void reduce(const R& dst, const R& x, const std::array<R, 5>& s) {
    constexpr double P1 = 1.5707963267948966, P2 = 6.123233995736766e-17, P3 = -1.4973849048591698e-33;
    c_.vmovapd(s[1], k_.f64(0x1.8p52));
    c_.vfmadd231pd(s[1], x, k_.f64(0.6366197723675814));
    c_.vsubpd(s[2], s[1], k_.f64(0x1.8p52));  // q
    c_.vmovapd(s[0], x);
    c_.vfnmadd231pd(s[0], s[2], k_.f64(P1));  // a = x - q P1, exact
    c_.vmulpd(s[3], s[2], k_.f64(P2));        // b = q P2
    c_.vmovapd(s[4], s[3]);
    c_.vfmsub231pd(s[4], s[2], k_.f64(P2));   // q P2 - b, exact
    c_.vfmadd231pd(s[4], s[2], k_.f64(P3));   // bl: q P2 + q P3 = b + bl
    // TwoSum S + e = a + (-b), then rl = e - bl.
    c_.vsubpd(dst, s[0], s[3]);               // S
    c_.vsubpd(s[2], dst, s[0]);               // b' = S - a
    c_.vaddpd(s[3], s[3], s[2]);              // b + b'
    c_.vsubpd(s[2], dst, s[2]);               // S - b'
    c_.vsubpd(s[0], s[0], s[2]);              // a - (S - b')
    c_.vsubpd(s[0], s[0], s[3]);              // e = that + (-b - b')
    c_.vsubpd(s[4], s[0], s[4]);              // rl
    c_.vmovapd(s[0], dst);                    // rh
  }

  // From rh, rl (s[0], s[4]) and q (s[1]): fdlibm's kernels, picked and
  // signed by q mod 4 (for cos, q + 1), or their quotient for tan.
  void finish(const R& dst, const std::array<R, 5>& s, Trig f) {
    c_.vmulpd(s[2], s[0], s[0]);                                  // z = rh^2
    horner(s[3], s[2], {8.33333333332248946124e-03, -1.98412698298579493134e-04, 2.75573137070700676789e-06,
                        -2.50507602534068634195e-08, 1.58969099521155010221e-10});  // S2..S6
    c_.vmulpd(dst, s[2], s[0]);                                   // v = z rh
    c_.vmulpd(s[3], s[3], dst);                                   // v r
    c_.vfmsub231pd(s[3], s[4], k_.f64(0.5));                      // rl/2 - v r
    c_.vfmsub213pd(s[3], s[2], s[4]);                             // z (...) - rl
    c_.vfnmadd231pd(s[3], dst, k_.f64(-1.66666666666666324348e-01));  // - v S1
    c_.vsubpd(s[3], s[0], s[3]);                                  // sin
    horner(dst, s[2], {4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
                       -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11});
    c_.vmulpd(dst, dst, s[2]);
    c_.vmulpd(dst, dst, s[2]);                                    // z r = z^2 C(z)
    c_.vfnmadd231pd(dst, s[0], s[4]);                             // - rh rl
    c_.vmulpd(s[0], s[2], k_.f64(0.5));                           // hz
    c_.vmovapd(s[4], k_.f64(1.0));
    c_.vsubpd(s[4], s[4], s[0]);                                  // w = 1 - hz
    c_.vmovapd(s[2], k_.f64(1.0));
    c_.vsubpd(s[2], s[2], s[4]);
    c_.vsubpd(s[2], s[2], s[0]);                                  // (1 - w) - hz
    c_.vaddpd(s[2], s[2], dst);
    c_.vaddpd(s[4], s[4], s[2]);                                  // cos
    if (f == Trig::Tan) return ops_.tan_of(dst, s[3], s[4], s[1], s[0], s[2]);
    if (f == Trig::Cos) c_.vpaddq(s[1], s[1], k_.bits64(1));      // q + 1
    c_.vpsllq(s[2], s[1], 63);
    ops_.blend(s[3], s[3], s[4], s[2], Width::k64);                       // odd q: the other one
    c_.vpsllq(s[1], s[1], 62);
    c_.vandpd(s[1], s[1], k_.bits64(0x8000000000000000ull));
    c_.vxorpd(dst, s[3], s[1]);                                   // q mod 4 >= 2: negated
  }

  void horner(const R& acc, const R& t, const std::vector<double>& c) { ops_.horner_f64(acc, t, c); }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  Ops& ops_;
};

}  // namespace braze::jit
