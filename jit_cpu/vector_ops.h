// Vector operations emitted with xbyak for one register width: the parts of
// code generation that differ between AVX2 (Ymm, masks in vector registers)
// and AVX-512 (Zmm, masks in k registers). The polynomial math built on them
// is in jit_cpu/vector_math.h and is the same code for both widths.
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
#include <vector>

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
  // A float64 constant, repeated across the line like the others.
  Xbyak::Address f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    std::array<uint32_t, 16> line;
    for (size_t i = 0; i < 16; i += 2) line[i] = static_cast<uint32_t>(bits), line[i + 1] = static_cast<uint32_t>(bits >> 32);
    return lanes(line);
  }
  // 64-bit lanes of these bits (masks and exponent fields of float64).
  Xbyak::Address bits64(uint64_t bits) {
    double v;
    std::memcpy(&v, &bits, 8);
    return f64(v);
  }
  // A table of float64 values read by gathers (Note [Tables of the float64
  // math] in erf_f64.h); equal tables are emitted once.
  const Xbyak::Label& table_f64(const std::vector<double>& v) { return table_labels_[v]; }
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
    for (auto& [v, label] : table_labels_) {
      c_.align(64);
      c_.L(label);
      for (double x : v) {
        uint64_t bits;
        std::memcpy(&bits, &x, 8);
        c_.dq(bits);
      }
    }
  }
  size_t code_size() const { return code_size_; }

 private:
  Xbyak::CodeGenerator& c_;
  std::map<uint32_t, Xbyak::Label> labels_;
  std::map<std::array<uint32_t, 16>, Xbyak::Label> lane_labels_;
  std::map<std::vector<double>, Xbyak::Label> table_labels_;
  size_t code_size_ = 0;
};

// The lanes an operation reads: float32 (and int32, bool masks) or, in
// wide kernels (Note [Wide kernels] in lanes.h), float64.
enum class Width : uint8_t { k32, k64 };

// Which function of one range reduction (vector_math.h, trig_f64.h).
enum class Trig : uint8_t { Sin, Cos, Tan };

template <class R>
class VectorOps {
 public:
  static constexpr bool kZmm = std::is_same_v<R, Xbyak::Zmm>;

  VectorOps(Xbyak::CodeGenerator& c, ConstantPool& k) : c_(c), k_(k) {}

  // Comparison predicates (vcmpps imm8).
  enum Pred : uint8_t { Eq = 0x00, Lt = 0x01, Le = 0x02, Unord = 0x03, Ne = 0x04, Nle = 0x06, Ord = 0x07, Nge = 0x09, Ge = 0x0d, Gt = 0x0e };
  // The register type that holds half the lanes.
  using Half = std::conditional_t<kZmm, Xbyak::Ymm, Xbyak::Xmm>;

  // dst = lane mask of (a pred b), over float32 lanes or (k64) float64
  // lanes (Note [Wide kernels]).
  void cmp(const R& dst, const R& a, const Xbyak::Operand& b, uint8_t pred, Width w = Width::k32) {
    if constexpr (kZmm) {
      cmp_k(c_.k2, a, b, pred, w);
      if (w == Width::k64) c_.vpmovm2q(dst, c_.k2);
      else c_.vpmovm2d(dst, c_.k2);
    } else {
      if (w == Width::k64) c_.vcmppd(dst, a, b, pred);
      else c_.vcmpps(dst, a, b, pred);
    }
  }
  // dst = mask ? t : f, by the sign bit of each lane of mask.
  void blend(const R& dst, const R& f, const R& t, const R& mask, Width w = Width::k32) {
    if constexpr (kZmm) {
      if (w == Width::k64) c_.vpmovq2m(c_.k2, mask);
      else c_.vpmovd2m(c_.k2, mask);
      blend_k(dst, f, t, c_.k2, w);
    } else {
      if (w == Width::k64) c_.vblendvpd(dst, f, t, mask);
      else c_.vblendvps(dst, f, t, mask);
    }
  }
  // AVX-512 only: the same with the mask in a k-register, where a mask that
  // only selects need not go through a vector and back (two instructions a
  // vector: max along rows of [512, 512], one thread, 0.078 -> 0.055 ns an
  // element; argmax: Note [Arg reductions]).
  void cmp_k(const Xbyak::Opmask& k, const R& a, const Xbyak::Operand& b, uint8_t pred, Width w = Width::k32) {
    if (w == Width::k64) c_.vcmppd(k, a, b, pred);
    else c_.vcmpps(k, a, b, pred);
  }
  void blend_k(const R& dst, const R& f, const R& t, const Xbyak::Opmask& k, Width w = Width::k32) {
    if (w == Width::k64) c_.vblendmpd(dst | k, f, t);
    else c_.vblendmps(dst | k, f, t);
  }
  void round(const R& dst, const R& src, uint8_t mode) {  // 0 nearest even, 1 floor, 2 ceil
    if constexpr (kZmm) c_.vrndscaleps(dst, src, mode | 8);
    else c_.vroundps(dst, src, mode | 8);
  }
  void round_f64(const R& dst, const R& src, uint8_t mode) {
    if constexpr (kZmm) c_.vrndscalepd(dst, src, mode | 8);
    else c_.vroundpd(dst, src, mode | 8);
  }
  // Jumps to `to` when (a pred b) holds in no lane (of float32, or of
  // float64 with `f64`); clobbers `tmp` and the flags. For rare slow paths:
  // the common case costs a compare and a test.
  void jump_if_none(const R& tmp, const R& a, const Xbyak::Operand& b, uint8_t pred, const Xbyak::Label& to,
                    bool f64 = false) {
    if constexpr (kZmm) {
      if (f64) c_.vcmppd(c_.k2, a, b, pred);
      else c_.vcmpps(c_.k2, a, b, pred);
      c_.kortestw(c_.k2, c_.k2);  // the upper 8 bits of a float64 compare are zero
    } else {
      if (f64) c_.vcmppd(tmp, a, b, pred);
      else c_.vcmpps(tmp, a, b, pred);
      c_.vptest(tmp, tmp);
    }
    c_.jz(to, Xbyak::CodeGenerator::T_NEAR);
  }

  // float64 lanes, for the math that needs more than float32 in between
  // (pow, the range reduction of sin and cos). A register of type R holds
  // half the float lanes as float64.
  // dst (float64) = half `h` (0: low lanes, 1: high lanes) of src (float32).
  void to_f64(const R& dst, const R& src, int h) {
    const Half lo(dst.getIdx());
    if (h == 0) {
      c_.vcvtps2pd(dst, Half(src.getIdx()));
      return;
    }
    if constexpr (kZmm) c_.vextractf64x4(lo, src, 1);
    else c_.vextractf128(lo, src, 1);
    c_.vcvtps2pd(dst, lo);
  }
  // dst (float64) = half `h` of src (int32 lanes), exactly.
  void int_to_f64(const R& dst, const R& src, int h) {
    const Half lo(dst.getIdx());
    if (h == 0) {
      c_.vcvtdq2pd(dst, Half(src.getIdx()));
      return;
    }
    if constexpr (kZmm) c_.vextracti64x4(lo, src, 1);
    else c_.vextracti128(lo, src, 1);
    c_.vcvtdq2pd(dst, lo);
  }
  // Half `h` of dst (float32) = src (float64), rounded; src is clobbered.
  void from_f64(const R& dst, const R& src, int h) {
    const Half narrow(src.getIdx());
    c_.vcvtpd2ps(narrow, src);
    if constexpr (kZmm) c_.vinsertf64x4(dst, dst, narrow, h);
    else c_.vinsertf128(dst, dst, narrow, h);
  }
  // float64 lanes: tan x from sin r, cos r and the reduction's q (its low
  // bit in q's low bit): sin r / cos r for an even q, -cos r / sin r for an
  // odd one. dst may be sin; t0 and t1 are clobbered.
  void tan_of(const R& dst, const R& sin, const R& cos, const R& q, const R& t0, const R& t1) {
    c_.vpsllq(t1, q, 63);                   // odd q: the sign bit
    blend(t0, cos, sin, t1, Width::k64);    // the denominator
    blend(dst, sin, cos, t1, Width::k64);   // the numerator
    c_.vdivpd(dst, dst, t0);
    c_.vxorpd(dst, dst, t1);                // odd q: negated
  }
  // float64 lanes: acc = c[0] + t (c[1] + t (c[2] + ...)), by FMA.
  void horner_f64(const R& acc, const R& t, const std::vector<double>& c) {
    c_.vmovapd(acc, k_.f64(c.back()));
    for (size_t i = c.size() - 1; i-- > 0;) c_.vfmadd213pd(acc, t, k_.f64(c[i]));
  }

  // dst = table[index + at] per 64-bit lane: index holds element indices
  // (int64 lanes) into the float64 table whose address is in `base`; mask
  // is clobbered (AVX2 takes the gather's mask in a vector register).
  // dst, index and mask must differ.
  void gather_f64(const R& dst, const Xbyak::Reg64& base, const R& index, int at, const R& mask) {
    if constexpr (kZmm) {
      (void)mask;
      c_.kxnorw(c_.k2, c_.k2, c_.k2);
      c_.vgatherqpd(dst | c_.k2, c_.ptr[base + index * 8 + 8 * at]);
    } else {
      c_.vpcmpeqq(mask, mask, mask);
      c_.vgatherqpd(dst, c_.ptr[base + index * 8 + 8 * at], mask);
    }
  }

  // NumPy maximum/minimum: NaN if either is NaN, else as a < b ? b : a.
  void maximum(const R& dst, const R& a, const R& b, const R& s, Width w = Width::k32) {
    if (w == Width::k64) c_.vmaxpd(s, b, a);
    else c_.vmaxps(s, b, a);  // (b > a) ? b : a; a when either is NaN
    nan_of(dst, s, b, w);
  }
  void minimum(const R& dst, const R& a, const R& b, const R& s, Width w = Width::k32) {
    if (w == Width::k64) c_.vminpd(s, b, a);
    else c_.vminps(s, b, a);
    nan_of(dst, s, b, w);
  }

 private:
  // dst = b where b is NaN, else s.
  void nan_of(const R& dst, const R& s, const R& b, Width w) {
    if constexpr (kZmm) {
      cmp_k(c_.k2, b, b, Unord, w);
      blend_k(dst, s, b, c_.k2, w);
    } else {
      cmp(dst, b, b, Unord, w);
      blend(dst, s, b, dst, w);
    }
  }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
};

}  // namespace braze::jit
