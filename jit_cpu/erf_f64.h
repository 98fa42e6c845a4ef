// erf in float64 lanes (Note [Wide kernels] in lanes.h), checked against
// long double by `JitCpuF64.VectorMathErrorBounds`
// (tests/cpp/jit_cpu_f64_test.cpp). Max error 1 ulp.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cmath>
#include <vector>

#include "jit_cpu/vector_ops.h"

namespace braze::jit {

// Note [Tables of the float64 math]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// erf and pow read per-lane coefficients from a table (gathers, one per
// coefficient) where one polynomial over the whole range would need many
// more terms or lose accuracy. The tables are computed when the code is
// generated, in long double from closed forms (no fitted numbers to copy),
// and emitted once per kernel after the constant pool (`table_f64`); the
// gather's base address is loaded into rax, which generated code uses only
// as a temporary.
template <class R>
class ErfF64 {
 public:
  using Ops = VectorOps<R>;
  static constexpr int kRows = 24;      // [j/4, (j+1)/4) for j < 24: erf rounds to +-1 from |x| = 5.93 on
  static constexpr int kTerms = 19;     // t^1 .. t^19
  static constexpr int kRow = 4 + kTerms;  // c, erf(c) in two parts, t^1's low part, the coefficients

  ErfF64(Xbyak::CodeGenerator& c, ConstantPool& k, Ops& ops) : c_(c), k_(k), ops_(ops) {}

  // erf(x) = sign(x) (E(c) + t P(t)), a = min(|x|, 6) = c + t: around the
  // centre c of a's quarter (0 for the first, so small x keep their
  // relative accuracy), E(c) = erf(c) in two float64 parts and P the
  // Taylor series to t^19: erf^(n+1)(c) = 2/sqrt(pi) (-1)^n H_n(c) e^-c^2
  // (Hermite polynomials). |t| <= 1/8 (1/4 in the first quarter), so the
  // first term left out is below 2^-60 of the result. dst is distinct from
  // x; s[0..3] clobbered.
  void emit(const R& dst, const R& x, const std::array<R, 5>& s) {
    c_.vandpd(s[0], x, k_.bits64(0x7fffffffffffffffull));
    c_.vminpd(s[0], s[0], k_.f64(6.0));  // a; NaN becomes 6 (fixed at the end)
    c_.vmulpd(s[1], s[0], k_.f64(4.0));
    ops_.round_f64(s[1], s[1], 1);
    c_.vminpd(s[1], s[1], k_.f64(kRows - 1.0));  // the row j
    c_.vmovapd(s[2], k_.f64(0x1p52));
    c_.vfmadd231pd(s[2], s[1], k_.f64(kRow));
    c_.vpsubq(s[2], s[2], k_.f64(0x1p52));       // j kRow as int64 lanes
    c_.lea(c_.rax, c_.ptr[c_.rip + k_.table_f64(table())]);
    ops_.gather_f64(s[1], c_.rax, s[2], 0, s[3]);
    c_.vsubpd(s[0], s[0], s[1]);                 // t = a - c
    ops_.gather_f64(dst, c_.rax, s[2], kRow - 1, s[3]);
    for (int n = kTerms - 1; n >= 2; --n) {
      ops_.gather_f64(s[1], c_.rax, s[2], 3 + n, s[3]);
      c_.vfmadd213pd(dst, s[0], s[1]);
    }
    // t P(t) = t a1_hi + t (a1_lo + t Q(t)), one rounding of the large
    // term: 2/sqrt(pi) in one float64 alone costs small x half an ulp.
    ops_.gather_f64(s[1], c_.rax, s[2], 3, s[3]);
    c_.vfmadd213pd(dst, s[0], s[1]);
    c_.vmulpd(dst, dst, s[0]);
    ops_.gather_f64(s[1], c_.rax, s[2], 4, s[3]);
    c_.vfmadd231pd(dst, s[0], s[1]);             // t P(t)
    ops_.gather_f64(s[1], c_.rax, s[2], 2, s[3]);
    c_.vaddpd(dst, dst, s[1]);                   // + erf(c)'s low part
    ops_.gather_f64(s[1], c_.rax, s[2], 1, s[3]);
    c_.vaddpd(dst, dst, s[1]);                   // + its high part
    c_.vandpd(s[0], x, k_.bits64(0x8000000000000000ull));
    c_.vxorpd(dst, dst, s[0]);                   // odd; erf(-0) = -0
    ops_.cmp(s[0], x, x, Ops::Unord, Width::k64);
    ops_.blend(dst, dst, x, s[0], Width::k64);
  }

 private:
  static std::vector<double> table() {
    std::vector<double> t;
    const long double two_over_sqrt_pi = 1.128379167095512573896158903121545172L;
    for (int j = 0; j < kRows; ++j) {
      const long double c = j == 0 ? 0.0L : (j + 0.5L) / 4;
      const long double e = erfl(c);
      t.push_back(static_cast<double>(c));
      t.push_back(static_cast<double>(e));
      t.push_back(static_cast<double>(e - static_cast<double>(e)));
      long double h0 = 1, h1 = 2 * c, fact = 1;  // H_0, H_1; (n + 1)!
      const long double g = two_over_sqrt_pi * expl(-c * c);
      t.push_back(static_cast<double>(g - static_cast<double>(g)));  // a1's low part
      for (int n = 0; n < kTerms; ++n) {
        fact *= n + 1;
        t.push_back(static_cast<double>((n % 2 ? -g : g) * h0 / fact));
        const long double h2 = 2 * c * h1 - 2 * (n + 1) * h0;  // H_{n+2}
        h0 = h1, h1 = h2;
      }
    }
    return t;
  }

  Xbyak::CodeGenerator& c_;
  ConstantPool& k_;
  Ops& ops_;
};

}  // namespace braze::jit
