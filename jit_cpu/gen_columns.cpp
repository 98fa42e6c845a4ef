// Column reductions (Note [Column reductions] in row_plan.h): passes down the
// columns with per-column accumulators in scratch.
#include <algorithm>
#include <iterator>
#include <vector>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

template <class Vmm>
std::vector<int32_t> RowKernelGen<Vmm>::column_reductions() const {
  std::vector<int32_t> out;
  for (size_t v = 0; v < s_.body.size(); ++v)
    if (reduces(s_.body[v])) out.push_back(static_cast<int32_t>(v));
  return out;
}

// Passes down the columns: pass p feeds the reductions of values of stage
// p and stores the Full outputs of stage p (x - x.mean(0) takes two).
template <class Vmm>
int RowKernelGen<Vmm>::column_passes() const {
  int n = 1;
  for (size_t v = 0; v < s_.body.size(); ++v)
    if (reduces(s_.body[v])) n = std::max(n, stage_[s_.body[v].args[0]] + 1);
  for (const KernelOutput& o : s_.outputs)
    if (o.space == Space::Full) n = std::max(n, stage_[o.value] + 1);
  return n;
}

template <class Vmm>
void RowKernelGen<Vmm>::generate_columns() {
  const std::vector<int32_t> reds = column_reductions();
  stash_slot_.assign(s_.body.size(), -1);
  for (size_t i = 0; i < reds.size(); ++i) stash_slot_[reds[i]] = static_cast<int>(2 * i);
  max_stashes_ = static_cast<int>(2 * reds.size());
  if (p_.reduces) {  // and one for each reduction's value per unit
    unit_slot_.assign(s_.body.size(), -1);
    for (int32_t r : reds) unit_slot_[r] = max_stashes_++;
  }
  const int outer = static_cast<int>(p_.outer.size());
  in_slot_ = kIndex + 8 * outer;
  out_slot_ = in_slot_ + 8 * static_cast<int>(s_.inputs.size());
  count_slot_ = out_slot_ + 8 * static_cast<int>(s_.outputs.size());
  // The rows done, then a counter per reduced group but the outermost.
  partials_slot_ = count_slot_ + 8 * static_cast<int>(p_.reduce_extents.size());
  const_slot_ = (partials_slot_ + 8 + 63) / 64 * 64;
  enter_frame(const_slot_ + constant_slot_bytes());
  mov(qword[rsp + kScratchPtr], r8);
  for (int d = 0; d < outer; ++d) {
    mov(rax, qword[rcx + 8 * d]);
    mov(qword[rsp + kIndex + 8 * d], rax);
  }
  const int64_t tiles = p_.outer[p_.tile_axis()], last = p_.row_length - (tiles - 1) * p_.column_tile;
  Xbyak::Label unit_loop, done, next, last_tile;
  L(unit_loop);
  cmp(rsi, rdx);
  jge(done, T_NEAR);
  column_output_pointers();
  if (last != p_.column_tile) {
    mov(rax, qword[rsp + kIndex + 8 * static_cast<int>(p_.tile_axis())]);
    cmp(rax, static_cast<int>(tiles - 1));
    je(last_tile, T_NEAR);
  }
  column_unit(p_.column_tile, reds);
  if (last != p_.column_tile) {
    jmp(next, T_NEAR);
    L(last_tile);
    column_unit(last, reds);
  }
  L(next);
  next_row(1);
  inc(rsi);
  jmp(unit_loop, T_NEAR);
  L(done);
  leave_frame();
  vzeroupper();
  ret();
  k_.emit();
  ready();
}

// Outputs are dense [O..., C]: unit (o, t) starts at o * C + t * tile.
template <class Vmm>
void RowKernelGen<Vmm>::column_output_pointers() {
  if (p_.reduces) {  // reduced along the row too: one value per unit
    units_before(p_.outer.size() - 1);
    mov(r11, rax);
  } else {
    tile_start(p_.column_tile, p_.tile_axis());
  }
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    if (s_.outputs[k].space == Space::Full) continue;  // full_output_pointers, per pass
    imul(rax, r11, static_cast<int>(itemsize_of(s_.outputs[k].dtype)));
    output_pointer(k);
  }
}

// Full outputs are dense over the domain: walked like inputs, from the
// unit's first row.
template <class Vmm>
void RowKernelGen<Vmm>::full_output_pointers() {
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    if (s_.outputs[k].space != Space::Full) continue;
    const RowPlan::Access& a = p_.full_outputs[k];
    xor_(rax, rax);
    for (size_t d = 0; d < p_.outer.size(); ++d) {
      mov(r9, qword[rsp + kIndex + 8 * static_cast<int>(d)]);
      imul(r9, r9, static_cast<int>(a.outer_strides[d]));
      add(rax, r9);
    }
    imul(rax, rax, static_cast<int>(itemsize_of(s_.outputs[k].dtype)));
    output_pointer(k);
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::column_unit(int64_t width, const std::vector<int32_t>& reds) {
  width_ = width;
  if constexpr (kZmm) {
    int64_t t = width % V;
    mov(eax, t ? (1u << t) - 1 : 0xffff);
    kmovw(k1, eax);
  }
  each_vector(width, [&](bool) {
    for (int32_t r : reds) {
      if (arg_reduction(r)) {  // index 0, the identity as the best (Note [Arg reductions])
        vxorps(scratch(0), scratch(0), scratch(0));
        vmovups(stash_at(stash_slot_[r]), scratch(0));
        vmovaps(scratch(0), arg_start(r));
        vmovups(stash_at(stash_slot_[r] + 1), scratch(0));
        continue;
      }
      vmovaps(scratch(0), start_value(r));
      vmovups(stash_at(stash_slot_[r]), scratch(0));
      if (s_.body[r].op == Op::Sum) vmovups(stash_at(stash_slot_[r] + 1), scratch(0));
    }
  });
  if (p_.reduces) {
    // An empty reduction: the identities stand (R is known here).
    for (int p = 0; p < column_passes(); ++p) {
      if (p_.reduce_length > 0) column_pass(p, width);
      for (int32_t r : reds)
        if (stage_[s_.body[r].args[0]] == p) reduce_along_row(r, width);
    }
    unit_results(column_passes());
    return;
  }
  Xbyak::Label no_rows, not_last;
  if (p_.reduce_length == 0) jmp(no_rows, T_NEAR);  // an empty reduction: the identities stand
  if (p_.column_parts > 1) {
    split_column_pass(width, reds, not_last);
    round_column_totals(0, width, reds);
  } else {
    for (int p = 0; p < column_passes(); ++p) {
      column_pass(p, width);
      round_column_totals(p, width, reds);
    }
  }
  L(no_rows);
  if (p_.reduce_length == 0) input_pointers();  // no pass down the columns set them
  // The per-column results and what the group computes from them.
  Pass results;
  std::vector<bool> need(s_.body.size(), false), from_total(s_.body.size(), false);
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    if (s_.outputs[k].space == Space::Full) continue;  // stored on the way down
    results.stores.push_back(k);
    mark_results(s_.outputs[k].value, need, from_total);
  }
  for (size_t v = 0; v < s_.body.size(); ++v) {
    if (need[v]) results.values.push_back(static_cast<int32_t>(v));
    if (from_total[v]) results.from_stash.push_back(static_cast<int32_t>(v));
  }
  const_reg_.assign(s_.body.size(), -1);
  for (size_t v = 0; v < s_.body.size(); ++v) {
    const KernelOp& op = s_.body[v];
    if (elem_[v] || stage_[v] != 0 || op.space != Space::Reduced) continue;
    compute_constant(static_cast<int32_t>(v));
  }
  if (!results.stores.empty()) each_vector(width, [&](bool tail) { pass_body(results, tail); });
  std::fill(std::begin(used_), std::end(used_), false);
  L(not_last);
}

// A float32 sum or product of a wide kernel, accumulated in float64 as
// the reference accumulates it in double, rounds once: the per-column
// totals of the reductions that pass p completed.
template <class Vmm>
void RowKernelGen<Vmm>::round_column_totals(int p, int64_t width, const std::vector<int32_t>& reds) {
  std::vector<int32_t> rounded;
  for (int32_t r : reds)
    if (wide_ && rounds_to_float32(s_.body[r].dtype) && stage_[s_.body[r].args[0]] == p) rounded.push_back(r);
  if (rounded.empty()) return;
  each_vector(width, [&](bool) {
    for (int32_t r : rounded) {
      vmovups(scratch(1), stash_at(stash_slot_[r]));
      convert_wide(scratch(1), scratch(1), DType::Float64, DType::Float32);
      vmovups(stash_at(stash_slot_[r]), scratch(1));
    }
  });
}

// Note [Split columns]: the part's rows (the last part may be shorter),
// then its totals to the partials; the last part of the unit to finish
// goes on to combine them, the others jump to `not_last`.
template <class Vmm>
void RowKernelGen<Vmm>::split_column_pass(int64_t width, const std::vector<int32_t>& reds, Xbyak::Label& not_last) {
  const int64_t parts = p_.column_parts, last_rows = p_.reduce_length - (parts - 1) * p_.part_rows;
  Xbyak::Label last_part, passed;
  if (last_rows != p_.part_rows) {
    mov(rax, qword[rsp + kIndex + 8 * static_cast<int>(p_.outer.size() - 1)]);
    cmp(rax, static_cast<int>(parts - 1));
    je(last_part, T_NEAR);
  }
  rows_ = p_.part_rows;
  column_pass(0, width);
  if (last_rows != p_.part_rows) {
    jmp(passed, T_NEAR);
    L(last_part);
    rows_ = last_rows;
    column_pass(0, width);
  }
  rows_ = p_.reduce_length;
  L(passed);
  publish_partials(width, reds, not_last);
  combine_partials(width, reds);
}

// The unit-part's totals to the launch's partials, [unit][part][reduction]
// rows of stash_row_bytes(); then the unit's counter counts the part done
// (lock xadd: a full barrier, so a part that reads the count also sees the
// partials stored before it). partials_slot_ keeps where the unit's
// partials start.
template <class Vmm>
void RowKernelGen<Vmm>::publish_partials(int64_t width, const std::vector<int32_t>& reds, Xbyak::Label& not_last) {
  const int64_t parts = p_.column_parts, per_part = static_cast<int64_t>(reds.size()) * stash_row_bytes();
  units_before(p_.outer.size() - 1);
  mov(r11, rax);  // the unit
  imul(rax, rax, static_cast<int>(parts * per_part));
  mov(r10, qword[rdi + offsetof(LaunchArgs, partials)]);
  add(rax, r10);
  mov(qword[rsp + partials_slot_], rax);
  mov(r9, qword[rsp + kIndex + 8 * static_cast<int>(p_.outer.size() - 1)]);  // the part
  imul(r9, r9, static_cast<int>(per_part));
  add(r9, rax);
  each_vector(width, [&](bool) {
    for (size_t i = 0; i < reds.size(); ++i) {
      vmovups(scratch(0), stash_at(stash_slot_[reds[i]]));
      vmovups(ptr[r9 + r8 * eb_ + static_cast<int>(i * stash_row_bytes())], scratch(0));
    }
  });
  mov(r10, qword[rdi + offsetof(LaunchArgs, part_counts)]);
  mov(eax, 1);
  lock();
  xadd(qword[r10 + r11 * 8], rax);
  cmp(rax, static_cast<int>(parts - 1));
  jne(not_last, T_NEAR);
}

// Each reduction's totals over the unit's partials, in part order, back
// into its stash row, where the results pass reads them.
template <class Vmm>
void RowKernelGen<Vmm>::combine_partials(int64_t width, const std::vector<int32_t>& reds) {
  const int64_t row = stash_row_bytes(), per_part = static_cast<int64_t>(reds.size()) * row;
  mov(r9, qword[rsp + partials_slot_]);
  each_vector(width, [&](bool) {
    for (size_t i = 0; i < reds.size(); ++i) {
      const int32_t r = reds[i];
      vmovups(scratch(1), ptr[r9 + r8 * eb_ + static_cast<int>(i * row)]);
      for (int64_t part = 1; part < p_.column_parts; ++part) {
        vmovups(scratch(0), ptr[r9 + r8 * eb_ + static_cast<int>(part * per_part + i * row)]);
        combine(s_.body[r].op, lanes(r), ops_, scratch(1), scratch(0), scratch(2), scratch(3));
      }
      vmovups(stash_at(stash_slot_[r]), scratch(1));
    }
  });
}

// Pass p down the R rows of the unit: computes per element what the
// pass's reductions and Full outputs need, reading the per-column totals
// of earlier passes' reductions from scratch.
template <class Vmm>
void RowKernelGen<Vmm>::column_pass(int p, int64_t width) {
  Pass down;
  std::vector<bool> need(s_.body.size(), false), from_total(s_.body.size(), false);
  std::vector<int32_t> sums;
  for (size_t v = 0; v < s_.body.size(); ++v) {
    const KernelOp& op = s_.body[v];
    if (!reduces(op) || stage_[op.args[0]] != p) continue;
    down.reductions.push_back(static_cast<int32_t>(v));
    if (op.op == Op::Sum) sums.push_back(static_cast<int32_t>(v));
    mark_results(op.args[0], need, from_total);
  }
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    if (s_.outputs[k].space != Space::Full || stage_[s_.outputs[k].value] != p) continue;
    down.stores.push_back(k);
    mark_results(s_.outputs[k].value, need, from_total);
  }
  for (size_t v = 0; v < s_.body.size(); ++v) {
    if (need[v]) down.values.push_back(static_cast<int32_t>(v));
    if (from_total[v]) down.from_stash.push_back(static_cast<int32_t>(v));
  }
  input_pointers();
  full_output_pointers();
  for (size_t level = 0; level < p_.reduce_extents.size(); ++level)
    mov(qword[rsp + count_slot_ + 8 * static_cast<int>(level)], 0);
  Xbyak::Label row;
  L(row);
  unit_constants(p);
  each_vector(width, [&](bool tail) { pass_body(down, tail); });
  std::fill(std::begin(used_), std::end(used_), false);
  next_row_down(down);
  inc(qword[rsp + count_slot_]);
  if (!sums.empty()) {
    Xbyak::Label skip;
    test(qword[rsp + count_slot_], kColumnBlock - 1);
    jnz(skip, T_NEAR);
    fold_column_blocks(width, sums);
    L(skip);
  }
  mov(rax, rows_);
  cmp(qword[rsp + count_slot_], rax);
  jl(row, T_NEAR);
  if (!sums.empty() && rows_ % kColumnBlock != 0) fold_column_blocks(width, sums);
}

// Steps the pointers of the inputs and of the pass's Full outputs to the
// next row of R: along the innermost reduced group, and where it ends, on
// to the next of the group outside it (Note [Column reductions]). Level
// l's counter (l > 0) is at count_slot_ + 8 l; level 0 needs none, the
// rows done end the pass. After the last row the pointers are past R,
// which nothing reads: the next pass starts from input_pointers().
template <class Vmm>
void RowKernelGen<Vmm>::next_row_down(const Pass& down) {
  const int levels = static_cast<int>(p_.reduce_extents.size());
  auto step = [&](int l) {  // every pointer by its reduce_step at level l
    for (size_t k = 0; k < s_.inputs.size(); ++k) {
      const KernelInput& in = s_.inputs[k];
      if (in.kind == KernelInput::Kind::Scalar) continue;
      int64_t b = p_.reduce_step(p_.inputs[k], l) * (in.kind == KernelInput::Kind::Buffer ? itemsize_of(in.dtype) : 1);
      if (b != 0) add(qword[rsp + in_slot_ + 8 * static_cast<int>(k)], static_cast<int>(b));
    }
    for (size_t k : down.stores) {
      int64_t b = p_.reduce_step(p_.full_outputs[k], l) * itemsize_of(s_.outputs[k].dtype);
      if (b != 0) add(qword[rsp + out_slot_ + 8 * static_cast<int>(k)], static_cast<int>(b));
    }
  };
  step(levels - 1);
  Xbyak::Label carried;
  for (int l = levels - 1; l >= 1; --l) {
    Xbyak::Address counter = qword[rsp + count_slot_ + 8 * l];
    inc(counter);
    cmp(counter, static_cast<int>(p_.reduce_extents[l]));
    jl(carried, T_NEAR);
    mov(counter, 0);
    step(l - 1);
  }
  L(carried);
}

// Registers for the values that do not vary along the row up to stage
// `st`: inputs and constants, and when the row is reduced too, the units'
// reduction values (from their scratch slots) and what is computed from
// them. Recomputed per row of a pass: a handful of instructions per row.
template <class Vmm>
void RowKernelGen<Vmm>::unit_constants(int st) {
  const_reg_.assign(s_.body.size(), -1);
  std::fill(std::begin(used_), std::end(used_), false);
  for (int at = 0; at <= st; ++at)  // in the order of Note [Constant lifetimes]
    for (size_t v = 0; v < s_.body.size(); ++v)
      if (!elem_[v] && stage_[v] == at) compute_constant(static_cast<int32_t>(v));
}

// Reduced along the row too: the unit's outputs, one value each.
template <class Vmm>
void RowKernelGen<Vmm>::unit_results(int st) {
  unit_constants(st);
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    if (s_.outputs[k].space != Space::Reduced) continue;
    std::vector<int> loaded;
    store_scalar(k, constant(s_.outputs[k].value, loaded));
    release_all(loaded);
  }
  std::fill(std::begin(used_), std::end(used_), false);
}

template <class Vmm>
Xbyak::Address RowKernelGen<Vmm>::unit_value_at(int slot) {
  mov(rax, qword[rsp + kScratchPtr]);
  return ptr[rax + slot * stash_row_bytes()];
}

// Reduction r's per-column totals reduced along the row, broadcast into
// its unit slot. Sums are blocked like a row's (Note [Blocked sums]).
template <class Vmm>
void RowKernelGen<Vmm>::reduce_along_row(int32_t r, int64_t width) {
  if (arg_reduction(r)) return reduce_arg_along_row(r, width);
  Op op = s_.body[r].op;
  std::fill(std::begin(used_), std::end(used_), false);
  const Vmm acc = vr(alloc()), block = vr(alloc());
  vmovaps(acc, identity_value(r));
  vmovaps(block, identity_value(r));
  each_vector(width, [&](bool tail) {
    vmovups(scratch(0), stash_at(stash_slot_[r]));
    if (tail) {  // lanes past the row: the identity
      vmovaps(scratch(1), identity_value(r));
      vmovups(scratch(2), tail_mask());
      ops_.blend(scratch(0), scratch(1), scratch(0), scratch(2));
    }
    combine(op, lanes(r), ops_, block, scratch(0), scratch(1), scratch(2));
    if (op == Op::Sum) {
      Xbyak::Label same_block;
      lea(rax, ptr[r8 + V]);
      test(rax, kSumBlock - 1);
      jnz(same_block);
      add_sum(r, acc, acc, block);
      vmovaps(block, sum_zero(r));
      L(same_block);
    }
  });
  if (op == Op::Sum) add_sum(r, acc, acc, block);
  else vmovaps(acc, block);
  reduce_lanes(r, acc);
  if (wide_ && rounds_to_float32(s_.body[r].dtype)) convert_wide(acc, acc, DType::Float64, DType::Float32);  // once
  vmovups(unit_value_at(unit_slot_[r]), acc);
  std::fill(std::begin(used_), std::end(used_), false);
}

template <class Vmm>
void RowKernelGen<Vmm>::mark_results(int32_t v, std::vector<bool>& need, std::vector<bool>& from_total) const {
  if (need[v] || from_total[v] || !elem_[v]) return;
  if (reduces(s_.body[v])) {
    from_total[v] = true;
    return;
  }
  need[v] = true;
  for (int32_t a : s_.body[v].args) mark_results(a, need, from_total);
}

template <class Vmm>
void RowKernelGen<Vmm>::fold_column_blocks(int64_t width, const std::vector<int32_t>& sums) {
  each_vector(width, [&](bool) {
    for (int32_t r : sums) {
      vmovups(scratch(0), stash_at(stash_slot_[r]));
      add_sum(r, scratch(0), scratch(0), stash_at(stash_slot_[r] + 1));
      vmovups(stash_at(stash_slot_[r]), scratch(0));
      vmovaps(scratch(0), sum_zero(r));
      vmovups(stash_at(stash_slot_[r] + 1), scratch(0));
    }
  });
}

// acc = op(acc, x) in the reduction's scratch row (the block for a sum).
template <class Vmm>
void RowKernelGen<Vmm>::accumulate_column(int32_t r, const Vmm& x) {
  if (arg_reduction(r)) return accumulate_column_arg(r, x);
  Op op = s_.body[r].op;
  int slot = stash_slot_[r] + (op == Op::Sum ? 1 : 0);
  vmovups(scratch(1), stash_at(slot));
  combine(op, lanes(r), ops_, scratch(1), x, scratch(2), scratch(3));
  vmovups(stash_at(slot), scratch(1));
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
