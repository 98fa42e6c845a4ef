// Reductions along the row: accumulators, blocked sums, integer sums, and the
// horizontal step that makes a row constant (arg reductions:
// gen_arg_reductions.cpp).
#include <array>
#include <bit>
#include <cmath>
#include <string>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

namespace {

// A reduction along the row of a row plan (not a column plan).
bool reduces_row(const KernelOp& op, const RowPlan& p) {
  return is_reduce(op.op) && !op.attr.ints.empty() && p.reduces && !p.columns;
}

}  // namespace

// Note [Integer sums]
// NumPy sums integers and bools into int64, whose values live in the Long
// lanes of wide kernels (Note [Wide kernels]): products, column sums,
// sum + 1 and sums of int64 are wide. A row sum of 32-bit integer lanes
// that is only stored (a count of trues, x.sum(-1) of int8) stays in a
// 32-bit kernel, which reads twice the elements per vector: it
// accumulates V/2 int64 lanes, each 32-bit lane sign-extended into them,
// and adds those up in a general register.
template <class Vmm>
bool RowKernelGen<Vmm>::int64_row_total(const KernelSpec& s, const RowPlan& p, int32_t v) {
  const KernelOp& op = s.body[v];
  if (op.dtype != DType::Int64) return false;
  bool sum = op.op == Op::Sum && reduces_row(op, p) && lanes_of(s.body[op.args[0]].dtype);
  bool copy = op.op == Op::Copy && int64_row_total(s, p, op.args[0]);
  bool arg = arg_reduction(s, p, v) && reduces_row(op, p) && lanes_of(s.body[op.args[0]].dtype) == Lanes::Float;
  if (!sum && !copy && !arg) return false;
  for (const KernelOp& user : s.body)  // a copy (a reshape's) is checked on its own
    if (user.op != Op::Copy && std::count(user.args.begin(), user.args.end(), v)) return false;
  for (const KernelOutput& o : s.outputs)
    if (o.value == v && (o.space == Space::Full || !p.reduces)) return false;  // stored per element
  return true;
}

// The identity of reduction r, as the bits of a lane.
template <class Vmm>
uint32_t RowKernelGen<Vmm>::identity(int32_t r) const {
  const Op op = s_.body[r].op;
  switch (lanes(r)) {
    case Lanes::Float:
      switch (op) {
        case Op::Sum: return std::bit_cast<uint32_t>(-0.0f);  // -0 + x is x for every x; +0 + -0 would be +0
        case Op::Prod: return std::bit_cast<uint32_t>(1.0f);
        case Op::Max: return std::bit_cast<uint32_t>(-INFINITY);
        case Op::Min: return std::bit_cast<uint32_t>(INFINITY);
        default: break;
      }
      break;
    case Lanes::Int:
      if (op == Op::Max) return 0x80000000u;
      if (op == Op::Min) return 0x7fffffffu;
      break;
    case Lanes::Mask:
      if (op == Op::Max) return 0;
      if (op == Op::Min) return 0xffffffffu;
      break;
    case Lanes::Double:
    case Lanes::Long: break;  // identity_value
  }
  throw Unsupported("the reduction " + std::string(info(op).name));
}

// The identity of reduction r in every lane (64-bit ones in wide kernels).
template <class Vmm>
Xbyak::Address RowKernelGen<Vmm>::identity_value(int32_t r) {
  const Op op = s_.body[r].op;
  if (lanes(r) == Lanes::Long) {
    switch (op) {
      case Op::Sum: return k_.bits64(0);
      case Op::Prod: return k_.bits64(1);
      case Op::Max: return k_.bits64(uint64_t{1} << 63);
      case Op::Min: return k_.bits64(~uint64_t{0} >> 1);
      default: break;
    }
  }
  if (lanes(r) != Lanes::Double) return k_.bits_of(identity(r));
  switch (op) {
    case Op::Sum: return k_.f64(-0.0);
    case Op::Prod: return k_.f64(1.0);
    case Op::Max: return k_.f64(-INFINITY);
    case Op::Min: return k_.f64(INFINITY);
    default: break;
  }
  throw Unsupported("the reduction " + std::string(info(op).name) + " in " + std::string(name(widest(lanes(r)))) +
                    " lanes");
}

// What an accumulator starts from: the identity, except that an empty
// float sum is +0 (NumPy's), where -0 + nothing would leave -0.
template <class Vmm>
Xbyak::Address RowKernelGen<Vmm>::start_value(int32_t r) {
  int64_t n = p_.columns ? p_.reduce_length : p_.row_length;
  if (s_.body[r].op == Op::Sum && n == 0) return k_.bits_of(0);
  return identity_value(r);
}

template <class Vmm>
void RowKernelGen<Vmm>::accumulate(Pass& pass, int32_t r, const Vmm& in, bool tail) {
  Op op = s_.body[r].op;
  Vmm x = in;
  const int32_t a = s_.body[r].args[0];
  // Bools summed or compared by an argmax: 0 and 1 in Long lanes. (An
  // argmax's numbers are compared as they are.)
  if (wide_ && lanes(a) != lanes(r) && (lanes(a) == Lanes::Mask || !arg_reduction(r))) {
    convert_wide(scratch(4), in, s_.body[a].dtype, DType::Int64);
    x = scratch(4);
  }
  if (p_.columns) {
    accumulate_column(r, x);
    return;
  }
  Vmm acc = vr(pass.acc[r]);
  if (arg_reduction(r)) {
    accumulate_arg(r, acc, vr(pass.index[r]), x, tail);
    return;
  }
  if (int64_row_total(r)) {
    accumulate_int64(acc, x, lanes(s_.body[r].args[0]), tail);
    return;
  }
  Vmm v = x;
  if (tail) {  // lanes past the row contribute the identity
    v = scratch(0);
    vmovaps(v, identity_value(r));
    if constexpr (kZmm) {
      if (wide_) vmovapd(v | k1, x);
      else vmovaps(v | k1, x);
    } else {
      vmovups(scratch(1), tail_mask());
      vblendvps(v, v, x, scratch(1));
    }
  }
  combine(op, lanes(r), ops_, acc, v, scratch(2), scratch(3));
}

// Note [Blocked sums]: a row's sum accumulates kSumBlock elements per lane
// block into one register, then adds the block into the row total, so
// rounding error grows with L / kSumBlock + kSumBlock / V instead of L / V.
template <class Vmm>
void RowKernelGen<Vmm>::flush_sums(Pass& pass) {
  if (pass.total.empty()) return;
  Xbyak::Label skip;
  test(r8, static_cast<int>(kSumBlock - 1));
  jnz(skip, T_NEAR);
  for (auto [r, reg] : pass.total) {
    const Vmm total = reg == kInMemory ? scratch(0) : vr(reg);  // Note [Spilled values]
    if (reg == kInMemory) vmovups(total, constant_at(r));
    add_sum(r, total, total, vr(pass.acc[r]));
    vmovaps(vr(pass.acc[r]), sum_zero(r));
    if (auto it = pass.spread.find(r); it != pass.spread.end())  // Note [Interleaved accumulators]
      for (int a : it->second) {
        add_sum(r, total, total, vr(a));
        vmovaps(vr(a), sum_zero(r));
      }
    if (reg == kInMemory) vmovups(constant_at(r), total);
  }
  L(skip);
}

// Note [Integer sums]: acc (int64 lanes) += the int32 lanes of x.
template <class Vmm>
void RowKernelGen<Vmm>::accumulate_int64(const Vmm& acc, const Vmm& x, Lanes l, bool tail) {
  using Half = typename IntOps<Vmm>::Half;
  Vmm v = x;
  if (l == Lanes::Mask) {
    vandps(scratch(0), x, k_.bits_of(1));
    v = scratch(0);
  }
  if (tail) {  // lanes past the row add 0
    vandps(scratch(0), v, tail_mask());
    v = scratch(0);
  }
  vpmovsxdq(scratch(1), Half(v.getIdx()));
  vpaddq(acc, acc, scratch(1));
  if constexpr (kZmm) vextracti64x4(Half(2), v, 1);
  else vextracti128(Half(2), v, 1);
  vpmovsxdq(scratch(1), Half(2));
  vpaddq(acc, acc, scratch(1));
}

// Horizontal reduction of the accumulator; the result, broadcast, is the
// reduce op's row constant.
template <class Vmm>
void RowKernelGen<Vmm>::finish_reduction(Pass& pass, int32_t r) {
  int acc = pass.acc[r];
  if (arg_reduction(r)) {  // the index, as an int64, broadcast
    finish_arg(r, vr(acc), vr(pass.index[r]));
    release(pass.index[r]);
    vmovq(Xbyak::Xmm(0), rax);
    vpbroadcastq(vr(acc), Xbyak::Xmm(0));
    keep_constant(r, acc);
    return;
  }
  if (int64_row_total(r)) {  // the row's int64 total, broadcast
    vmovups(ptr[rsp + kBounce], vr(acc));
    mov(rax, qword[rsp + kBounce]);
    for (int i = 1; i < V / 2; ++i) add(rax, qword[rsp + kBounce + 8 * i]);
    vmovq(Xbyak::Xmm(0), rax);
    vpbroadcastq(vr(acc), Xbyak::Xmm(0));
    keep_constant(r, acc);
    return;
  }
  if (auto it = pass.total.find(r); it != pass.total.end() && it->second == kInMemory) {
    add_sum(r, vr(acc), vr(acc), constant_at(r));  // Note [Spilled values]
  } else if (it != pass.total.end()) {
    add_sum(r, vr(acc), vr(acc), vr(it->second));
    release(it->second);
  }
  reduce_lanes(r, vr(acc));
  // A float32 sum or product of a wide kernel, accumulated in float64 as
  // the reference accumulates it in double, rounds once.
  if (wide_ && rounds_to_float32(s_.body[r].dtype)) convert_wide(vr(acc), vr(acc), DType::Float64, DType::Float32);
  keep_constant(r, acc);
}

// acc = reduction r of acc's lanes, in every lane (through the bounce area).
template <class Vmm>
void RowKernelGen<Vmm>::reduce_lanes(int32_t r, const Vmm& acc) {
  vmovups(ptr[rsp + kBounce], acc);
  Xbyak::Xmm a(0), b(1), s(2), s2(3);
  VectorOps<Xbyak::Xmm> x(*this, k_);
  if (wide_) {  // 64-bit lanes
    vmovsd(a, qword[rsp + kBounce]);
    for (int i = 1; i < V; ++i) {
      vmovsd(b, qword[rsp + kBounce + 8 * i]);
      combine(s_.body[r].op, lanes(r), x, a, b, s, s2);
    }
    vbroadcastsd(acc, a);
    return;
  }
  vmovss(a, dword[rsp + kBounce]);
  for (int i = 1; i < V; ++i) {
    vmovss(b, dword[rsp + kBounce + 4 * i]);
    combine(s_.body[r].op, lanes(r), x, a, b, s, s2);
  }
  vbroadcastss(acc, a);
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
