// argmax and argmin (Note [Arg reductions]): along the row, per lane a best
// value and its index, then the best lane; down columns, per column.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

// Note [Arg reductions]
// argmax/argmin along the row: each lane keeps its best value and that
// value's index; a lane takes a new element when it is better, or NaN
// while the best is not (NaN wins, as in NumPy), so within a lane the
// first of equals stays. The horizontal step picks the best lane, the
// lowest index among equals. A 32-bit kernel compares float32 lanes and
// keeps int32 indices, and its int64 result is only stored (Note [Integer
// sums]); a wide kernel compares float64 or int64 lanes (bools as 0 and
// 1) and keeps int64 indices. A lane that never takes an element keeps
// index 0 and the identity (-inf, INT64_MIN for argmax): it wins only when
// every element is the identity, and then 0 is the answer.
//
// Down a column (x.argmax(axis=0)) the same runs per column: the column
// plan's scratch rows hold each column's index (the reduction's slot, what
// its results read) and best value (the next slot), and a row's index is
// its place in R. Such a kernel is wide, so its int64 indices are stored
// from Long lanes.
//
// Over the rows and the columns at once (bz.argmax(x.T): a column plan
// that reduces the row too), the answer is the first best in the order of
// the domain's reduced axes, which the plan keeps: row r of R, column c is
// element r C + c. So the pass down the columns keeps r C as the index,
// and the step along the row (reduce_arg_along_row) adds c and picks the
// best column. Each column has kept its first best, but a later column's
// may come first (a smaller r), so that step takes an equal value, or a
// NaN beside a NaN, when its index is lower.
template <class Vmm>
bool RowKernelGen<Vmm>::arg_reduction(const KernelSpec& s, const RowPlan& p, int32_t v) {
  const KernelOp& op = s.body[v];
  if ((op.op != Op::ArgMax && op.op != Op::ArgMin) || op.attr.ints.empty()) return false;
  if (p.columns) return fits_int32(p.reduce_length) && fits_int32(p.row_length);
  return p.reduces && fits_int32(p.row_length + 16);
}

// The lanes argmax/argmin r compares in: its argument's, bools as Long.
template <class Vmm>
Lanes RowKernelGen<Vmm>::arg_lanes(int32_t r) const {
  const Lanes l = lanes(s_.body[r].args[0]);
  return l == Lanes::Mask ? Lanes::Long : l;
}

// What each lane's best starts from: the identity of the comparison.
template <class Vmm>
Xbyak::Address RowKernelGen<Vmm>::arg_start(int32_t r) {
  const bool max = s_.body[r].op == Op::ArgMax;
  switch (arg_lanes(r)) {
    case Lanes::Long: return k_.bits64(max ? uint64_t{1} << 63 : ~uint64_t{0} >> 1);
    case Lanes::Double: return k_.f64(max ? -INFINITY : INFINITY);
    default: return k_(max ? -INFINITY : INFINITY);
  }
}

// take = where x is better than best: greater (less for argmin), or NaN
// while best is not. The comparison "not less or equal" (not greater or
// equal) is true for greater and for unordered, so it needs only best's
// ordered mask beside it. Clobbers s.
template <class Vmm>
void RowKernelGen<Vmm>::arg_takes(int32_t r, const Vmm& take, const Vmm& best, const Vmm& x, const Vmm& s) {
  const bool max = s_.body[r].op == Op::ArgMax;
  if (arg_lanes(r) == Lanes::Long) {
    ints_.cmp(take, x, best, max ? IntOps<Vmm>::Gt : IntOps<Vmm>::Lt, Width::k64);
    return;
  }
  ops_.cmp(take, x, best, max ? Ops::Nle : Ops::Nge, width());
  ops_.cmp(s, best, best, Ops::Ord, width());  // the best is not NaN
  vandps(take, take, s);
}

// best/index take x and its indices (r8 + lane) where x is better. On
// AVX-512 the float comparisons stay in k-registers: the masks' round trip
// through vectors made the chain from one best to the next about 23 cycles
// a vector (argmax along rows of [512, 512], one thread: 0.37 -> 0.19 ns
// an element; max 0.08; along rows of [4096, 4096]: 2.8 -> 1.5 ms, NumPy
// 2.1).
template <class Vmm>
void RowKernelGen<Vmm>::accumulate_arg(int32_t r, const Vmm& best, const Vmm& index, const Vmm& x, bool tail) {
  const Vmm take = scratch(0), s = scratch(1);
  if constexpr (kZmm) {
    if (arg_lanes(r) != Lanes::Long) {
      // Side by side, not one under the other's mask: the chain from one
      // best to the next is one comparison long.
      ops_.cmp_k(k3, best, best, Ops::Ord, width());
      ops_.cmp_k(k2, x, best, s_.body[r].op == Op::ArgMax ? Ops::Nle : Ops::Nge, width());
      kandw(k2, k2, k3);
      if (tail) kandw(k2, k2, k1);
      lane_positions(s);
      ops_.blend_k(index, index, s, k2, width());  // (a blend of floats moves the index's bits as they are)
      ops_.blend_k(best, best, x, k2, width());
      return;
    }
  }
  arg_takes(r, take, best, x, s);
  if (tail) vandps(take, take, tail_mask());
  lane_positions(s);
  ops_.blend(index, index, s, take, width());
  ops_.blend(best, best, x, take, width());
}

// d = r8 + lane, each lane's element of the row, in the kernel's lanes.
template <class Vmm>
void RowKernelGen<Vmm>::lane_positions(const Vmm& d) {
  const Xbyak::Xmm lane(d.getIdx());
  vmovq(lane, r8);
  std::array<uint32_t, 16> iota{};
  if (wide_) {
    vpbroadcastq(d, lane);
    for (uint32_t i = 0; i < 8; ++i) iota[2 * i] = i;
    vpaddq(d, d, k_.lanes(iota));
  } else {
    vpbroadcastd(d, lane);
    for (uint32_t i = 0; i < 16; ++i) iota[i] = i;
    vpaddd(d, d, k_.lanes(iota));
  }
}

// Down a column: the column's best (its reduction's slot + 1) and index
// (its slot) take x and the row's place in R where x is better.
template <class Vmm>
void RowKernelGen<Vmm>::accumulate_column_arg(int32_t r, const Vmm& x) {
  const Vmm take = scratch(0), s = scratch(1), best = scratch(2), index = scratch(3);
  vmovups(best, stash_at(stash_slot_[r] + 1));
  arg_takes(r, take, best, x, s);
  ops_.blend(best, best, x, take, width());
  vmovups(stash_at(stash_slot_[r] + 1), best);
  vmovups(index, stash_at(stash_slot_[r]));
  mov(rax, qword[rsp + count_slot_]);  // rows of R done: this row's place
  if (p_.reduces) imul(rax, rax, static_cast<int>(p_.row_length));  // and its first element's
  vmovq(Xbyak::Xmm(s.getIdx()), rax);
  vpbroadcastq(s, Xbyak::Xmm(s.getIdx()));
  ops_.blend(index, index, s, take, width());
  vmovups(stash_at(stash_slot_[r]), index);
}

// Over the rows and columns at once: the best of the unit's columns, its
// index r C + c, broadcast into the reduction's unit slot.
template <class Vmm>
void RowKernelGen<Vmm>::reduce_arg_along_row(int32_t r, int64_t width) {
  std::fill(std::begin(used_), std::end(used_), false);
  const Vmm best = vr(alloc()), index = vr(alloc()), x = vr(alloc()), at = vr(alloc());
  const Vmm take = scratch(0), s = scratch(1), s2 = scratch(2);
  const bool ints = arg_lanes(r) == Lanes::Long;
  vmovaps(best, arg_start(r));
  vxorps(index, index, index);
  each_vector(width, [&](bool tail) {
    vmovups(x, stash_at(stash_slot_[r] + 1));
    vmovups(at, stash_at(stash_slot_[r]));
    lane_positions(s);  // a column plan is wide: int64 lanes
    vpaddq(at, at, s);  // r C + c
    arg_takes(r, take, best, x, s);
    // or the same value (both NaN, for floats) at a lower index
    if (ints) {
      ints_.cmp(s, x, best, IntOps<Vmm>::Eq, Width::k64);
    } else {
      ops_.cmp(s, x, x, Ops::Unord, Width::k64);
      ops_.cmp(s2, best, best, Ops::Unord, Width::k64);
      vandps(s, s, s2);
      ops_.cmp(s2, x, best, Ops::Eq, Width::k64);
      vorps(s, s, s2);
    }
    ints_.cmp(s2, at, index, IntOps<Vmm>::Lt, Width::k64);
    vandps(s, s, s2);
    vorps(take, take, s);
    if (tail) vandps(take, take, tail_mask());
    ops_.blend(index, index, at, take, Width::k64);
    ops_.blend(best, best, x, take, Width::k64);
  });
  finish_arg(r, best, index);
  vmovq(Xbyak::Xmm(best.getIdx()), rax);
  vpbroadcastq(best, Xbyak::Xmm(best.getIdx()));
  vmovups(unit_value_at(unit_slot_[r]), best);
  std::fill(std::begin(used_), std::end(used_), false);
}

// The best lane of best/index: NaN first, then the better value, then
// the lower index. Leaves the index in rax. Integers compare in r10 (the
// best) and r11; floats in xmm0 (the best) and xmm1.
template <class Vmm>
void RowKernelGen<Vmm>::finish_arg(int32_t r, const Vmm& best, const Vmm& index) {
  const bool max = s_.body[r].op == Op::ArgMax, ints = arg_lanes(r) == Lanes::Long;
  const int indices = kBounce + eb_ * V;
  vmovups(ptr[rsp + kBounce], best);
  vmovups(ptr[rsp + indices], index);
  const Xbyak::Xmm a(0), b(1);
  auto load = [&](const Xbyak::Reg64& g, const Xbyak::Xmm& f, int at) {  // an index (zero-extended) or a value
    if (ints) mov(g, qword[rsp + at]);
    else if (wide_) vmovsd(f, qword[rsp + at]);
    else vmovss(f, dword[rsp + at]);
  };
  auto load_index = [&](const Xbyak::Reg64& g, int i) {
    if (wide_) mov(g, qword[rsp + indices + 8 * i]);
    else mov(g.cvt32(), dword[rsp + indices + 4 * i]);
  };
  auto compare = [&](const Xbyak::Xmm& x, const Xbyak::Xmm& y) {
    if (wide_) vucomisd(x, y);
    else vucomiss(x, y);
  };
  load(r10, a, kBounce);
  load_index(rax, 0);
  for (int i = 1; i < V; ++i) {
    Xbyak::Label take, keep, b_nan, equal;
    load(r11, b, kBounce + eb_ * i);
    load_index(r9, i);
    if (ints) {
      cmp(r11, r10);
      je(equal);
      if (max) jg(take);
      else jl(take);
      jmp(keep);
    } else {
      compare(b, b);
      jp(b_nan);
      compare(a, a);
      jp(keep);                                 // a is NaN, b is not
      compare(b, a);
      je(equal);
      if (max) ja(take);
      else jb(take);
      jmp(keep);
      L(b_nan);
      compare(a, a);
      jnp(take);                                // b is NaN, a is not
    }
    L(equal);
    cmp(r9, rax);
    jl(take);
    jmp(keep);
    L(take);
    if (ints) mov(r10, r11);
    else vmovaps(a, b);
    mov(rax, r9);
    L(keep);
  }
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
