// Element-wise ops (Note [Lanes] in lanes.h): arguments brought to the lanes an
// op computes in, the op for those lanes, casts and truth values.
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "jit_cpu/row_kernel_gen.h"
#include "jit_cpu/remainder_f64.h"

namespace braze::jit::detail {

// d = op(args), args in registers regs (Note [Lanes]): the arguments are
// brought to the lanes the op computes in, the op is emitted for those
// lanes, and its result fitted to its dtype. Wide kernels alike, in their
// 64-bit lanes (Note [Wide kernels]).
template <class Vmm>
void RowKernelGen<Vmm>::compute_op(const KernelOp& op, const Vmm& d, const std::array<Vmm, 3>& regs) {
  auto dtype = [&](size_t i) { return s_.body[op.args[i]].dtype; };
  switch (op.op) {  // ops that read their arguments in whatever lanes they are
    case Op::Copy: vmovaps(d, regs[0]); return;
    case Op::Depend: vmovaps(d, regs[0]); return;  // the second argument is only waited for
    case Op::Cast: convert(d, regs[0], dtype(0), op.dtype); return;
    case Op::LogicalAnd:
      vandps(d, truth(regs[0], dtype(0), scratch(0)), truth(regs[1], dtype(1), scratch(1)));
      return;
    case Op::LogicalOr:
      vorps(d, truth(regs[0], dtype(0), scratch(0)), truth(regs[1], dtype(1), scratch(1)));
      return;
    case Op::LogicalNot: vxorps(d, truth(regs[0], dtype(0), scratch(0)), k_.bits_of(0xffffffff)); return;
    case Op::Sin:
    case Op::Cos:
    case Op::Tan:  // of integers: from the exact int32, not its float32 rounding
      if (lanes_for(dtype(0)) != Lanes::Int || lanes_for(op.dtype) != Lanes::Float) break;
      math_.trig_of_int(d, regs[0], {scratch(0), scratch(1), scratch(2), scratch(3), scratch(4)},
                        op.op == Op::Sin ? Trig::Sin : op.op == Op::Cos ? Trig::Cos : Trig::Tan);
      return;
    default: break;
  }
  // Where picks between its branches in the result's lanes; any other
  // op computes in those of its compute dtype.
  const bool where = op.op == Op::Where;
  const Lanes in = where ? lanes_for(op.dtype) : op_lanes(compute_dtype_of(op));
  std::array<Vmm, 3> args = regs;
  std::vector<int> converted;  // registers of their own: an op's emitter clobbers the scratch registers
  for (size_t i = where ? 1 : 0; i < op.args.size(); ++i) {
    if (lanes_for(dtype(i)) == in) continue;
    converted.push_back(alloc());
    convert(vr(converted.back()), args[i], dtype(i), widest(in));
    args[i] = vr(converted.back());
  }
  if (where) {
    ops_.blend(d, args[2], args[1], truth(args[0], dtype(0), scratch(0)), width());
  } else if (is_reduce(op.op)) {  // over no axes, or over size-1 axes only: the value itself
    if (op.op == Op::ArgMax || op.op == Op::ArgMin) vxorps(d, d, d);  // its index, 0 (an int64: wide)
    else vmovaps(d, args[0]);
  } else {
    switch (in) {
      case Lanes::Int:
      case Lanes::Long: compute_int(op, d, args[0], args[1]); break;
      case Lanes::Float: compute_float(op, d, args[0], args[1]); break;
      case Lanes::Double: compute_double(op, d, args[0], args[1]); break;
      case Lanes::Mask: throw Unsupported("the op " + std::string(info(op.op).name) + " on bools");
    }
  }
  for (int r : converted) release(r);
  DTypeRule rule = info(op.op).dtype_rule;
  bool masks = !where && (rule == DTypeRule::Compare || rule == DTypeRule::ToBool);
  fit(d, masks ? Lanes::Mask : in, op.dtype);
}

// An op's result, computed in lanes `out`, in the lanes and range of its
// dtype: bools computed as integers become masks, narrower integers wrap,
// float32 computed in float64 rounds. Float results of 32-bit lanes keep
// all of float32 (Note [Lanes]).
template <class Vmm>
void RowKernelGen<Vmm>::fit(const Vmm& d, Lanes out, DType t) {
  switch (lanes_for(t)) {
    case Lanes::Mask:
      if (out == Lanes::Int) ints_.nonzero(d, d, scratch(0));
      if (out == Lanes::Long) longs_.nonzero(d, d);
      return;
    case Lanes::Int: ints_.wrap(d, d, DType::Int32, t); return;
    case Lanes::Long: longs_.wrap(d, d, DType::Int64, t, scratch(0)); return;
    case Lanes::Double:
      if (rounds_to_float32(t)) convert_wide(d, d, DType::Float64, DType::Float32);
      return;
    case Lanes::Float: return;
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::compute_float(const KernelOp& op, const Vmm& d, const Vmm& x, const Vmm& y) {
  auto a = [&] { return x; };
  auto b = [&] { return y; };
  const Vmm s0 = scratch(0), s1 = scratch(1), s2 = scratch(2), s3 = scratch(3), s4 = scratch(4);
  const typename VectorMath<Vmm>::Scratch math_scratch{s0, s1, s2, s3, s4};
  switch (op.op) {
    case Op::Add: vaddps(d, a(), b()); return;
    case Op::Sub: vsubps(d, a(), b()); return;
    case Op::Mul: vmulps(d, a(), b()); return;
    case Op::Div: vdivps(d, a(), b()); return;
    case Op::Maximum: ops_.maximum(d, a(), b(), s0); return;
    case Op::Minimum: ops_.minimum(d, a(), b(), s0); return;
    case Op::Eq: ops_.cmp(d, a(), b(), Ops::Eq); return;
    case Op::Ne: ops_.cmp(d, a(), b(), Ops::Ne); return;
    case Op::Lt: ops_.cmp(d, a(), b(), Ops::Lt); return;
    case Op::Le: ops_.cmp(d, a(), b(), Ops::Le); return;
    case Op::Gt: ops_.cmp(d, a(), b(), Ops::Gt); return;
    case Op::Ge: ops_.cmp(d, a(), b(), Ops::Ge); return;
    case Op::Neg: vxorps(d, a(), k_.bits_of(0x80000000)); return;
    case Op::Abs: vandps(d, a(), k_.bits_of(0x7fffffff)); return;
    case Op::Sign:
      // NaN -> NaN, 0 -> 0, else +-1.
      ops_.cmp(s0, a(), a(), Ops::Unord);
      vandps(d, a(), s0);
      ops_.cmp(s0, a(), k_(0.0f), Ops::Gt);
      vmovaps(s1, k_(1.0f));
      ops_.blend(d, d, s1, s0);
      ops_.cmp(s0, a(), k_(0.0f), Ops::Lt);
      vmovaps(s1, k_(-1.0f));
      ops_.blend(d, d, s1, s0);
      return;
    case Op::Exp: math_.exp(d, a(), math_scratch); return;
    case Op::Exp2: math_.exp2(d, a(), math_scratch); return;
    case Op::Expm1: math_.expm1(d, a(), math_scratch); return;
    case Op::Log: math_.log(d, a(), math_scratch); return;
    case Op::Log2: math_.log2(d, a(), math_scratch); return;
    case Op::Log1p: math_.log1p(d, a(), math_scratch); return;
    case Op::Tanh: math_.tanh(d, a(), math_scratch); return;
    case Op::Sigmoid: math_.sigmoid(d, a(), math_scratch); return;
    case Op::Erf: math_.erf(d, a(), math_scratch); return;
    case Op::Sin: math_.sin(d, a(), math_scratch); return;
    case Op::Cos: math_.cos(d, a(), math_scratch); return;
    case Op::Tan: math_.tan(d, a(), math_scratch); return;
    case Op::Pow: math_.pow(d, a(), b(), math_scratch); return;
    case Op::Mod: {  // on float64 halves, rounded once, as the reference (Note [Exact remainder])
      const int xd = alloc(), yd = alloc(), rd = alloc();
      for (int h = 0; h < 2; ++h) {
        ops_.to_f64(vr(xd), a(), h);
        ops_.to_f64(vr(yd), b(), h);
        RemainderF64<Vmm>(*this, k_, ops_).emit(vr(rd), vr(xd), vr(yd), math_scratch);
        ops_.from_f64(d, vr(rd), h);
      }
      for (int r : {xd, yd, rd}) release(r);
      return;
    }
    case Op::Sqrt: vsqrtps(d, a()); return;
    case Op::Rsqrt:
      vsqrtps(s0, a());
      vmovaps(d, k_(1.0f));
      vdivps(d, d, s0);
      return;
    case Op::Reciprocal:
      vmovaps(d, k_(1.0f));
      vdivps(d, d, a());
      return;
    case Op::Square: vmulps(d, a(), a()); return;
    case Op::Relu:
      vxorps(s0, s0, s0);
      vmaxps(d, s0, a());  // a when NaN; -0 stays -0, as x < 0 ? 0 : x
      return;
    case Op::Floor: ops_.round(d, a(), 1); return;
    case Op::Ceil: ops_.round(d, a(), 2); return;
    case Op::Round: ops_.round(d, a(), 0); return;
    case Op::IsNan: ops_.cmp(d, a(), a(), Ops::Unord); return;
    case Op::SignBit: vpsrad(d, a(), 31); return;  // the sign bit spread over the lane: a mask
    case Op::IsInf:
      vandps(s0, a(), k_.bits_of(0x7fffffff));
      ops_.cmp(d, s0, k_(INFINITY), Ops::Eq);
      return;
    default: break;
  }
  throw Unsupported("the op " + std::string(info(op.op).name));
}

// x, of dtype t, as a lane mask of its truth: a bool already is one; a
// number is true when nonzero (NaN too). By value: `s` is often a
// temporary (scratch(i)) that dies before a returned reference is used.
template <class Vmm>
Vmm RowKernelGen<Vmm>::truth(const Vmm& x, DType t, const Vmm& s) {
  switch (lanes_for(t)) {
    case Lanes::Mask: return x;
    case Lanes::Int: ints_.nonzero(s, x, s); return s;
    case Lanes::Float: ops_.cmp(s, x, k_(0.0f), Ops::Ne); return s;
    case Lanes::Double:
    case Lanes::Long: break;
  }
  return truth_wide(x, t, s);
}

// d = x, a value of dtype `from`, cast to dtype `to` as the reference
// casts (graph/array.h: floats truncate toward zero through int64,
// integers wrap, halves round to nearest even). d must not be x.
template <class Vmm>
void RowKernelGen<Vmm>::convert(const Vmm& d, const Vmm& x, DType from, DType to) {
  if (wide_) return convert_wide(d, x, from, to);  // Note [Wide kernels]
  const Lanes lf = *lanes_of(from), lt = *lanes_of(to);
  if (lt == Lanes::Mask) {
    const Vmm m = truth(x, from, scratch(0));
    if (m.getIdx() != d.getIdx()) vmovaps(d, m);
  } else if (lf == Lanes::Mask) {
    vandps(d, x, lt == Lanes::Float ? k_(1.0f) : k_.bits_of(1));
  } else if (lt == Lanes::Int) {
    if (lf == Lanes::Float) {
      ints_.trunc_from_float(d, x, scratch(0), scratch(1), scratch(2));
      ints_.wrap(d, d, DType::Int32, to);
    } else {
      ints_.wrap(d, x, from, to);
    }
  } else if (lf == Lanes::Int) {
    vcvtdq2ps(scratch(3), x);  // as int64 -> double -> float32: one rounding either way
    round_float(d, scratch(3), to);
  } else {
    round_float(d, x, to);
  }
}

// Float lanes rounded to the precision of the float dtype t (float32 lanes
// already are float32). d must not be x.
template <class Vmm>
void RowKernelGen<Vmm>::round_float(const Vmm& d, const Vmm& x, DType t) {
  if (t == DType::Float16) {  // round to half, back to float
    using Half = std::conditional_t<kZmm, Xbyak::Ymm, Xbyak::Xmm>;
    vcvtps2ph(Half(0), x, 0);
    vcvtph2ps(d, Half(0));
  } else if (t == DType::BFloat16) {
    to_bf16_bits(d, x);
    vpslld(d, d, 16);
  } else {
    vmovaps(d, x);
  }
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
