// Element-wise ops on the Long lanes of wide kernels (Note [Wide kernels] in
// lanes.h): integers computed as int64, as the reference computes them, then
// wrapped to their dtype (compute_op's fit). The sequences AVX2 needs are
// in long_ops.h.
#include <array>
#include <string>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

template <class Vmm>
void RowKernelGen<Vmm>::compute_long(const KernelOp& op, const Vmm& d, const Vmm& a, const Vmm& b) {
  const Vmm s0 = scratch(0), s1 = scratch(1);
  using Q = LongOps<Vmm>;
  switch (op.op) {
    case Op::Add: vpaddq(d, a, b); return;
    case Op::Sub: vpsubq(d, a, b); return;
    case Op::Mul: longs_.mul(d, a, b, s0, s1); return;
    case Op::Square: longs_.mul(d, a, a, s0, s1); return;
    case Op::Mod: mod_long(d, a, b); return;
    case Op::Pow: {
      const int e = alloc();  // power needs a sixth temporary
      longs_.pow(d, a, b, {s0, s1, scratch(2), scratch(3), scratch(4), vr(e)});
      release(e);
      return;
    }
    case Op::Maximum: longs_.max(d, a, b, s0); return;
    case Op::Minimum: longs_.min(d, a, b, s0); return;
    case Op::Eq: longs_.cmp(d, a, b, Q::Eq); return;
    case Op::Ne: longs_.cmp(d, a, b, Q::Ne); return;
    case Op::Lt: longs_.cmp(d, a, b, Q::Lt); return;
    case Op::Le: longs_.cmp(d, a, b, Q::Le); return;
    case Op::Gt: longs_.cmp(d, a, b, Q::Gt); return;
    case Op::Ge: longs_.cmp(d, a, b, Q::Ge); return;
    case Op::Neg:
      vxorps(s0, s0, s0);
      vpsubq(d, s0, a);
      return;
    case Op::Abs: longs_.abs(d, a, s0); return;  // abs(INT64_MIN) wraps to itself, as the reference's
    case Op::Sign: longs_.sign(d, a, s0); return;
    case Op::Relu:
      vxorps(s0, s0, s0);
      longs_.max(d, a, s0, s1);
      return;
    case Op::Floor:
    case Op::Ceil:
    case Op::Round: vmovaps(d, a); return;  // integers are whole
    case Op::IsNan:
    case Op::IsInf: vxorps(d, d, d); return;
    default: break;
  }
  throw Unsupported("the op " + std::string(info(op.op).name) + " on int64 lanes");
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
