// Element-wise ops on integer lanes (Note [Lanes], Note [Wide kernels] in
// lanes.h): Int lanes of 32 bits, or the Long lanes of wide kernels, where
// integers compute as int64, as the reference computes them. compute_op
// then wraps the result to its dtype. The sequences AVX2 needs for 64-bit
// lanes are in long_ops.h.
#include <array>
#include <string>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

template <class Vmm>
void RowKernelGen<Vmm>::compute_int(const KernelOp& op, const Vmm& d, const Vmm& a, const Vmm& b) {
  const Vmm s0 = scratch(0), s1 = scratch(1), s2 = scratch(2), s3 = scratch(3);
  using I = IntOps<Vmm>;
  const bool q = wide_;  // 64-bit lanes
  auto cmp = [&](typename I::Pred p) { ints_.cmp(d, a, b, p, width()); };
  switch (op.op) {
    case Op::Add:
      if (q) vpaddq(d, a, b);
      else vpaddd(d, a, b);
      return;
    case Op::Sub:
      if (q) vpsubq(d, a, b);
      else vpsubd(d, a, b);
      return;
    case Op::Mul:
    case Op::Square: {
      const Vmm& y = op.op == Op::Square ? a : b;
      ints_.mul(d, a, y, s0, s1, width());
      return;
    }
    case Op::Mod:
      if (!q) ints_.mod(d, a, b, s0, s1, s2, s3);
      else if (op.dtype == DType::Int64) mod_long(d, a, b);
      else mod_in_f64(d, a, b);
      return;
    case Op::Pow: {
      const int e = q ? alloc() : 0;  // a 64-bit multiply needs a sixth temporary
      ints_.pow(d, a, b, {s0, s1, s2, s3, scratch(4), q ? vr(e) : scratch(4)}, width());
      if (q) release(e);
      return;
    }
    case Op::Maximum:
      if (q) longs_.max(d, a, b, s0);
      else vpmaxsd(d, a, b);
      return;
    case Op::Minimum:
      if (q) longs_.min(d, a, b, s0);
      else vpminsd(d, a, b);
      return;
    case Op::Eq: return cmp(I::Eq);
    case Op::Ne: return cmp(I::Ne);
    case Op::Lt: return cmp(I::Lt);
    case Op::Le: return cmp(I::Le);
    case Op::Gt: return cmp(I::Gt);
    case Op::Ge: return cmp(I::Ge);
    case Op::Neg:
      vxorps(s0, s0, s0);
      if (q) vpsubq(d, s0, a);
      else vpsubd(d, s0, a);
      return;
    case Op::Abs:  // abs of the most negative integer wraps to itself, as the reference's
      if (q) longs_.abs(d, a, s0);
      else vpabsd(d, a);
      return;
    case Op::Sign:
      if (q) longs_.sign(d, a, s0);
      else ints_.sign(d, a);
      return;
    case Op::Relu:
      vxorps(s0, s0, s0);
      if (q) longs_.max(d, a, s0, s1);
      else vpmaxsd(d, a, s0);
      return;
    // Bits of lanes that hold the value sign- or zero-extended are the
    // value's bits, extended: fit() wraps a uint8 result back to 8 bits.
    case Op::BitwiseAnd: vandps(d, a, b); return;
    case Op::BitwiseOr: vorps(d, a, b); return;
    case Op::BitwiseXor: vxorps(d, a, b); return;
    case Op::BitwiseInvert: vxorps(d, a, k_.bits_of(0xffffffff)); return;
    // Note [Shift counts] (graph/scalar_math.h): vpsllv and vpsrav read a
    // count as unsigned and shift every bit out past the lane's width,
    // which is NumPy's rule, and the lane is at least as wide as the dtype.
    case Op::LeftShift:
      if (q) vpsllvq(d, a, b);
      else vpsllvd(d, a, b);
      return;
    case Op::RightShift:
      if (q) longs_.shift_right(d, a, b, s0, s1);
      else vpsravd(d, a, b);
      return;
    case Op::Floor:
    case Op::Ceil:
    case Op::Round: vmovaps(d, a); return;  // integers are whole
    case Op::IsNan:
    case Op::IsInf: vxorps(d, d, d); return;
    case Op::SignBit:  // x < 0 (unsigned integers and bools never reach here: fusion/simplify.cpp)
      if (q) sign_mask_wide(d, a);
      else vpsrad(d, a, 31);
      return;
    default: break;
  }
  throw Unsupported("the op " + std::string(info(op.op).name) + " on integers");
}

// Python's % of 64-bit lanes holding values of a narrower dtype (uint32,
// or int32 and narrower in a wide kernel): a - floor(a / b) * b in
// float64, exact as IntOps::mod's (|a| <= 2^32, far below 2^53), and 0
// where b is 0. Dividing lane by lane (mod_long) took 10x longer: uint32
// `a % b` of 4M values 16 ms, NumPy's 11.
template <class Vmm>
void RowKernelGen<Vmm>::mod_in_f64(const Vmm& d, const Vmm& a, const Vmm& b) {
  const Vmm s0 = scratch(0), s1 = scratch(1), fa = scratch(2), fb = scratch(3), t = scratch(4);
  longs_.to_f64(fa, a, s0, s1);
  longs_.to_f64(fb, b, s0, s1);
  vdivpd(t, fa, fb);
  ops_.round_f64(t, t, 1);  // floor
  vmulpd(t, t, fb);         // exact: |floor(a / b) b| < |a| + |b|
  vsubpd(fa, fa, t);
  longs_.trunc_from_f64(t, fa, s0, s1, fb);
  longs_.nonzero(s0, b);
  vandps(d, t, s0);
}

// Python's %, the sign of the divisor's, lane by lane in general registers
// through the bounce area: no vector instruction divides integers, and a
// float64 quotient is not exact past 2^53. x % 0 and x % -1 are 0, as the
// reference's (INT64_MIN / -1 would trap). idiv takes rdx, which holds the
// last row (r11 keeps it), and rcx, which only the frame's start reads.
template <class Vmm>
void RowKernelGen<Vmm>::mod_long(const Vmm& d, const Vmm& a, const Vmm& b) {
  const int divisors = kBounce + 8 * V;
  vmovups(ptr[rsp + kBounce], a);
  vmovups(ptr[rsp + divisors], b);
  mov(r11, rdx);
  xor_(r10d, r10d);
  Xbyak::Label lane, zero, store;
  L(lane);
  mov(rax, qword[rsp + kBounce + r10 * 8]);
  mov(rcx, qword[rsp + divisors + r10 * 8]);
  lea(r9, ptr[rcx + 1]);
  cmp(r9, 1);
  jbe(zero);  // the divisor is -1 or 0
  cqo();
  idiv(rcx);
  test(rdx, rdx);
  jz(store);
  mov(r9, rdx);
  xor_(r9, rcx);
  jns(store);  // the remainder has the divisor's sign already
  add(rdx, rcx);
  jmp(store);
  L(zero);
  xor_(edx, edx);
  L(store);
  mov(qword[rsp + kBounce + r10 * 8], rdx);
  inc(r10);
  cmp(r10, V);
  jl(lane);
  mov(rdx, r11);
  vmovups(d, ptr[rsp + kBounce]);
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
