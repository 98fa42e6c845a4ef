// Emitters for Long lanes (Note [Wide kernels] in lanes.h): integers as the
// int64 they are, 4 per ymm and 8 per zmm. AVX-512 (with DQ) has an
// instruction for each; AVX2 lacks 64-bit max, min, abs, arithmetic shift
// and conversions to and from float64, so those are sequences here
// (compares, multiply, the sign mask and power serve both widths in
// IntOps, by a Width). Every function takes registers of type R (Xmm, Ymm
// or Zmm; Xmm, for horizontal steps, takes the AVX2 forms), may clobber
// the scratch registers it is given, and lets dst be an argument unless it
// says otherwise.
#pragma once

#include <xbyak/xbyak.h>

#include <cstdint>
#include <type_traits>

#include "graph/dtype.h"
#include "jit_cpu/int_ops.h"
#include "jit_cpu/vector_ops.h"

namespace braze::jit {

template <class R>
class LongOps {
 public:
  static constexpr bool kZmm = std::is_same_v<R, Xbyak::Zmm>;

  LongOps(Xbyak::CodeGenerator& c, ConstantPool& k, VectorOps<R>& v) : c_(c), k_(k), ints_(c, k, v) {}

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
      ints_.negative(s, x, Width::k64);
      c_.vpxor(dst, x, s);
      c_.vpsubq(dst, dst, s);  // (x ^ s) - s
    }
  }

  // NumPy's x >> n (Note [Shift counts] in graph/scalar_math.h):
  // arithmetic; a count past 63, or a negative one (read as unsigned, as
  // vpsravq and vpsrlvq read it), gives x's sign. AVX2 has no vpsravq:
  // (x ^ sign) shifted logically, ^ sign again. s and t must not be dst,
  // x or n.
  void shift_right(const R& dst, const R& x, const R& n, const R& s, const R& t) {
    if constexpr (kZmm) {
      c_.vpsravq(dst, x, n);
    } else {
      ints_.negative(s, x, Width::k64);
      c_.vpxor(t, x, s);
      c_.vpsrlvq(t, t, n);
      c_.vpxor(dst, t, s);
    }
  }

  // The sign of x, -1, 0 or 1. s must not be x.
  void sign(const R& dst, const R& x, const R& s) {
    if constexpr (kZmm) {
      c_.vpmaxsq(dst, x, k_.bits64(~uint64_t{0}));
      c_.vpminsq(dst, dst, k_.bits64(1));
    } else {
      ints_.negative(s, x, Width::k64);
      c_.vpcmpgtq(dst, x, k_.bits_of(0));
      c_.vpsubq(dst, s, dst);  // (x < 0 ? -1 : 0) - (x > 0 ? -1 : 0)
    }
  }

  // Lanes holding integers of dtype `from` wrapped to the range of `to`
  // (two's complement truncation, as the reference's store), sign- or
  // zero-extended: a lane always holds the value itself.
  void wrap(const R& dst, const R& x, DType from, DType to, const R& s) {
    const int bits = 8 * static_cast<int>(itemsize(to));
    if (holds_all(to, from)) {
      if (dst.getIdx() != x.getIdx()) c_.vmovaps(dst, x);
    } else if (is_signed(to)) {
      sign_extend(dst, x, bits, s);
    } else {
      c_.vandps(dst, x, k_.bits64((uint64_t{1} << bits) - 1));
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
      ints_.negative(s0, x, Width::k64);
      c_.vpxor(s1, s1, s0);
      c_.vpsubq(s1, s1, s0);                           // with x's sign
      c_.vandps(s2, x, k_.bits64(~uint64_t{0} >> 1));
      c_.vpcmpgtq(s2, s2, k_.bits64(0x43dfffffffffffff));  // |x| >= 2^63, or NaN
      c_.vblendvpd(dst, s1, k_.bits64(uint64_t{1} << 63), s2);
    }
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
  IntOps<R> ints_;
};

}  // namespace braze::jit
