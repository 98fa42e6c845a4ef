// The kernel's frame and row loop, each row's pointers and its row constants
// between the passes over it.
#include <algorithm>
#include <cstddef>
#include <iterator>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

template <class Vmm>
void RowKernelGen<Vmm>::generate() {
  check_supported();
  analyse();
  if (p_.columns) {
    generate_columns();
    return;
  }
  decide_streaming();
  decide_tiling();
  plan_passes();
  stash_ok_ = static_cast<int64_t>(stashes_) * stash_row_bytes() <= kMaxStashBytes;
  plan_passes();
  max_stashes_ = stashes_;
  const int outer = static_cast<int>(p_.outer.size());
  in_slot_ = kIndex + 8 * outer;
  out_slot_ = in_slot_ + 8 * static_cast<int>(s_.inputs.size());
  tile_slot_ = (out_slot_ + 8 * static_cast<int>(s_.outputs.size()) + 63) / 64 * 64;
  chunk_slot_ = tile_slot_ + tiles_ * G * tile_width_ * eb_;  // Note [Tile chunks]
  pair_slot_ = chunk_slot_ + 8 * 3;                          // Note [Tile pairs]
  const_slot_ = (pair_slot_ + 8 * (kPairSlots + 2 * static_cast<int>(s_.inputs.size())) + 63) / 64 * 64;
  enter_frame(const_slot_ + constant_slot_bytes());
  mov(qword[rsp + kScratchPtr], r8);
  for (int d = 0; d < outer; ++d) {
    mov(rax, qword[rcx + 8 * d]);
    mov(qword[rsp + kIndex + 8 * d], rax);
  }
  set_tail_mask();
  if (p_.pair_blocks > 0) pair_loop();  // Note [Tile pairs]
  else row_loop();
  leave_frame();
  if (stream_) sfence();  // streaming stores are weakly ordered: publish them before returning
  vzeroupper();
  ret();
  k_.emit();
  ready();
}

// Note [Aligned frame]
// The frame's vectors (tiles, the bounce area, constants in memory) are
// read and written whole: a 64-byte vector that is not 64-byte aligned
// spans two cache lines and costs two accesses. The caller's rsp is only
// 16-byte aligned, so the frame is rounded down to 64 bytes and the
// caller's rsp kept in it.
template <class Vmm>
void RowKernelGen<Vmm>::enter_frame(int bytes) {
  mov(rax, rsp);
  sub(rsp, bytes);
  and_(rsp, -64);
  mov(qword[rsp + kCallerRsp], rax);
}

template <class Vmm>
void RowKernelGen<Vmm>::leave_frame() {
  mov(rsp, qword[rsp + kCallerRsp]);
}

// Rows [rsi, rdx), G at a time where they make a tile group.
template <class Vmm>
void RowKernelGen<Vmm>::row_loop() {
  const int outer = static_cast<int>(p_.outer.size());
  Xbyak::Label row_loop, done;
  L(row_loop);
  cmp(rsi, rdx);
  jge(done, T_NEAR);
  if (tiles_ > 0) {
    // G rows at once when they are G aligned rows of one tile group.
    Xbyak::Label single;
    mov(rax, qword[rsp + kIndex + 8 * (outer - 1)]);
    test(rax, G - 1);
    jnz(single, T_NEAR);
    add(rax, G);
    mov(r9, p_.outer.back());
    cmp(rax, r9);
    jg(single, T_NEAR);
    lea(r9, ptr[rsi + G]);
    cmp(r9, rdx);
    jg(single, T_NEAR);
    row_pointers();
    group_body();
    next_row(G);
    add(rsi, G);
    jmp(row_loop, T_NEAR);
    L(single);
  }
  row_pointers();
  if (p_.row_tile > 0) tiled_row_body();
  else row_body();
  next_row(1);
  inc(rsi);
  jmp(row_loop, T_NEAR);
  L(done);
}

// With zmm registers, k1 masks a row's tail of width_ % V lanes.
template <class Vmm>
void RowKernelGen<Vmm>::set_tail_mask() {
  if constexpr (kZmm) {
    int64_t t = width_ % V;
    mov(eax, t ? (1u << t) - 1 : 0xffff);
    kmovw(k1, eax);
  }
}

// Note [Row tiles]: every tile but the last is row_tile long.
template <class Vmm>
void RowKernelGen<Vmm>::tiled_row_body() {
  const int64_t last = p_.last_row_width();
  if (last == p_.row_tile) {
    row_body();
    return;
  }
  Xbyak::Label last_tile, next;
  mov(rax, qword[rsp + kIndex + 8 * static_cast<int>(p_.outer.size() - 1)]);
  cmp(rax, static_cast<int>(p_.outer.back() - 1));
  je(last_tile, T_NEAR);
  row_body();
  jmp(next, T_NEAR);
  L(last_tile);
  width_ = last;
  set_tail_mask();
  row_body();
  width_ = p_.row_tile;
  set_tail_mask();
  L(next);
}

template <class Vmm>
void RowKernelGen<Vmm>::row_pointers() {
  input_pointers();
  if (p_.row_tile > 0) tile_start(p_.row_tile, p_.outer.size() - 1);  // outputs are dense over [O..., L]
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    const KernelOutput& o = s_.outputs[k];
    if (p_.row_tile > 0) {
      imul(rax, r11, static_cast<int>(itemsize_of(o.dtype)));
    } else {
      int64_t row_bytes = itemsize_of(o.dtype) * (stored_per_element(o) ? p_.row_length : 1);
      if (p_.pair_blocks > 0) mov(rax, qword[rsp + kIndex]);  // Note [Tile pairs]: rsi counts units
      else mov(rax, rsi);
      mov(r9, row_bytes);
      imul(rax, r9);
    }
    output_pointer(k);
  }
}

// rax = the flat index of the outer index over its first `axes` axes.
template <class Vmm>
void RowKernelGen<Vmm>::units_before(size_t axes) {
  xor_(rax, rax);
  for (int d = 0; d < static_cast<int>(axes); ++d) {
    imul(rax, rax, static_cast<int>(p_.outer[d]));
    add(rax, qword[rsp + kIndex + 8 * d]);
  }
}

// r11 = rax = the element at which tile (o, t) of `tile` elements starts
// in a buffer dense over [O..., L]: o L + t tile, outer axis `axis`
// counting tiles and the axes before it o (Note [Row tiles], Note [Column
// reductions]).
template <class Vmm>
void RowKernelGen<Vmm>::tile_start(int64_t tile, size_t axis) {
  units_before(axis);
  imul(rax, rax, static_cast<int>(p_.row_length));
  mov(r9, qword[rsp + kIndex + 8 * static_cast<int>(axis)]);
  imul(r9, r9, static_cast<int>(tile));
  add(rax, r9);
  mov(r11, rax);
}

// Output k's slot = its base pointer + rax (a byte offset).
template <class Vmm>
void RowKernelGen<Vmm>::output_pointer(size_t k) {
  mov(r10, qword[rdi + offsetof(LaunchArgs, outputs)]);
  add(rax, qword[r10 + 8 * static_cast<int>(k)]);
  mov(qword[rsp + out_slot_ + 8 * static_cast<int>(k)], rax);
}

// Each input's pointer (bytes; elements for an arange) at the start of
// the row (the column unit) the outer index names, in its slot.
template <class Vmm>
void RowKernelGen<Vmm>::input_pointers() {
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    const KernelInput& in = s_.inputs[k];
    if (in.kind == KernelInput::Kind::Scalar) continue;
    const RowPlan::Access& a = p_.inputs[k];
    mov(rax, a.offset);
    for (size_t d = 0; d < p_.outer.size(); ++d) {
      if (a.outer_strides[d] == 0) continue;
      mov(r9, qword[rsp + kIndex + 8 * static_cast<int>(d)]);
      imul(r9, r9, static_cast<int>(a.outer_strides[d]));
      add(rax, r9);
    }
    if (in.kind == KernelInput::Kind::Buffer) {
      imul(rax, rax, static_cast<int>(itemsize_of(in.dtype)));
      mov(r10, qword[rdi + offsetof(LaunchArgs, inputs)]);
      add(rax, qword[r10 + 8 * static_cast<int>(k)]);
    }
    mov(qword[rsp + in_slot_ + 8 * static_cast<int>(k)], rax);
  }
}

// Advances the outer index by `step` rows (step > 1 only within the last
// axis, which it then does not pass).
template <class Vmm>
void RowKernelGen<Vmm>::next_row(int step) {
  Xbyak::Label carried;
  for (int d = static_cast<int>(p_.outer.size()) - 1; d >= 0; --d) {
    if (d == static_cast<int>(p_.outer.size()) - 1 && step > 1) add(qword[rsp + kIndex + 8 * d], step);
    else inc(qword[rsp + kIndex + 8 * d]);
    mov(rax, p_.outer[d]);
    cmp(qword[rsp + kIndex + 8 * d], rax);
    jl(carried, T_NEAR);
    mov(qword[rsp + kIndex + 8 * d], 0);
  }
  L(carried);
}

template <class Vmm>
void RowKernelGen<Vmm>::row_body() {
  const size_t n = s_.body.size();
  const_reg_.assign(n, -1);
  std::fill(std::begin(used_), std::end(used_), false);
  plan_passes();
  row_constants(0);
  release_constants(0);
  for (int p = 0; p < passes_; ++p) {
    loop_pass(passes_plan_[p], p == 1);  // Note [Prefetching the next row]
    release_constants(2 * p + 1);
    row_constants(p + 1);
    release_constants(2 * p + 2);
  }
}

// Points in a row's program: 2s computes the row constants of stage s,
// 2p+1 is loop pass p. A row constant's register is free after the last
// point that reads it.
template <class Vmm>
void RowKernelGen<Vmm>::plan_passes() {
  passes_plan_.clear();
  stash_slot_.assign(s_.body.size(), -1);
  stashes_ = 0;
  std::vector<bool> computed(s_.body.size(), false);
  for (int p = 0; p < passes_; ++p) {
    passes_plan_.push_back(make_pass(p, computed));
    for (int32_t v : passes_plan_.back().from_stash)
      if (stash_slot_[v] < 0) stash_slot_[v] = stashes_++;
    for (int32_t v : passes_plan_.back().values) computed[v] = true;
  }
  last_point_.assign(s_.body.size(), -1);
  auto use = [&](int32_t v, int point) {
    if (!elem_[v]) last_point_[v] = std::max(last_point_[v], point);
  };
  for (size_t v = 0; v < s_.body.size(); ++v)
    if (!elem_[v] && !reduces(s_.body[v]))
      for (int32_t a : s_.body[v].args) use(a, 2 * stage_[v]);
  for (int p = 0; p < passes_; ++p) {
    const Pass& pass = passes_plan_[p];
    for (int32_t v : pass.values)
      for (int32_t a : s_.body[v].args) use(a, 2 * p + 1);
    for (int32_t r : pass.reductions) use(s_.body[r].args[0], 2 * p + 1);
    for (size_t k : pass.stores) use(s_.outputs[k].value, 2 * p + 1);
  }
  for (const KernelOutput& o : s_.outputs)
    if (!stored_per_element(o)) use(o.value, 2 * stage_[o.value]);
}

template <class Vmm>
void RowKernelGen<Vmm>::release_constants(int point) {
  for (size_t v = 0; v < s_.body.size(); ++v)
    if (const_reg_[v] >= 0 && last_point_[v] <= point) {
      release(const_reg_[v]);
      const_reg_[v] = -2;  // freed
    }
}

// Row constants of stage `st` (reductions were finalised by the pass),
// and the Reduced outputs among them.
template <class Vmm>
void RowKernelGen<Vmm>::row_constants(int st) {
  for (size_t v = 0; v < s_.body.size(); ++v) {
    const KernelOp& op = s_.body[v];
    if (elem_[v] || stage_[v] != st || reduces(op)) continue;
    compute_constant(static_cast<int32_t>(v));
  }
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    const KernelOutput& o = s_.outputs[k];
    if (stored_per_element(o) || stage_[o.value] != st) continue;
    std::vector<int> loaded;
    store_scalar(k, constant(o.value, loaded));
    release_all(loaded);
  }
}

// Row constant v into a register of its own: an input's value, a column
// plan's unit value (Note [Column reductions]), or an op of other row
// constants, whose registers it frees where it is their last reader
// (Note [Constant lifetimes]).
template <class Vmm>
void RowKernelGen<Vmm>::compute_constant(int32_t v) {
  const KernelOp& op = s_.body[v];
  const int reg = alloc();
  if (op.op == Op::Input && op.args.empty()) {
    load_constant(op.input, vr(reg));
  } else if (reduces(op)) {
    vmovups(vr(reg), unit_value_at(unit_slot_[v]));
  } else {
    std::vector<int> loaded;
    if (op.op == Op::Input) load_constant_masked(op.input, vr(reg), constant(op.args[0], loaded));
    else compute(op, vr(reg), [&](int32_t a) { return constant(a, loaded); });
    release_all(loaded);
    for (int32_t a : op.args)
      if (const_reg_[a] >= 0 && last_constant_reader_[a] == v) {
        release(const_reg_[a]);
        const_reg_[a] = -2;  // freed
      }
  }
  keep_constant(v, reg);
}

// Row constant v is in `reg`: it stays there, or goes to its slot (Note
// [Constants in memory]).
template <class Vmm>
void RowKernelGen<Vmm>::keep_constant(int32_t v, int reg) {
  const_reg_[v] = reg;
  if (!constants_in_memory_) return;
  vmovups(constant_at(v), vr(reg));
  release(reg);
  const_reg_[v] = kInMemory;
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
