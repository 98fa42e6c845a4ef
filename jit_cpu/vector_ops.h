// Vector operations emitted with xbyak for one register width: the parts of
// code generation that differ between AVX2 (Ymm, masks in vector registers)
// and AVX-512 (Zmm, masks in k registers), and the polynomial math.
//
// Values live in registers as float32 lanes; a bool is a lane mask (all
// ones or zero). Every function takes registers of type R (Xmm, Ymm or Zmm)
// and may clobber the scratch registers it is given.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <type_traits>

namespace braze::jit {

// Constants read from memory, each repeated across a 64-byte line so any
// register width can use it as a full-width operand.
class ConstantPool {
 public:
  explicit ConstantPool(Xbyak::CodeGenerator& c) : c_(c) {}
  Xbyak::Address operator()(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return bits_of(bits);
  }
  Xbyak::Address bits_of(uint32_t bits) { return c_.ptr[c_.rip + labels_[bits]]; }
  // Per-lane values (16 lanes), e.g. lane indices or a tail mask.
  Xbyak::Address lanes(const std::array<uint32_t, 16>& v) { return c_.ptr[c_.rip + lane_labels_[v]]; }
  // Emits the pool after the last instruction; code_size() then says where
  // the instructions (and the nops that align the pool) end and the data
  // begins, so a disassembler does not decode constants as code.
  void emit() {
    c_.align(64);
    code_size_ = c_.getSize();
    for (auto& [bits, label] : labels_) {
      c_.L(label);
      for (int i = 0; i < 16; ++i) c_.dd(bits);
    }
    for (auto& [v, label] : lane_labels_) {
      c_.L(label);
      for (uint32_t x : v) c_.dd(x);
    }
  }
  size_t code_size() const { return code_size_; }

 private:
  Xbyak::CodeGenerator& c_;
  std::map<uint32_t, Xbyak::Label> labels_;
  std::map<std::array<uint32_t, 16>, Xbyak::Label> lane_labels_;
  size_t code_size_ = 0;
};

template <class R>
class VectorOps {
 public:
  static constexpr bool kZmm = std::is_same_v<R, Xbyak::Zmm>;

  VectorOps(Xbyak::CodeGenerator& c, ConstantPool& k) : c_(c), k_(k) {}

  // Comparison predicates (vcmpps imm8).
  enum Pred : uint8_t { Eq = 0x00, Lt = 0x01, Le = 0x02, Unord = 0x03, Ne = 0x04, Ge = 0x0d, Gt = 0x0e };

  // dst = lane mask of (a pred b).
  void cmp(const R& dst, const R& a, const Xbyak::Operand& b, uint8_t pred) {
    if constexpr (kZmm) {
      c_.vcmpps(c_.k2, a, b, pred);
      c_.vpmovm2d(dst, c_.k2);
    } else {
      c_.vcmpps(dst, a, b, pred);
    }
  }
  // dst = mask ? t : f.
  void blend(const R& dst, const R& f, const R& t, const R& mask) {
    if constexpr (kZmm) {
      c_.vpmovd2m(c_.k2, mask);
      c_.vblendmps(dst | c_.k2, f, t);
    } else {
      c_.vblendvps(dst, f, t, mask);
    }
  }
  void round(const R& dst, const R& src, uint8_t mode) {  // 0 nearest even, 1 floor, 2 ceil
    if constexpr (kZmm) c_.vrndscaleps(dst, src, mode | 8);
    else c_.vroundps(dst, src, mode | 8);
  }

  // NumPy maximum/minimum: NaN if either is NaN, else as a < b ? b : a.
  void maximum(const R& dst, const R& a, const R& b, const R& s) {
    c_.vmaxps(s, b, a);  // (b > a) ? b : a; a when either is NaN
    cmp(dst, b, b, Unord);
    blend(dst, s, b, dst);
  }
  void minimum(const R& dst, const R& a, const R& b, const R& s) {
    c_.vminps(s, b, a);
    cmp(dst, b, b, Unord);
    blend(dst, s, b, dst);
  }

  // exp(x): x = n ln2 + r with |r| <= ln2/2 (Cody-Waite), e^r by a degree-6
  // polynomial (Cephes expf coefficients), times 2^n built in two halves so
  // results down to the denormals and overflow to inf come out right.
  // Max error 2 ulp (tests/cpp/vector_math_test.cpp).
  void exp(const R& dst, const R& x, const R& s0, const R& s1, const R& s2) {
    // Clamp to [-104, 89]; vmaxps/vminps return the second operand on NaN,
    // so NaN goes through.
    c_.vmovaps(s0, k_(-104.0f));
    c_.vmaxps(s0, s0, x);
    c_.vmovaps(s1, k_(89.0f));
    c_.vminps(s0, s1, s0);
    c_.vmulps(s1, s0, k_(1.44269504088896341f));
    round(s1, s1, 0);                                  // n
    c_.vfnmadd231ps(s0, s1, k_(0.693359375f));         // r = x - n*C1
    c_.vfnmadd231ps(s0, s1, k_(-2.12194440e-4f));      //     - n*C2
    c_.vmovaps(s2, k_(1.9875691500E-4f));
    c_.vfmadd213ps(s2, s0, k_(1.3981999507E-3f));
    c_.vfmadd213ps(s2, s0, k_(8.3334519073E-3f));
    c_.vfmadd213ps(s2, s0, k_(4.1665795894E-2f));
    c_.vfmadd213ps(s2, s0, k_(1.6666665459E-1f));
    c_.vfmadd213ps(s2, s0, k_(5.0000001201E-1f));
    c_.vmulps(dst, s0, s0);                            // r^2 (x is no longer read: dst may alias it)
    c_.vfmadd213ps(s2, dst, s0);                       // p*r^2 + r
    c_.vaddps(s2, s2, k_(1.0f));                       // e^r
    // 2^n = 2^(n/2 rounded down) * 2^(rest)
    c_.vcvtps2dq(s1, s1);
    c_.vpsrad(s0, s1, 1);                              // n1
    c_.vpsubd(s1, s1, s0);                             // n2 = n - n1
    c_.vpaddd(s0, s0, k_.bits_of(127));
    c_.vpslld(s0, s0, 23);
    c_.vpaddd(s1, s1, k_.bits_of(127));
    c_.vpslld(s1, s1, 23);
    c_.vmulps(dst, s2, s0);
    c_.vmulps(dst, dst, s1);
  }

  // log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by the Cephes
  // logf polynomial; denormal inputs are scaled first. log(0) = -inf,
  // log(x<0) = NaN, log(inf) = inf, NaN stays NaN. Max error 2 ulp.
  void log(const R& dst, const R& x, const R& s0, const R& s1, const R& s2, const R& s3) {
    // Denormals: scale by 2^23, remember -23 in the exponent.
    cmp(s3, x, k_(1.17549435e-38f), Lt);               // x < FLT_MIN (includes <= 0)
    c_.vmulps(s0, x, k_(8388608.0f));
    blend(s0, x, s0, s3);
    c_.vandps(s3, s3, k_(23.0f));                      // 23 where scaled, else 0
    c_.vpsrld(s1, s0, 23);
    c_.vpsubd(s1, s1, k_.bits_of(126));
    c_.vcvtdq2ps(s1, s1);
    c_.vsubps(s1, s1, s3);                             // e
    c_.vandps(s0, s0, k_.bits_of(0x807fffff));
    c_.vorps(s0, s0, k_.bits_of(0x3f000000));          // m in [0.5, 1)
    cmp(s3, s0, k_(0.707106781186547524f), Lt);
    c_.vandps(s2, s3, k_(1.0f));
    c_.vsubps(s1, s1, s2);                             // e -= 1 where m < sqrt(1/2)
    c_.vandps(s2, s3, s0);
    c_.vaddps(s0, s0, s2);                             // m += m there
    c_.vsubps(s0, s0, k_(1.0f));                       // z = m - 1
    c_.vmovaps(s2, k_(7.0376836292E-2f));
    c_.vfmadd213ps(s2, s0, k_(-1.1514610310E-1f));
    c_.vfmadd213ps(s2, s0, k_(1.1676998740E-1f));
    c_.vfmadd213ps(s2, s0, k_(-1.2420140846E-1f));
    c_.vfmadd213ps(s2, s0, k_(1.4249322787E-1f));
    c_.vfmadd213ps(s2, s0, k_(-1.6668057665E-1f));
    c_.vfmadd213ps(s2, s0, k_(2.0000714765E-1f));
    c_.vfmadd213ps(s2, s0, k_(-2.4999993993E-1f));
    c_.vfmadd213ps(s2, s0, k_(3.3333331174E-1f));
    c_.vmulps(s3, s0, s0);                             // z^2
    c_.vmulps(s2, s2, s0);
    c_.vmulps(s2, s2, s3);                             // p*z^3
    c_.vfmadd231ps(s2, s1, k_(-2.12194440e-4f));
    c_.vfnmadd231ps(s2, s3, k_(0.5f));                 // - z^2/2
    c_.vaddps(s0, s0, s2);
    c_.vfmadd231ps(s0, s1, k_(0.693359375f));          // + e*C1
    // Special values: x == 0 -> -inf, x < 0 or NaN -> NaN, x == inf -> inf.
    cmp(s3, x, k_(0.0f), Eq);
    c_.vmovaps(s2, k_(-INFINITY));
    blend(s0, s0, s2, s3);
    cmp(s3, x, k_(0.0f), Lt);
    cmp(s2, x, x, Unord);
    c_.vorps(s3, s3, s2);
    c_.vmovaps(s2, k_.bits_of(0x7fc00000));
    blend(s0, s0, s2, s3);
    cmp(s3, x, k_(INFINITY), Eq);
    blend(dst, s0, x, s3);
  }

  // tanh: odd; for |x| < 0.625 the Cephes tanhf polynomial, else
  // 1 - 2/(e^{2|x|} + 1), with x's sign put back. Max error 2 ulp.
  void tanh(const R& dst, const R& x, const R& s0, const R& s1, const R& s2, const R& s3, const R& s4) {
    c_.vandps(s4, x, k_.bits_of(0x7fffffff));          // |x|
    c_.vaddps(s3, s4, s4);
    exp(s3, s3, s0, s1, s2);
    c_.vaddps(s3, s3, k_(1.0f));
    c_.vmovaps(s0, k_(2.0f));
    c_.vdivps(s0, s0, s3);
    c_.vmovaps(s3, k_(1.0f));
    c_.vsubps(s3, s3, s0);                             // large |x|
    c_.vmulps(s0, x, x);
    c_.vmovaps(s1, k_(-5.70498872745E-3f));
    c_.vfmadd213ps(s1, s0, k_(2.06390887954E-2f));
    c_.vfmadd213ps(s1, s0, k_(-5.37397155531E-2f));
    c_.vfmadd213ps(s1, s0, k_(1.33314422036E-1f));
    c_.vfmadd213ps(s1, s0, k_(-3.33332819422E-1f));
    c_.vmulps(s1, s1, s0);
    c_.vandps(s2, x, k_.bits_of(0x7fffffff));
    c_.vfmadd213ps(s1, s2, s2);                        // small |x|: |x| + |x| z p
    cmp(s0, s4, k_(0.625f), Lt);
    blend(s3, s3, s1, s0);
    cmp(s0, x, x, Unord);                              // NaN: keep it
    blend(s3, s3, x, s0);
    c_.vandps(s0, x, k_.bits_of(0x80000000));
    c_.vorps(dst, s3, s0);
  }

  // sigmoid(x) = 1 / (1 + t) for x >= 0 and t / (1 + t) for x < 0, with
  // t = e^-|x|: no overflow, and full relative accuracy down to the
  // denormal results of large negative x. Max error 3 ulp.
  void sigmoid(const R& dst, const R& x, const R& s0, const R& s1, const R& s2, const R& s3) {
    c_.vorps(s3, x, k_.bits_of(0x80000000));           // -|x|
    exp(s3, s3, s0, s1, s2);                            // t
    c_.vaddps(s0, s3, k_(1.0f));
    c_.vmovaps(s1, k_(1.0f));
    c_.vdivps(s1, s1, s0);                              // 1 / (1 + t)
    c_.vmulps(s0, s3, s1);                              // t / (1 + t)
    cmp(s2, x, k_(0.0f), Lt);
    blend(dst, s1, s0, s2);
  }

 private:
  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
};

}  // namespace braze::jit
