// One pass over the row: the values it computes, its vector loop, stashed values
// and the prefetch of the next row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

template <class Vmm>
typename RowKernelGen<Vmm>::Pass RowKernelGen<Vmm>::make_pass(int p, const std::vector<bool>& computed) const {
  Pass pass;
  std::vector<bool> need(s_.body.size(), false);
  std::vector<int32_t> roots;
  for (size_t v = 0; v < s_.body.size(); ++v)
    if (reduces(s_.body[v]) && stage_[s_.body[v].args[0]] == p) {
      pass.reductions.push_back(static_cast<int32_t>(v));
      roots.push_back(s_.body[v].args[0]);
    }
  for (size_t k = 0; k < s_.outputs.size(); ++k)
    if (stored_per_element(s_.outputs[k]) && stage_[s_.outputs[k].value] == p) {
      pass.stores.push_back(k);
      roots.push_back(s_.outputs[k].value);
    }
  std::vector<bool> stashed(s_.body.size(), false);
  for (int32_t r : roots) mark(r, need, computed, stashed);
  for (size_t v = 0; v < s_.body.size(); ++v) {
    if (need[v]) pass.values.push_back(static_cast<int32_t>(v));
    if (stashed[v]) pass.from_stash.push_back(static_cast<int32_t>(v));
  }
  return pass;
}

template <class Vmm>
void RowKernelGen<Vmm>::loop_pass(Pass pass, bool prefetch_next_row) {
  if (pass.reductions.empty() && pass.stores.empty()) return;
  for (int32_t r : pass.reductions) {
    int acc = alloc();
    pass.acc[r] = acc;
    if (arg_reduction(r)) {  // Note [Arg reductions]
      vmovaps(vr(acc), arg_start(r));
      pass.index[r] = alloc();
      vxorps(vr(pass.index[r]), vr(pass.index[r]), vr(pass.index[r]));  // vpxor has no zmm form
      continue;
    }
    if (int64_row_total(r)) {
      vxorps(vr(acc), vr(acc), vr(acc));
      continue;
    }
    vmovaps(vr(acc), start_value(r));
    if (s_.body[r].op == Op::Sum && constants_in_memory_) {  // Note [Spilled values]: the total in r's slot
      vmovaps(scratch(0), sum_zero(r));
      vmovups(constant_at(r), scratch(0));
      pass.total[r] = kInMemory;
    } else if (s_.body[r].op == Op::Sum) {
      int total = alloc();
      vmovaps(vr(total), sum_zero(r));
      pass.total[r] = total;
    }
  }
  const int64_t L = width_;
  const int unroll = interleave(pass);
  xor_(r8, r8);
  if (unroll > 1) vector_loop(pass, unroll, prefetch_next_row);
  gather_accumulators(pass);
  vector_loop(pass, 1, prefetch_next_row);  // what is left of the whole vectors
  if (L % V != 0) {
    mov(r8, L - L % V);
    pass_body(pass, true);
  }
  for (int32_t r : pass.reductions) finish_reduction(pass, r);
}

// Note [Interleaved accumulators]
// A row reduction's accumulator is a chain: each vector's max or add waits
// for the last one (3 cycles for an add on Zen 5, more for a max that keeps
// NaN), which held a row sum to 64 bytes per chain step, about 0.8 ms for
// 64 MB on our 2-core machines where the memory delivers it in 0.5. So
// while whole groups of `unroll` vectors remain, vector j of a group goes
// to accumulator j mod unroll (4 on AVX-512, 2 on AVX2, where registers are
// left over for them), and the siblings are combined into the first in a
// fixed order before the rest of the row: the same order on every run.
// Blocked sums (Note [Blocked sums]) flush every accumulator at a block's
// end, a multiple of the group. argmax/argmin and int64 totals keep one.
template <class Vmm>
int RowKernelGen<Vmm>::interleave(Pass& pass) {
  std::vector<int32_t> spread;
  for (int32_t r : pass.reductions)
    if (!arg_reduction(r) && !int64_row_total(r)) spread.push_back(r);
  if (spread.empty() || width_ < 2 * V) return 1;
  int free = 0;
  for (int reg = kScratch; reg < kNumRegs; ++reg) free += !used_[reg];
  // Leave a register for every value a vector computes or reads back.
  const int need = static_cast<int>(pass.values.size() + pass.from_stash.size()) + 1;
  int unroll = kZmm ? 4 : 2;
  while (unroll > 1 && free - (unroll - 1) * static_cast<int>(spread.size()) < need) unroll /= 2;
  if (unroll == 1) return 1;
  for (int32_t r : spread)
    for (int j = 1; j < unroll; ++j) {
      int a = alloc();
      vmovaps(vr(a), s_.body[r].op == Op::Sum ? sum_zero(r) : identity_value(r));
      pass.spread[r].push_back(a);
    }
  return unroll;
}

// Vectors from r8 on while `unroll` whole ones remain, vector j of a group
// into each reduction's accumulator j.
template <class Vmm>
void RowKernelGen<Vmm>::vector_loop(Pass& pass, int unroll, bool prefetch_next_row) {
  const int64_t step = static_cast<int64_t>(unroll) * V, last = width_ - step;
  if (last < 0) return;
  Xbyak::Label loop, done;
  if (unroll == 1 && width_ >= 2 * V) {  // after a group loop r8 may already be past it
    cmp(r8, static_cast<int>(last));
    jg(done, T_NEAR);
  }
  std::map<int32_t, int> first = pass.acc;
  L_(loop);
  for (int j = 0; j < unroll; ++j) {
    for (auto& [r, regs] : pass.spread) pass.acc[r] = j == 0 ? first[r] : regs[j - 1];
    if (prefetch_next_row) prefetch_row_ahead();
    pass_body(pass, false);
    add(r8, V);
  }
  pass.acc = first;
  flush_sums(pass);
  cmp(r8, static_cast<int>(last));
  jle(loop, T_NEAR);
  L(done);
}

// The siblings of each accumulator combined into it, in order, and freed.
template <class Vmm>
void RowKernelGen<Vmm>::gather_accumulators(Pass& pass) {
  for (auto& [r, regs] : pass.spread)
    for (int a : regs) {
      combine(s_.body[r].op, lanes(r), ops_, vr(pass.acc[r]), vr(a), scratch(2), scratch(3));
      release(a);
    }
  pass.spread.clear();
}

// Note [Prefetching the next row]
// A kernel with several passes over a row (softmax: max, then exp and
// sum, then divide) reads memory only in its first pass; the later ones
// run from cache and compute. While the second pass computes (the first
// from cache, and softmax's longest: exp), the next row's inputs are
// prefetched, a line per vector, so the next first pass does not wait on
// memory with nothing to do (softmax of 4096 x 4096: 11.3 -> 10.5 ms on
// the AVX2 machines prefetching in the last pass; 2.8-2.9 -> 2.5-2.6 ms
// on the Zen 5 ones prefetching in the second instead). The next row is
// the next index of the last outer axis; at the end of a thread's chunk
// the prefetch is wasted, harmlessly.
template <class Vmm>
void RowKernelGen<Vmm>::prefetch_row_ahead() {
  if (p_.outer.empty()) return;
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    const KernelInput& in = s_.inputs[k];
    const RowPlan::Access& a = p_.inputs[k];
    if (in.kind != KernelInput::Kind::Buffer || a.inner_stride != 1 || a.outer_strides.back() == 0) continue;
    if (tile_of_.size() > k && tile_of_[k] >= 0) continue;
    const int64_t size = itemsize_of(in.dtype), ahead = a.outer_strides.back() * size;
    if (!fits_int32(ahead + p_.row_length * size)) continue;
    input_base(static_cast<int32_t>(k));
    prefetcht0(ptr[rax + r8 * static_cast<int>(size) + static_cast<int>(ahead)]);
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::mark(
    int32_t v, std::vector<bool>& need, const std::vector<bool>& computed, std::vector<bool>& stashed) const {
  if (!elem_[v] || need[v] || stashed[v]) return;
  if (computed[v] && s_.body[v].op != Op::Input && stash_ok_) {
    stashed[v] = true;
    return;
  }
  need[v] = true;
  for (int32_t a : s_.body[v].args) mark(a, need, computed, stashed);
}

// Note [Stashed values]
// A per-element value that one pass computes and a later pass needs again
// (softmax's exp(x - max): summed in one pass, divided and stored in the
// next) is written to a per-thread scratch row when computed and read
// back, from L1, instead of being computed twice. Inputs are reloaded, not
// stashed. The scratch is stash_floats() per thread, given by launch; when
// rows are so long that it would not stay in cache, values are recomputed.
//
// rax = where stash `slot` holds element r8 of the row.
template <class Vmm>
Xbyak::Address RowKernelGen<Vmm>::stash_at(int slot) {
  mov(rax, qword[rsp + kScratchPtr]);
  return ptr[rax + r8 * eb_ + slot * stash_row_bytes()];
}

template <class Vmm>
int RowKernelGen<Vmm>::stash_row_bytes() const {
  int64_t n = p_.columns ? p_.column_tile : p_.row_length;
  return static_cast<int>((n + V - 1) / V * V * eb_);
}

// One vector of the row at element r8 (the last, partial one if `tail`).
template <class Vmm>
void RowKernelGen<Vmm>::pass_body(Pass& pass, bool tail) {
  BodyRegisters body{pass};
  std::map<int32_t, int>& reg = body.reg;
  body_ = &body;  // Note [Spilled values]
  struct Leave {
    BodyRegisters*& at;
    ~Leave() { at = nullptr; }
  } leave{body_};
  // Last use of each value within this body, so registers are reused.
  std::map<int32_t, size_t> last;
  for (size_t i = 0; i < pass.values.size(); ++i)
    for (int32_t a : s_.body[pass.values[i]].args) last[a] = i;
  for (int32_t r : pass.reductions) last[s_.body[r].args[0]] = SIZE_MAX;
  for (size_t k : pass.stores) last[s_.outputs[k].value] = SIZE_MAX;
  std::vector<int> loaded;  // Note [Constants in memory]: freed after each op
  auto value = [&](int32_t a) { return elem_[a] ? element(a, loaded) : constant(a, loaded); };

  for (int32_t v : pass.from_stash) {
    const int r = alloc();
    vmovups(vr(r), stash_at(stash_slot_[v]));
    reg[v] = r;
  }
  for (size_t i = 0; i < pass.values.size(); ++i) {
    int32_t v = pass.values[i];
    const KernelOp& op = s_.body[v];
    body.at = i;
    body.pinned = op.args;
    int r = alloc();
    if (op.op == Op::Input && !op.args.empty()) load_masked(op.input, vr(r), value(op.args[0]), tail);
    else if (op.op == Op::Input) load_element(op.input, vr(r), tail);
    else compute(op, vr(r), value);
    release_all(loaded);
    reg[v] = r;
    if (stash_slot_[v] >= 0) vmovups(stash_at(stash_slot_[v]), vr(r));
    for (int32_t a : op.args)
      if (elem_[a] && last[a] == i && reg.count(a)) {
        release(reg[a]);
        reg.erase(a);
      }
  }
  body.at = pass.values.size();
  for (int32_t r : pass.reductions) {
    body.pinned = {s_.body[r].args[0]};
    accumulate(pass, r, value(s_.body[r].args[0]), tail);
    release_all(loaded);
  }
  for (size_t k : pass.stores) {
    body.pinned = {s_.outputs[k].value};
    store_element(k, value(s_.outputs[k].value), tail);
    release_all(loaded);
  }
  for (auto [v, r] : reg) release(r);
}

// Note [Spilled values]
// A pass body holds each per-element value in a register from the op that
// computes it to its last reader. When more are live than there are
// registers (AVX2's 16, less the scratch ones, the row constants and the
// accumulators: benchpress's shallow water's flux kernel, frexp's float64
// steps, backward kernels of long chains), the try with constants in
// memory (Note [Constants in memory]) also spills: alloc() stores the live
// value whose next reader is farthest (Belady's choice; never one the op
// being emitted reads) to its stack slot and hands its register over, and
// each later reader loads it from L1 into a register freed after the op,
// as a constant in memory is read. A blocked sum's row total (Note
// [Blocked sums]) waits in the slot of the sum's result too, read and
// written once a block, so that five float64 sums over one row leave
// registers for the values that feed them (a backward kernel of the
// gradient fuzzer's). Stores and loads of the stack are cheap beside the
// interpreter such a kernel ran on before: benchpress's shallow water on
// a 1024 x 1024 grid under AVX2 now takes 69 ms for 10 steps, NumPy 831
// (bench/numpy_programs.py; 63 ms with AVX-512's 32 registers).
template <class Vmm>
int RowKernelGen<Vmm>::spill() {
  BodyRegisters& b = *body_;
  int32_t victim = -1;
  size_t farthest = 0;
  for (const auto& [v, r] : b.reg) {
    if (std::find(b.pinned.begin(), b.pinned.end(), v) != b.pinned.end()) continue;
    const size_t use = next_use(v);
    if (victim < 0 || use > farthest) victim = v, farthest = use;
  }
  if (victim < 0) throw OutOfRegisters();
  const int r = b.reg.at(victim);
  vmovups(constant_at(victim), vr(r));
  b.reg.erase(victim);
  return r;  // still marked used: it changes hands
}

// The first op at or after the one being emitted that reads v; the
// reductions and stores after all of them.
template <class Vmm>
size_t RowKernelGen<Vmm>::next_use(int32_t v) const {
  const std::vector<int32_t>& values = body_->pass.values;
  for (size_t i = body_->at; i < values.size(); ++i) {
    const std::vector<int32_t>& args = s_.body[values[i]].args;
    if (std::find(args.begin(), args.end(), v) != args.end()) return i;
  }
  return values.size();
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
