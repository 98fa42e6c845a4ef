// Element-wise ops of wide kernels (Note [Wide kernels] in lanes.h) on float64
// lanes, truth values and casts between the 64-bit lanes (compute_op in
// gen_elementwise.cpp brings the arguments to the lanes an op computes in).
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "jit_cpu/row_kernel_gen.h"
#include "jit_cpu/erf_f64.h"
#include "jit_cpu/pow_f64.h"
#include "jit_cpu/remainder_f64.h"
#include "jit_cpu/trig_f64.h"

namespace braze::jit::detail {

template <class Vmm>
void RowKernelGen<Vmm>::compute_double(const KernelOp& op, const Vmm& d, const Vmm& a, const Vmm& b) {
  const Vmm s0 = scratch(0), s1 = scratch(1), s2 = scratch(2), s3 = scratch(3), s4 = scratch(4);
  const typename VectorMathF64<Vmm>::Scratch math_scratch{s0, s1, s2, s3, s4};
  switch (op.op) {
    case Op::Add: vaddpd(d, a, b); return;
    case Op::Sub: vsubpd(d, a, b); return;
    case Op::Mul: vmulpd(d, a, b); return;
    case Op::Div: vdivpd(d, a, b); return;
    case Op::Maximum: ops_.maximum(d, a, b, s0, Width::k64); return;
    case Op::Minimum: ops_.minimum(d, a, b, s0, Width::k64); return;
    case Op::Eq: ops_.cmp(d, a, b, Ops::Eq, Width::k64); return;
    case Op::Ne: ops_.cmp(d, a, b, Ops::Ne, Width::k64); return;
    case Op::Lt: ops_.cmp(d, a, b, Ops::Lt, Width::k64); return;
    case Op::Le: ops_.cmp(d, a, b, Ops::Le, Width::k64); return;
    case Op::Gt: ops_.cmp(d, a, b, Ops::Gt, Width::k64); return;
    case Op::Ge: ops_.cmp(d, a, b, Ops::Ge, Width::k64); return;
    case Op::Neg: vxorpd(d, a, k_.bits64(0x8000000000000000ull)); return;
    case Op::Abs: vandpd(d, a, k_.bits64(0x7fffffffffffffffull)); return;
    case Op::Sign:  // NaN -> NaN, 0 -> 0, else +-1
      ops_.cmp(s0, a, a, Ops::Unord, Width::k64);
      vandpd(d, a, s0);
      ops_.cmp(s0, a, k_.f64(0.0), Ops::Gt, Width::k64);
      vmovapd(s1, k_.f64(1.0));
      ops_.blend(d, d, s1, s0, Width::k64);
      ops_.cmp(s0, a, k_.f64(0.0), Ops::Lt, Width::k64);
      vmovapd(s1, k_.f64(-1.0));
      ops_.blend(d, d, s1, s0, Width::k64);
      return;
    case Op::Exp: math64_.exp(d, a, math_scratch); return;
    case Op::Exp2: math64_.exp2(d, a, math_scratch); return;
    case Op::Log: math64_.log(d, a, math_scratch); return;
    case Op::Log2: math64_.log2(d, a, math_scratch); return;
    case Op::Sigmoid: math64_.sigmoid(d, a, math_scratch); return;
    case Op::Tanh: math64_.tanh(d, a, math_scratch); return;
    case Op::Expm1: math64_.expm1(d, a, math_scratch); return;
    case Op::Log1p: math64_.log1p(d, a, math_scratch); return;
    case Op::Sin: SinCosF64<Vmm>(*this, k_, ops_).emit(d, a, math_scratch, Trig::Sin); return;
    case Op::Tan: SinCosF64<Vmm>(*this, k_, ops_).emit(d, a, math_scratch, Trig::Tan); return;
    case Op::Pow: {
      const int e = alloc();  // pow needs a sixth temporary
      PowF64<Vmm>(*this, k_, ops_).emit(d, a, b, math_scratch, vr(e));
      release(e);
      return;
    }
    case Op::Erf: ErfF64<Vmm>(*this, k_, ops_).emit(d, a, math_scratch); return;
    case Op::Mod: RemainderF64<Vmm>(*this, k_, ops_).emit(d, a, b, math_scratch); return;
    case Op::Cos: SinCosF64<Vmm>(*this, k_, ops_).emit(d, a, math_scratch, Trig::Cos); return;
    case Op::Sqrt: vsqrtpd(d, a); return;
    case Op::Rsqrt:
      vsqrtpd(s0, a);
      vmovapd(d, k_.f64(1.0));
      vdivpd(d, d, s0);
      return;
    case Op::Reciprocal:
      vmovapd(d, k_.f64(1.0));
      vdivpd(d, d, a);
      return;
    case Op::Square: vmulpd(d, a, a); return;
    case Op::Relu:
      vxorpd(s0, s0, s0);
      vmaxpd(d, s0, a);  // a when NaN; -0 stays -0, as x < 0 ? 0 : x
      return;
    case Op::Floor: ops_.round_f64(d, a, 1); return;
    case Op::Ceil: ops_.round_f64(d, a, 2); return;
    case Op::Round: ops_.round_f64(d, a, 0); return;
    case Op::IsNan: ops_.cmp(d, a, a, Ops::Unord, Width::k64); return;
    case Op::SignBit: sign_mask_wide(d, a); return;
    case Op::IsInf:
      vandpd(s0, a, k_.bits64(0x7fffffffffffffffull));
      ops_.cmp(d, s0, k_.f64(INFINITY), Ops::Eq, Width::k64);
      return;
    default: break;
  }
  throw Unsupported("the op " + std::string(info(op.op).name) + " on float64 values");
}

// d = x's sign bit spread over each 64-bit lane (a mask): AVX-512 shifts
// it arithmetically; AVX2 has no 64-bit arithmetic shift, and x < 0 as an
// int64 is the same test.
template <class Vmm>
void RowKernelGen<Vmm>::sign_mask_wide(const Vmm& d, const Vmm& x) {
  if constexpr (kZmm) {
    vpsraq(d, x, 63);
  } else {
    const Vmm zero = d.getIdx() == x.getIdx() ? scratch(0) : d;
    vpxor(zero, zero, zero);
    vpcmpgtq(d, zero, x);
  }
}

// x, of dtype t, as a 64-bit lane mask of its truth (NaN is true).
template <class Vmm>
Vmm RowKernelGen<Vmm>::truth_wide(const Vmm& x, DType t, const Vmm& s) {
  switch (wide_lanes_of(t)) {
    case Lanes::Mask: return x;
    case Lanes::Long: longs_.nonzero(s, x); return s;
    default: ops_.cmp(s, x, k_.f64(0.0), Ops::Ne, Width::k64); return s;
  }
}

namespace {
constexpr uint64_t kDroppedBits = (uint64_t{1} << 29) - 1;  // float64's mantissa bits below float32's
}  // namespace

// d = x cast from `from` to `to` in 64-bit lanes as the reference casts
// (graph/array.h): an int64 rounds to float64 once, a float truncates
// toward zero through int64, integers wrap; a float32, float16 or
// bfloat16 result is rounded to its dtype. d may be x.
template <class Vmm>
void RowKernelGen<Vmm>::convert_wide(const Vmm& d, const Vmm& x, DType from, DType to) {
  const Lanes lf = wide_lanes_of(from), lt = wide_lanes_of(to);
  const Vmm s0 = scratch(0), s1 = scratch(1), s2 = scratch(2);
  if (lt == Lanes::Mask) {
    const Vmm m = truth_wide(x, from, s0);
    if (m.getIdx() != d.getIdx()) vmovapd(d, m);
  } else if (lf == Lanes::Mask) {
    vandpd(d, x, lt == Lanes::Double ? k_.f64(1.0) : k_.bits64(1));
  } else if (lt == Lanes::Long) {
    if (lf == Lanes::Double) {
      longs_.trunc_from_f64(d, x, s0, s1, s2);
      longs_.wrap(d, d, DType::Int64, to, s0);
    } else {
      longs_.wrap(d, x, from, to, s0);
    }
  } else {
    if (lf == Lanes::Long) longs_.to_f64(d, x, s0, s1);
    else if (d.getIdx() != x.getIdx()) vmovapd(d, x);
    if (to == DType::Float16) {
      // Note [Rounding float64 to 16 bits]: to float32 rounded to odd, so the
      // float16 rounding below is the one rounding of the float64 value: the
      // 29 bits float32 drops are cut, and if any was set, the last kept bit
      // is set (bit 29 of (low + 2^29 - 1) says whether low is nonzero).
      // A NaN stays a NaN; a value past float32's range still converts to inf.
      vandpd(s1, d, k_.bits64(kDroppedBits));
      vpaddq(s1, s1, k_.bits64(kDroppedBits));
      vandpd(s1, s1, k_.bits64(kDroppedBits + 1));
      vandpd(s2, d, k_.bits64(~kDroppedBits));
      vorpd(d, s2, s1);
    }
    if (rounds_to_float32(to)) {
      vcvtpd2ps(Half(0), d);
      if (to == DType::Float16) {
        vcvtps2ph(Xbyak::Xmm(0), Half(0), 0);
        vcvtph2ps(Half(0), Xbyak::Xmm(0));
      } else if (to == DType::BFloat16) {
        const Vmm bits = d.getIdx() == 0 ? scratch(3) : d;  // to_bf16_bits reads s0 after writing its result
        to_bf16_bits(bits, s0);
        vpslld(s0, bits, 16);
      }
      vcvtps2pd(d, Half(0));
    }
  }
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
