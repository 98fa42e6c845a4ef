// Integer emitters for values in Int lanes (Note [Lanes] in lanes.h), and for
// the Long lanes of wide kernels where a Width says so: the parts that
// differ between AVX2 and AVX-512, and the ops that have no single
// instruction (float to int casts, remainder, power). Every function
// takes registers of type R (Ymm or Zmm), writes dst last unless it says
// otherwise, and may clobber the scratch registers it is given.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include "graph/dtype.h"
#include "jit_cpu/lanes.h"
#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class IntOps {
 public:
  static constexpr bool kZmm = std::is_same_v<R, Xbyak::Zmm>;
  using Half = std::conditional_t<kZmm, Xbyak::Ymm, Xbyak::Xmm>;  // half of R's lanes

  IntOps(Xbyak::CodeGenerator& c, ConstantPool& k, VectorOps<R>& v) : c_(c), k_(k), v_(v) {}

  enum Pred { Eq, Ne, Lt, Le, Gt, Ge };

  // dst = lane mask of (a pred b), signed, over int32 lanes or (k64) the
  // int64 lanes of wide kernels. uint8 values are zero-extended, so a
  // signed compare orders them right too.
  void cmp(const R& dst, const R& a, const R& b, Pred p, Width w = Width::k32) {
    const bool q = w == Width::k64;
    if constexpr (kZmm) {
      static constexpr uint8_t imm[] = {0, 4, 1, 2, 6, 5};  // vpcmpd: eq, ne, lt, le, nle, nlt
      if (q) {
        c_.vpcmpq(c_.k2, a, b, imm[p]);
        c_.vpmovm2q(dst, c_.k2);
      } else {
        c_.vpcmpd(c_.k2, a, b, imm[p]);
        c_.vpmovm2d(dst, c_.k2);
      }
    } else {
      switch (p) {
        case Eq: lanes_eq(dst, a, b, q); return;
        case Gt: lanes_gt(dst, a, b, q); return;
        case Lt: lanes_gt(dst, b, a, q); return;
        case Ne: lanes_eq(dst, a, b, q); break;
        case Le: lanes_gt(dst, a, b, q); break;
        case Ge: lanes_gt(dst, b, a, q); break;
      }
      c_.vxorps(dst, dst, k_.bits_of(0xffffffff));  // the complement
    }
  }

  // AVX2's two integer comparisons, of 64-bit lanes when q.
  void lanes_eq(const R& dst, const R& x, const R& y, bool q) { q ? c_.vpcmpeqq(dst, x, y) : c_.vpcmpeqd(dst, x, y); }
  void lanes_gt(const R& dst, const R& x, const R& y, bool q) { q ? c_.vpcmpgtq(dst, x, y) : c_.vpcmpgtd(dst, x, y); }

  // dst = lane mask of x != 0.
  void nonzero(const R& dst, const R& x, const R& s) {
    c_.vxorps(s, s, s);
    cmp(dst, x, s, Ne);
  }

  // Wraps int32 lanes to the range of `to` (two's complement truncation,
  // as the reference's store): int8 and int16 sign-extend their low byte
  // or word, uint8 and uint16 keep it. `from` names what the lanes hold
  // now, to skip what cannot change them.
  void wrap(const R& dst, const R& x, DType from, DType to) {
    if (holds_all(to, from)) {
      if (dst.getIdx() != x.getIdx()) c_.vmovaps(dst, x);
    } else if (is_signed(to)) {
      const uint8_t unused = static_cast<uint8_t>(32 - 8 * itemsize(to));
      c_.vpslld(dst, x, unused);
      c_.vpsrad(dst, dst, unused);
    } else {
      c_.vandps(dst, x, k_.bits_of(to == DType::UInt8 ? 0xff : 0xffff));
    }
  }

  // float32 lanes to the low 32 bits of the value truncated toward zero as
  // an int64, as the reference's cast: NaN, infinities and |x| >= 2^63 give
  // 0 (the low bits of INT64_MIN), and 2^31 <= |x| < 2^63 wraps
  // (3e9 is -1294967296). vcvttps2dq is right below 2^31 and gives
  // 0x80000000 elsewhere; there, x is an integer m 2^(e-150) (m the 24-bit
  // significand, e the biased exponent >= 158), whose low 32 bits are
  // m << (e - 150), which vpsllvd makes 0 once the shift passes 31.
  void trunc_from_float(const R& dst, const R& x, const R& s0, const R& s1, const R& s2) {
    c_.vpsrld(s0, x, 23);
    c_.vandps(s0, s0, k_.bits_of(0xff));
    c_.vpsubd(s0, s0, k_.bits_of(150));                 // the shift
    c_.vandps(s1, x, k_.bits_of(0x7fffff));
    c_.vorps(s1, s1, k_.bits_of(0x800000));             // m
    c_.vpsllvd(s1, s1, s0);
    c_.vpsrad(s0, x, 31);                               // -1 where x < 0
    c_.vxorps(s1, s1, s0);
    c_.vpsubd(s1, s1, s0);                              // negated there
    c_.vcvttps2dq(s2, x);
    c_.vmovaps(s0, k_.bits_of(0x80000000));
    cmp(s0, s2, s0, Eq);
    v_.blend(dst, s2, s1, s0);
  }

  // dst = clamp(x, -1, 1): the sign of an integer.
  void sign(const R& dst, const R& x) {
    c_.vpmaxsd(dst, x, k_.bits_of(0xffffffff));
    c_.vpminsd(dst, dst, k_.bits_of(1));
  }

  // Python's %, the sign of the divisor's: a - floor(a / b) * b, with the
  // quotient in float64, where it is exact: |a / b| <= 2^31, so its
  // rounding error is below 2^-22 / |b|, less than the 1 / |b| that a
  // quotient which is not an integer stays away from one. x % 0 and
  // x % -1 are 0 (INT_MIN / -1 overflows the quotient). dst must not be a
  // or b.
  void mod(const R& dst, const R& a, const R& b, const R& s0, const R& s1, const R& s2, const R& s3) {
    floor_quotient_half(Half(s2.getIdx()), Half(a.getIdx()), Half(b.getIdx()), s0, s1);
    upper_half(Half(s3.getIdx()), a);
    upper_half(Half(dst.getIdx()), b);
    floor_quotient_half(Half(s3.getIdx()), Half(s3.getIdx()), Half(dst.getIdx()), s0, s1);
    if constexpr (kZmm) c_.vinserti64x4(s2, s2, Half(s3.getIdx()), 1);
    else c_.vinserti128(s2, s2, Half(s3.getIdx()), 1);
    c_.vpmulld(s2, s2, b);
    c_.vpsubd(s2, a, s2);                               // exact, so its wrapped int32 is right
    c_.vxorps(s0, s0, s0);
    cmp(s0, b, s0, Eq);
    c_.vmovaps(s1, k_.bits_of(0xffffffff));
    cmp(s1, b, s1, Eq);
    c_.vorps(s0, s0, s1);
    c_.vandnps(dst, s0, s2);
  }

  // dst = lane mask of x < 0: its sign bit, spread (AVX2 has no 64-bit
  // arithmetic shift: each high dword's sign is copied into both halves).
  void negative(const R& dst, const R& x, Width w = Width::k32) {
    if (w == Width::k32) {
      c_.vpsrad(dst, x, 31);
    } else if constexpr (kZmm) {
      c_.vpsraq(dst, x, 63);
    } else {
      c_.vpsrad(dst, x, 31);
      c_.vpshufd(dst, dst, 0xf5);
    }
  }

  // The low bits of a * b, which wrap as the reference's. 64-bit lanes on
  // AVX2 add the two cross products of 32-bit halves, shifted, to the
  // product of the low halves (vpmuludq multiplies the low 32 bits of each
  // lane); s0 and s1, used there only, must not be dst, a or b.
  void mul(const R& dst, const R& a, const R& b, const R& s0, const R& s1, Width w = Width::k32) {
    if (w == Width::k32) {
      c_.vpmulld(dst, a, b);
    } else if constexpr (kZmm) {
      c_.vpmullq(dst, a, b);
    } else {
      c_.vpsrlq(s0, a, 32);
      c_.vpmuludq(s0, s0, b);  // hi(a) lo(b)
      c_.vpsrlq(s1, b, 32);
      c_.vpmuludq(s1, s1, a);  // lo(a) hi(b)
      c_.vpaddq(s0, s0, s1);
      c_.vpsllq(s0, s0, 32);
      c_.vpmuludq(dst, a, b);
      c_.vpaddq(dst, dst, s0);
    }
  }

  // Integer power by squaring, wrapping, as fn::Pow: for b < 0 only a = 1
  // and a = -1 are nonzero, and there a^b = a^(b & 1). dst must not be a
  // or b; s are scratch (s[4] and s[5] for a 64-bit multiply only).
  void pow(const R& dst, const R& a, const R& b, const std::array<R, 6>& s, Width w = Width::k32) {
    const bool q = w == Width::k64;
    const Xbyak::Address one = q ? k_.bits64(1) : k_.bits_of(1);
    const R &base = s[0], &e = s[1], &bit = s[2], &t = s[3];
    c_.vmovaps(dst, one);
    c_.vmovaps(base, a);                                // squared each step
    negative(e, b, w);
    c_.vandps(bit, b, one);
    v_.blend(e, b, bit, e, w);                          // the exponent left
    Xbyak::Label step;
    c_.L(step);
    if (q) c_.vpsllq(bit, e, 63);
    else c_.vpslld(bit, e, 31);
    negative(bit, bit, w);                              // its low bit, as a mask
    mul(t, dst, base, s[4], s[5], w);
    v_.blend(dst, dst, t, bit, w);
    mul(base, base, base, s[4], s[5], w);
    if (q) c_.vpsrlq(e, e, 1);
    else c_.vpsrld(e, e, 1);
    if constexpr (kZmm) {
      if (q) c_.vptestmq(c_.k2, e, e);
      else c_.vptestmd(c_.k2, e, e);
      c_.kortestw(c_.k2, c_.k2);
    } else {
      c_.vptest(e, e);
    }
    c_.jnz(step);
    c_.vmovaps(t, one);
    cmp(base, a, t, Eq, w);
    c_.vmovaps(t, k_.bits_of(0xffffffff));
    cmp(t, a, t, Eq, w);
    c_.vorps(base, base, t);                            // a is 1 or -1
    negative(t, b, w);
    c_.vandnps(t, base, t);                             // b < 0 and a is neither: 0
    c_.vandnps(dst, t, dst);
  }

 private:
  // dst (int32, half width) = floor(a / b) for the half-width int32 a, b.
  void floor_quotient_half(const Half& dst, const Half& a, const Half& b, const R& s0, const R& s1) {
    c_.vcvtdq2pd(s0, a);
    c_.vcvtdq2pd(s1, b);
    c_.vdivpd(s0, s0, s1);
    if constexpr (kZmm) c_.vrndscalepd(s0, s0, 1 | 8);
    else c_.vroundpd(s0, s0, 1 | 8);
    c_.vcvttpd2dq(dst, s0);
  }

  void upper_half(const Half& dst, const R& x) {
    if constexpr (kZmm) c_.vextracti64x4(dst, x, 1);
    else c_.vextracti128(dst, x, 1);
  }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  VectorOps<R>& v_;
};

}  // namespace braze::jit
