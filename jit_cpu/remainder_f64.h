// Python's % of floats in float64 lanes, exactly as the reference computes
// it (graph/scalar_math.h Mod): fmod, then the divisor's sign. float32
// lanes compute it here too, on their float64 halves, and round the result
// once, as the reference rounds its double result. Checked bit for bit
// against the reference by `JitCpuDtypes.FloatRemainderIsExact`.
//
// Note [Exact remainder]
// fmod(x, y) is exact: |x| - q |y| for the integer q = trunc(|x| / |y|)
// is a float. No vector instruction computes it, and one division cannot
// find q when |x| / |y| passes 2^53 (up to 2^2098). So the remainder is
// reduced in steps of at most 52 bits of quotient: with y = |y| and r = |x|,
// while r >= y in any lane,
//   Y = max(y, m 2^(e - 51)), m the mantissa of y in [1, 2) and e the
//     exponent of r: y 2^s for s = e - e_y - 51 when that is positive,
//     exact (only the exponent changes), and Y <= r < 2^52 Y;
//   q = trunc(fl(r / Y)) <= 2^52 is the true quotient or 1 more: the
//     division's error is under half of 1, and it cannot round below an
//     integer under 2^53 that r / Y reaches (rounding is monotonic);
//   so r - q Y lies in [-Y, Y), a multiple of Y's ulp: FMA computes it
//     exactly, and a negative one adds Y, exactly.
// Each step leaves r < Y, so the ratio r / y loses 51 bits of exponent (a
// float32 pair needs at most 6 steps, a float64 pair 42). Lanes already
// done (r < y) have Y = y and q = 0, and keep r. NaN, |x| = inf and y = 0
// give NaN before the loop; y = inf leaves r = |x|.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cmath>
#include <cstdint>

#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class RemainderF64 {
 public:
  using Ops = VectorOps<R>;

  RemainderF64(Xbyak::CodeGenerator& c, ConstantPool& k, Ops& ops) : c_(c), k_(k), ops_(ops) {}

  // dst = a % b (Python's: the sign of b); dst distinct from a and b;
  // s[0..4] clobbered.
  void emit(const R& dst, const R& a, const R& b, const std::array<R, 5>& s) {
    const R &y = s[0], &big = s[1], &q = s[2], &rest = s[3], &m = s[4];
    constexpr Width w = Width::k64;
    const uint64_t kAbs = 0x7fffffffffffffffull, kSign = 0x8000000000000000ull;
    const uint64_t kExponent = 0x7ff0000000000000ull, kMantissa = 0x000fffffffffffffull;
    c_.vandpd(y, b, k_.bits64(kAbs));
    c_.vandpd(dst, a, k_.bits64(kAbs));
    // NaN where fmod is: y = 0, |x| = inf, or either NaN.
    ops_.cmp(m, y, k_.f64(0.0), Ops::Eq, w);
    ops_.cmp(q, dst, k_.f64(INFINITY), Ops::Eq, w);
    c_.vorpd(m, m, q);
    ops_.cmp(q, dst, y, Ops::Unord, w);
    c_.vorpd(m, m, q);
    c_.vmovapd(q, k_.f64(NAN));
    ops_.blend(dst, dst, q, m, w);
    Xbyak::Label step, done;
    c_.L(step);
    ops_.jump_if_none(m, dst, y, Ops::Ge, done, /*f64=*/true);
    // Y = max(y, m 2^(e - 51)); m, y's mantissa in [1, 2), is recomputed
    // each step (registers are few), a denormal y's normalised first.
    c_.vmulpd(q, y, k_.f64(0x1p54));
    ops_.cmp(m, y, k_.f64(0x1p-1022), Ops::Lt, w);
    ops_.blend(big, y, q, m, w);
    c_.vandpd(big, big, k_.bits64(kMantissa));
    c_.vorpd(big, big, k_.f64(1.0));
    c_.vandpd(rest, dst, k_.bits64(kExponent));  // 2^e (0 for a denormal r, whose ratio is below 2^52)
    c_.vmulpd(rest, rest, k_.f64(0x1p-51));
    c_.vmulpd(big, big, rest);
    c_.vmaxpd(big, big, y);
    c_.vdivpd(q, dst, big);
    ops_.round_f64(q, q, 3);  // toward zero
    c_.vmovapd(rest, dst);
    c_.vfnmadd231pd(rest, q, big);  // r - q Y, exactly
    ops_.cmp(m, rest, k_.f64(0.0), Ops::Lt, w);  // q was 1 too large: add Y back
    c_.vandpd(m, m, big);
    c_.vaddpd(rest, rest, m);
    ops_.cmp(m, dst, y, Ops::Ge, w);
    ops_.blend(dst, dst, rest, m, w);
    c_.jmp(step);
    c_.L(done);

    // fmod has x's sign; Python's % then moves a nonzero result to b's
    // side (r + b) and gives a zero b's sign.
    c_.vandpd(m, a, k_.bits64(kSign));
    c_.vorpd(dst, dst, m);
    ops_.cmp(m, dst, k_.f64(0.0), Ops::Ne, w);  // NaN too: NaN + b stays NaN
    c_.vxorpd(q, dst, b);
    c_.vandpd(m, m, q);  // sign bit: nonzero, and the signs differ
    c_.vaddpd(q, dst, b);
    ops_.blend(dst, dst, q, m, w);
    ops_.cmp(m, dst, k_.f64(0.0), Ops::Eq, w);
    c_.vandpd(q, b, k_.bits64(kSign));
    ops_.blend(dst, dst, q, m, w);
  }

 private:
  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  Ops& ops_;
};

}  // namespace braze::jit
