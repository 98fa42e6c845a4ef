// Emitters for Long lanes (Note [Wide kernels] in lanes.h): integers as the
// int64 they are, 4 per ymm and 8 per zmm. AVX-512 (with DQ) has an
// instruction for each; AVX2 lacks 64-bit multiply, max, min, abs,
// arithmetic shift and conversions to and from float64, so those are
// sequences here. Every function takes registers of type R (Xmm, Ymm or
// Zmm; Xmm, for horizontal steps, takes the AVX2 forms), may clobber the
// scratch registers it is given, and lets dst be an argument unless it says
// otherwise.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include "graph/dtype.h"
#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class LongOps {
 public:
  static constexpr bool kZmm = std::is_same_v<R, Xbyak::Zmm>;

  LongOps(Xbyak::CodeGenerator& c, ConstantPool& k, VectorOps<R>& v) : c_(c), k_(k), v_(v) {}

  enum Pred { Eq, Ne, Lt, Le, Gt, Ge };

  // dst = 64-bit lane mask of (a pred b), signed.
  void cmp(const R& dst, const R& a, const R& b, Pred p) {
    if constexpr (kZmm) {
      static constexpr uint8_t imm[] = {0, 4, 1, 2, 6, 5};  // vpcmpq: eq, ne, lt, le, nle, nlt
      c_.vpcmpq(c_.k2, a, b, imm[p]);
      c_.vpmovm2q(dst, c_.k2);
    } else {
      switch (p) {
        case Eq: c_.vpcmpeqq(dst, a, b); return;
        case Gt: c_.vpcmpgtq(dst, a, b); return;
        case Lt: c_.vpcmpgtq(dst, b, a); return;
        case Ne: c_.vpcmpeqq(dst, a, b); break;
        case Le: c_.vpcmpgtq(dst, a, b); break;
        case Ge: c_.vpcmpgtq(dst, b, a); break;
      }
      c_.vxorps(dst, dst, k_.bits_of(0xffffffff));  // the complement
    }
  }

  // dst = lane mask of x != 0.
  void nonzero(const R& dst, const R& x) {
    if constexpr (kZmm) {
      c_.vptestmq(c_.k2, x, x);
      c_.vpmovm2q(dst, c_.k2);
    } else {
      c_.vpcmpeqq(dst, x, k_.bits_of(0));
      c_.vxorps(dst, dst, k_.bits_of(0xffffffff));
    }
  }

  // dst = lane mask of x < 0: its sign bit, spread (vpsraq is AVX-512's).
  void negative(const R& dst, const R& x) {
    if constexpr (kZmm) {
      c_.vpsraq(dst, x, 63);
    } else {
      c_.vpsrad(dst, x, 31);
      c_.vpshufd(dst, dst, 0xf5);  // each high dword's sign into both halves
    }
  }

  // NumPy maximum/minimum of integers. s must not be dst, a or b.
  void max(const R& dst, const R& a, const R& b, const R& s) {
    if constexpr (kZmm) {
      c_.vpmaxsq(dst, a, b);
    } else {
      c_.vpcmpgtq(s, b, a);
      c_.vblendvpd(dst, a, b, s);
    }
  }
  void min(const R& dst, const R& a, const R& b, const R& s) {
    if constexpr (kZmm) {
      c_.vpminsq(dst, a, b);
    } else {
      c_.vpcmpgtq(s, a, b);
      c_.vblendvpd(dst, a, b, s);
    }
  }

  // |x|; INT64_MIN wraps to itself, as the reference's. s must not be x.
  void abs(const R& dst, const R& x, const R& s) {
    if constexpr (kZmm) {
      c_.vpabsq(dst, x);
    } else {
      negative(s, x);
      c_.vpxor(dst, x, s);
      c_.vpsubq(dst, dst, s);  // (x ^ s) - s
    }
  }

  // The sign of x, -1, 0 or 1. s must not be x.
  void sign(const R& dst, const R& x, const R& s) {
    if constexpr (kZmm) {
      c_.vpmaxsq(dst, x, k_.bits64(~uint64_t{0}));
      c_.vpminsq(dst, dst, k_.bits64(1));
    } else {
      negative(s, x);
      c_.vpcmpgtq(dst, x, k_.bits_of(0));
      c_.vpsubq(dst, s, dst);  // (x < 0 ? -1 : 0) - (x > 0 ? -1 : 0)
    }
  }

  // The low 64 bits of a * b, which wrap as the reference's. AVX2 adds
  // the two cross products of 32-bit halves, shifted, to the product of
  // the low halves (vpmuludq multiplies the low 32 bits of each lane).
  // s0 and s1 must not be dst, a or b.
  void mul(const R& dst, const R& a, const R& b, const R& s0, const R& s1) {
    if constexpr (kZmm) {
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

  // Lanes holding integers of dtype `from` wrapped to the range of `to`
  // (two's complement truncation, as the reference's store), sign- or
  // zero-extended: a lane always holds the value itself.
  void wrap(const R& dst, const R& x, DType from, DType to, const R& s) {
    const bool fits = to == DType::Int64 || from == DType::Bool || from == to ||
                      (to == DType::Int32 && from != DType::Int64);
    if (fits) {
      if (dst.getIdx() != x.getIdx()) c_.vmovaps(dst, x);
    } else if (to == DType::UInt8) {
      c_.vandps(dst, x, k_.bits64(0xff));
    } else if (to == DType::Int32) {
      sign_extend(dst, x, 32, s);
    } else {  // int8
      sign_extend(dst, x, 8, s);
    }
  }

  // dst = the float64 lanes x (an int64) rounds to, once, as a C cast
  // rounds. AVX2 adds the high 16 bits, made exact in a float64 biased by
  // 3 2^67, to the low 48 in one biased by 2^52. s0 and s1 must not be x.
  void to_f64(const R& dst, const R& x, const R& s0, const R& s1) {
    if constexpr (kZmm) {
      c_.vcvtqq2pd(dst, x);
    } else {
      c_.vpsrad(s0, x, 16);
      c_.vpxor(s1, s1, s1);
      c_.vpblendw(s0, s0, s1, 0x33);  // (x >> 48) 2^32, as int64
      c_.vpaddq(s0, s0, k_.f64(0x3p67));
      c_.vpblendw(dst, x, k_.f64(0x1p52), 0x88);  // 2^52 + the low 48 bits
      c_.vsubpd(s0, s0, k_.f64(0x3p67 + 0x1p52));
      c_.vaddpd(dst, s0, dst);
    }
  }

  // dst = float64 lanes x truncated toward zero to int64, as the
  // reference's cast: NaN and |x| >= 2^63 give INT64_MIN (vcvttpd2qq's
  // answer). AVX2: x is m 2^(e-1075), m the 53-bit significand and e the
  // biased exponent, so |x| truncated is m << (e - 1075) or m >> (1075 - e),
  // whichever count is in range (vpsllvq and vpsrlvq give 0 past 63, and a
  // negative count is past 63 unsigned). s0..s2 must not be x.
  void trunc_from_f64(const R& dst, const R& x, const R& s0, const R& s1, const R& s2) {
    if constexpr (kZmm) {
      c_.vcvttpd2qq(dst, x);
    } else {
      c_.vpsrlq(s0, x, 52);
      c_.vandps(s0, s0, k_.bits64(0x7ff));             // e
      c_.vandps(s1, x, k_.bits64((uint64_t{1} << 52) - 1));
      c_.vorps(s1, s1, k_.bits64(uint64_t{1} << 52));  // m
      c_.vpsubq(s2, s0, k_.bits64(1075));
      c_.vpxor(s0, s0, s0);
      c_.vpsubq(s0, s0, s2);                           // 1075 - e
      c_.vpsllvq(s2, s1, s2);
      c_.vpsrlvq(s1, s1, s0);
      c_.vpor(s1, s1, s2);                             // |x| truncated
      negative(s0, x);
      c_.vpxor(s1, s1, s0);
      c_.vpsubq(s1, s1, s0);                           // with x's sign
      c_.vandps(s2, x, k_.bits64(~uint64_t{0} >> 1));
      c_.vpcmpgtq(s2, s2, k_.bits64(0x43dfffffffffffff));  // |x| >= 2^63, or NaN
      c_.vblendvpd(dst, s1, k_.bits64(uint64_t{1} << 63), s2);
    }
  }

  // Integer power by squaring, wrapping, as fn::Pow: for b < 0 only a = 1
  // and a = -1 are nonzero, and there a^b = a^(b & 1). dst must not be a
  // or b; s are six scratch registers.
  void pow(const R& dst, const R& a, const R& b, const std::array<R, 6>& s) {
    const R &base = s[0], &e = s[1], &bit = s[2], &t = s[3];
    c_.vmovaps(dst, k_.bits64(1));
    c_.vmovaps(base, a);
    negative(e, b);
    c_.vandps(bit, b, k_.bits64(1));
    v_.blend(e, b, bit, e, Width::k64);  // the exponent left
    Xbyak::Label step;
    c_.L(step);
    c_.vpsllq(bit, e, 63);
    negative(bit, bit);                  // its low bit, as a mask
    mul(t, dst, base, s[4], s[5]);
    v_.blend(dst, dst, t, bit, Width::k64);
    mul(base, base, base, s[4], s[5]);
    c_.vpsrlq(e, e, 1);
    if constexpr (kZmm) {
      c_.vptestmq(c_.k2, e, e);
      c_.kortestb(c_.k2, c_.k2);
    } else {
      c_.vptest(e, e);
    }
    c_.jnz(step);
    c_.vmovaps(t, k_.bits64(1));
    cmp(base, a, t, Eq);
    c_.vmovaps(t, k_.bits64(~uint64_t{0}));
    cmp(t, a, t, Eq);
    c_.vorps(base, base, t);  // a is 1 or -1
    negative(t, b);
    c_.vandnps(t, base, t);   // b < 0 and a is neither: 0
    c_.vandnps(dst, t, dst);
  }

 private:
  // dst = the low `bits` (8 or 32) of each lane, sign-extended to 64.
  void sign_extend(const R& dst, const R& x, int bits, const R& s) {
    if constexpr (kZmm) {
      c_.vpsllq(dst, x, 64 - bits);
      c_.vpsraq(dst, dst, 64 - bits);
    } else {
      const R& low = bits == 32 ? x : dst;
      if (bits != 32) {  // to 32 bits first, in the low dword
        c_.vpslld(dst, x, 32 - bits);
        c_.vpsrad(dst, dst, 32 - bits);
      }
      c_.vpshufd(s, low, 0xa0);  // each low dword into both halves
      c_.vpsrad(s, s, 31);
      c_.vpblendd(dst, low, s, 0xaa);  // its sign into the high dword
    }
  }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  VectorOps<R>& v_;
};

}  // namespace braze::jit
