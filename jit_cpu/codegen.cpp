// The row-kernel generator (Note [Row kernels]).
//
// Per row, the body runs in passes over the row. Every value is either
// per-element (it varies along the row) or a row constant (a Reduced value,
// a scalar, a broadcast input). A reduction consumes a per-element value in
// one pass and yields a row constant after it, so softmax is three passes
// over a row that stays in cache: max, then sum of exp(x - max), then the
// stores of exp(x - max) / sum. stage(v) is the number of passes that must
// finish before v is known; pass p computes what the reductions and stores
// of stage p need.
#include <xbyak/xbyak.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <map>
#include <stdexcept>

#include <unistd.h>

#include "graph/infer.h"
#include "jit_cpu/int_ops.h"
#include "jit_cpu/kernel.h"
#include "jit_cpu/lanes.h"
#include "jit_cpu/vector_math.h"
#include "jit_cpu/vector_ops.h"

namespace braze::jit {

namespace {

struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool fits_int32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

// Note [Streaming stores]
// A store to memory not in cache first reads the line (read for ownership),
// so a kernel that writes an output far larger than the last-level cache
// moves 3 bytes per byte it reads-and-writes, where a copy with
// non-temporal stores moves 2. Such outputs are written with vmovntps,
// which needs aligned addresses: it is used when every row of a float32
// or int32 output starts on a vector boundary (rows a multiple of the vector width;
// launch checks the buffers are 64-byte aligned) and for full vectors only.
// Below the threshold the output is likely read again soon from cache by
// the next kernel, and a cached store is better.
int64_t streaming_store_threshold() {
  static const int64_t bytes = [] {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return std::max<int64_t>(l3 > 0 ? l3 : 0, int64_t{8} << 20);
  }();
  return bytes;
}

template <class Vmm>
class RowKernelGen : public Xbyak::CodeGenerator {
  using Ops = VectorOps<Vmm>;
  static constexpr bool kZmm = Ops::kZmm;
  static constexpr int V = kZmm ? 16 : 8;
  static constexpr int kNumRegs = kZmm ? 32 : 16;
  static constexpr int kScratch = 5;              // v0..v4: temporaries inside one op
  static constexpr int64_t kSumBlock = 16 * V;    // Note [Blocked sums]
  static constexpr int G = 64;                    // Note [Tiled transposes]: rows per group
  static constexpr int kTileAhead = 2;            // blocks of a tiled input prefetched ahead
  static constexpr int W = 16;                    // and columns per block: a cache line of floats

  // Stack frame.
  static constexpr int kBounce = 0;     // 128 bytes: tails and horizontal reductions
  static constexpr int kScratchPtr = 128;  // the launch's per-thread scratch (Note [Stashed values])
  static constexpr int kIndex = 136;    // outer multi-index

 public:
  RowKernelGen(const KernelSpec& spec, const RowPlan& plan)
      : CodeGenerator(4096, Xbyak::AutoGrow),
        s_(spec),
        p_(plan),
        k_(*this),
        ops_(*this, k_),
        math_(*this, k_, ops_),
        ints_(*this, k_, ops_) {}

  bool streams() const { return stream_; }
  // Bytes of instructions; the constant pool follows them.
  size_t text_size() const { return k_.code_size(); }
  // Floats of per-thread scratch a launch must pass (Note [Stashed values]).
  int64_t stash_floats() const { return static_cast<int64_t>(max_stashes_) * stash_row_bytes() / 4; }

  void generate() {
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
    tile_slot_ = out_slot_ + 8 * static_cast<int>(s_.outputs.size());
    frame_ = (tile_slot_ + tiles_ * G * W * 4 + 15) / 16 * 16 + 8;

    sub(rsp, frame_);
    mov(qword[rsp + kScratchPtr], r8);
    for (int d = 0; d < outer; ++d) {
      mov(rax, qword[rcx + 8 * d]);
      mov(qword[rsp + kIndex + 8 * d], rax);
    }
    if constexpr (kZmm) {
      int64_t t = width_ % V;
      mov(eax, t ? (1u << t) - 1 : 0xffff);
      kmovw(k1, eax);
    }
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
    row_body();
    next_row(1);
    inc(rsi);
    jmp(row_loop, T_NEAR);
    L(done);
    add(rsp, frame_);
    if (stream_) sfence();  // streaming stores are weakly ordered: publish them before returning
    vzeroupper();
    ret();
    k_.emit();
    ready();
  }

 private:
  // --- analysis -----------------------------------------------------------

  void check_supported() {
    for (const KernelInput& in : s_.inputs) {
      if (!lanes_of(in.dtype)) throw Unsupported(std::string("inputs of dtype ") + std::string(name(in.dtype)));
      if (in.kind == KernelInput::Kind::Arange && in.dtype != DType::Float32 && lanes_of(in.dtype) != Lanes::Int)
        throw Unsupported("an arange of dtype " + std::string(name(in.dtype)));
    }
    for (size_t v = 0; v < s_.body.size(); ++v) {
      const KernelOp& op = s_.body[v];
      if (!lanes_of(op.dtype) && !int64_row_total(static_cast<int32_t>(v)))
        throw Unsupported("values of dtype " + std::string(name(op.dtype)));
      // float32 lanes round an int32 past 2^24, which a comparison would
      // see (16777217 == 16777216.0f); the reference compares exactly.
      if (info(op.op).dtype_rule == DTypeRule::Compare && compute_lanes(compute_dtype_of(op)) == Lanes::Float)
        for (int32_t a : op.args)
          if (s_.body[a].dtype == DType::Int32) throw Unsupported("comparisons of int32 with float values");
    }
    for (size_t k = 0; k < s_.inputs.size(); ++k) {
      const RowPlan::Access& a = p_.inputs[k];
      if (!fits_int32(a.inner_stride * (p_.row_length + V)) || !fits_int32(a.offset))
        throw Unsupported("strides past 32 bits");
      for (int64_t st : a.outer_strides)
        if (!fits_int32(st)) throw Unsupported("strides past 32 bits");
      if (!fits_int32(a.reduce_stride * 8)) throw Unsupported("strides past 32 bits");
    }
  }

  // Note [Integer sums]
  // NumPy sums integers and bools into int64, which has no lanes. A row sum
  // of integer lanes that is only stored (a count of trues, x.sum(-1) of
  // int8) is still generated: it accumulates V/2 int64 lanes, each 32-bit
  // lane sign-extended into them, and adds those up in a general register.
  // Anything that computes with an int64 (even sum + 1), products and
  // column sums run on the spec interpreter.
  bool int64_row_total(int32_t v) const {
    const KernelOp& op = s_.body[v];
    if (op.dtype != DType::Int64) return false;
    bool sum = op.op == Op::Sum && !p_.columns && reduces(op) && lanes_of(s_.body[op.args[0]].dtype);
    bool copy = op.op == Op::Copy && int64_row_total(op.args[0]);
    if (!sum && !copy && !arg_reduction(v)) return false;
    for (const KernelOp& user : s_.body)  // a copy (a reshape's) is checked on its own
      if (user.op != Op::Copy && std::count(user.args.begin(), user.args.end(), v)) return false;
    for (const KernelOutput& o : s_.outputs)
      if (o.value == v && stored_per_element(o)) return false;
    return true;
  }

  // Note [Arg reductions]
  // argmax/argmin along the row of float lanes: each lane keeps its best
  // value and that value's index (int32 lanes); a lane takes a new element
  // when it is better, or NaN while the best is not (NaN wins, as in NumPy),
  // so within a lane the first of equals stays. The horizontal step picks
  // the best lane, the lowest index among equals. The int64 result is only
  // stored (Note [Integer sums]).
  bool arg_reduction(int32_t v) const {
    const KernelOp& op = s_.body[v];
    return (op.op == Op::ArgMax || op.op == Op::ArgMin) && !p_.columns && reduces(op) &&
           lanes_of(s_.body[op.args[0]].dtype) == Lanes::Float && fits_int32(p_.row_length + V);
  }

  // Note [Lanes]: the kind of lanes value v's register holds.
  Lanes lanes(int32_t v) const { return *lanes_of(s_.body[v].dtype); }

  DType compute_dtype_of(const KernelOp& op) const {
    std::vector<DType> in;
    for (int32_t a : op.args) in.push_back(s_.body[a].dtype);
    return compute_dtype(op.op, in, op.dtype);
  }

  bool reduces(const KernelOp& op) const {
    return is_reduce(op.op) && !op.attr.ints.empty() && (p_.reduces || p_.columns);
  }

  void analyse() {
    const size_t n = s_.body.size();
    elem_.assign(n, false);
    stage_.assign(n, 0);
    for (size_t v = 0; v < n; ++v) {
      const KernelOp& op = s_.body[v];
      if (op.op == Op::Input) {
        const KernelInput& in = s_.inputs[op.input];
        elem_[v] = in.kind != KernelInput::Kind::Scalar && p_.inputs[op.input].inner_stride != 0;
      } else if (reduces(op)) {
        stage_[v] = stage_[op.args[0]] + 1;
        // A column reduction varies along the row, unless the row is reduced too.
        elem_[v] = p_.columns && !p_.reduces && elem_[op.args[0]];
      } else {
        for (int32_t a : op.args) {
          elem_[v] = elem_[v] || elem_[a];
          stage_[v] = std::max(stage_[v], stage_[a]);
        }
      }
    }
    passes_ = 0;
    for (size_t v = 0; v < n; ++v)
      if (reduces(s_.body[v])) passes_ = std::max(passes_, stage_[s_.body[v].args[0]] + 1);
    for (const KernelOutput& o : s_.outputs)
      if (stored_per_element(o)) passes_ = std::max(passes_, stage_[o.value] + 1);
  }

  bool stored_per_element(const KernelOutput& o) const { return o.space == Space::Full || !p_.reduces; }

  void decide_streaming() {
    if (p_.row_length % V != 0) return;
    int64_t bytes = 0;
    for (const KernelOutput& o : s_.outputs) {
      if (!stored_per_element(o)) continue;
      if (itemsize(o.dtype) != 4) return;  // float32 and int32: whole registers
      bytes += p_.rows() * p_.row_length * 4;
    }
    stream_ = bytes >= streaming_store_threshold();
  }

  // --- registers ------------------------------------------------------------

  int alloc() {
    for (int r = kScratch; r < kNumRegs; ++r)
      if (!used_[r]) {
        used_[r] = true;
        return r;
      }
    throw Unsupported("more live values than vector registers");
  }
  void release(int r) { used_[r] = false; }
  static Vmm vr(int r) { return Vmm(r); }
  static Vmm scratch(int i) { return Vmm(i); }

  // --- per row ----------------------------------------------------------------

  int64_t itemsize_of(DType t) const { return static_cast<int64_t>(itemsize(t)); }

  void row_pointers() {
    input_pointers();
    for (size_t k = 0; k < s_.outputs.size(); ++k) {
      const KernelOutput& o = s_.outputs[k];
      int64_t row_bytes = itemsize_of(o.dtype) * (stored_per_element(o) ? p_.row_length : 1);
      mov(rax, rsi);
      mov(r9, row_bytes);
      imul(rax, r9);
      mov(r10, qword[rdi + offsetof(LaunchArgs, outputs)]);
      add(rax, qword[r10 + 8 * static_cast<int>(k)]);
      mov(qword[rsp + out_slot_ + 8 * static_cast<int>(k)], rax);
    }
  }

  // Each input's pointer (bytes; elements for an arange) at the start of
  // the row (the column unit) the outer index names, in its slot.
  void input_pointers() {
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
  void next_row(int step) {
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

  void row_body() {
    const size_t n = s_.body.size();
    const_reg_.assign(n, -1);
    std::fill(std::begin(used_), std::end(used_), false);
    plan_passes();
    row_constants(0);
    release_constants(0);
    for (int p = 0; p < passes_; ++p) {
      loop_pass(passes_plan_[p], p == passes_ - 1 && passes_ > 1);
      release_constants(2 * p + 1);
      row_constants(p + 1);
      release_constants(2 * p + 2);
    }
  }

  // Points in a row's program: 2s computes the row constants of stage s,
  // 2p+1 is loop pass p. A row constant's register is free after the last
  // point that reads it.
  void plan_passes() {
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

  void release_constants(int point) {
    for (size_t v = 0; v < s_.body.size(); ++v)
      if (const_reg_[v] >= 0 && last_point_[v] <= point) {
        release(const_reg_[v]);
        const_reg_[v] = -2;  // freed
      }
  }

  // Row constants of stage `st` (reductions were finalised by the pass),
  // and the Reduced outputs among them.
  void row_constants(int st) {
    for (size_t v = 0; v < s_.body.size(); ++v) {
      const KernelOp& op = s_.body[v];
      if (elem_[v] || stage_[v] != st || reduces(op)) continue;
      int r = alloc();
      if (op.op == Op::Input) load_constant(op.input, vr(r));
      else compute(op, vr(r), [&](int32_t a) { return vr(const_reg_[a]); });
      const_reg_[v] = r;
    }
    for (size_t k = 0; k < s_.outputs.size(); ++k) {
      const KernelOutput& o = s_.outputs[k];
      if (!stored_per_element(o) && stage_[o.value] == st) store_scalar(k, vr(const_reg_[o.value]));
    }
  }

  // --- one pass over the row ------------------------------------------------

  // Note [Stashed values]
  // A per-element value that one pass computes and a later pass needs again
  // (softmax's exp(x - max): summed in one pass, divided and stored in the
  // next) is written to a per-thread scratch row when computed and read
  // back, from L1, instead of being computed twice. Inputs are reloaded, not
  // stashed. The scratch is stash_floats() per thread, given by launch; when
  // rows are so long that it would not stay in cache, values are recomputed.
  static constexpr int64_t kMaxStashBytes = 256 << 10;

  struct Pass {
    std::vector<int32_t> values;     // per-element values computed, in body order
    std::vector<int32_t> from_stash; // per-element values an earlier pass computed
    std::vector<int32_t> reductions; // reduce ops fed in this pass
    std::vector<size_t> stores;      // outputs stored in this pass
    std::map<int32_t, int> acc;      // reduce op -> accumulator register
    std::map<int32_t, int> total;    // Sum: the row total beside the block accumulator
    std::map<int32_t, int> index;    // argmax/argmin: each lane's best index
  };

  Pass make_pass(int p, const std::vector<bool>& computed) const {
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

  void loop_pass(Pass pass, bool prefetch_next_row) {
    if (pass.reductions.empty() && pass.stores.empty()) return;
    for (int32_t r : pass.reductions) {
      int acc = alloc();
      pass.acc[r] = acc;
      if (arg_reduction(r)) {  // Note [Arg reductions]
        vmovaps(vr(acc), k_(s_.body[r].op == Op::ArgMax ? -INFINITY : INFINITY));
        pass.index[r] = alloc();
        vpxor(vr(pass.index[r]), vr(pass.index[r]), vr(pass.index[r]));
        continue;
      }
      if (int64_row_total(r)) {
        vxorps(vr(acc), vr(acc), vr(acc));
        continue;
      }
      vmovaps(vr(acc), start_value(r));
      if (s_.body[r].op == Op::Sum) {
        int total = alloc();
        vmovaps(vr(total), k_(-0.0f));
        pass.total[r] = total;
      }
    }
    const int64_t L = p_.row_length;
    xor_(r8, r8);
    if (L >= V) {
      Xbyak::Label loop;
      L_(loop);
      if (prefetch_next_row) prefetch_row_ahead();
      pass_body(pass, false);
      add(r8, V);
      flush_sums(pass);
      cmp(r8, static_cast<int>(L - V));
      jle(loop, T_NEAR);
    }
    if (L % V != 0) {
      mov(r8, L - L % V);
      pass_body(pass, true);
    }
    for (int32_t r : pass.reductions) finish_reduction(pass, r);
  }

  void L_(Xbyak::Label& l) { L(l); }

  // Note [Prefetching the next row]
  // A kernel with several passes over a row (softmax: max, then exp and
  // sum, then divide) reads memory only in its first pass; the later ones
  // run from cache and compute. While the last pass computes, the next
  // row's inputs are prefetched, a line per vector, so the next first pass
  // does not wait on memory with nothing to do (softmax of 4096 x 4096:
  // 11.3 -> 10.5 ms on our 2-core machines). The next row is the next index of the last outer
  // axis; at the end of a thread's chunk the prefetch is wasted, harmlessly.
  void prefetch_row_ahead() {
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

  void mark(int32_t v, std::vector<bool>& need, const std::vector<bool>& computed, std::vector<bool>& stashed) const {
    if (!elem_[v] || need[v] || stashed[v]) return;
    if (computed[v] && s_.body[v].op != Op::Input && stash_ok_) {
      stashed[v] = true;
      return;
    }
    need[v] = true;
    for (int32_t a : s_.body[v].args) mark(a, need, computed, stashed);
  }

  // rax = where stash `slot` holds element r8 of the row.
  Xbyak::Address stash_at(int slot) {
    mov(rax, qword[rsp + kScratchPtr]);
    return ptr[rax + r8 * 4 + slot * stash_row_bytes()];
  }
  int stash_row_bytes() const {
    int64_t n = p_.columns ? p_.column_tile : p_.row_length;
    return static_cast<int>((n + V - 1) / V * V * 4);
  }

  // One vector of the row at element r8 (the last, partial one if `tail`).
  void pass_body(Pass& pass, bool tail) {
    std::map<int32_t, int> reg;  // per-element value -> register
    // Last use of each value within this body, so registers are reused.
    std::map<int32_t, size_t> last;
    for (size_t i = 0; i < pass.values.size(); ++i)
      for (int32_t a : s_.body[pass.values[i]].args) last[a] = i;
    for (int32_t r : pass.reductions) last[s_.body[r].args[0]] = SIZE_MAX;
    for (size_t k : pass.stores) last[s_.outputs[k].value] = SIZE_MAX;
    auto value = [&](int32_t a) { return elem_[a] ? vr(reg.at(a)) : vr(const_reg_[a]); };

    for (int32_t v : pass.from_stash) {
      reg[v] = alloc();
      vmovups(vr(reg[v]), stash_at(stash_slot_[v]));
    }
    for (size_t i = 0; i < pass.values.size(); ++i) {
      int32_t v = pass.values[i];
      const KernelOp& op = s_.body[v];
      int r = alloc();
      if (op.op == Op::Input) load_element(op.input, vr(r), tail);
      else compute(op, vr(r), value);
      reg[v] = r;
      if (stash_slot_[v] >= 0) vmovups(stash_at(stash_slot_[v]), vr(r));
      for (int32_t a : op.args)
        if (elem_[a] && last[a] == i && reg.count(a)) {
          release(reg[a]);
          reg.erase(a);
        }
    }
    for (int32_t r : pass.reductions) accumulate(pass, r, value(s_.body[r].args[0]), tail);
    for (size_t k : pass.stores) store_element(k, value(s_.outputs[k].value), tail);
    for (auto [v, r] : reg) release(r);
  }

  // --- transposed inputs, V rows at a time ---------------------------------

  // Note [Tiled transposes]
  // An input read across the row with a large stride (x.T) but contiguous
  // along the last outer axis costs a gather per vector, one cache line per
  // element. When such inputs exist, the kernel takes G = 16 consecutive
  // rows of that axis together: for each G-wide column block it loads G x G
  // of the input as contiguous pieces (G floats, one cache line, per
  // column), transposes them in registers, and parks the result in a stack
  // tile from which each of the G rows then reads its vectors. G x G blocks
  // make every line used up by the access that fetched it, on the input
  // (one line per column) and on the output (one line per row, written in
  // one go, which streaming stores need to combine): with 8 x 8 blocks on
  // AVX2 each half line was fetched or written apart, and strides of a
  // power of two thrash the cache sets in between. Rows that do not fill a
  // group, and each group's last partial column block, take the per-row
  // path (gathers).
  void decide_tiling() {
    tile_of_.assign(s_.inputs.size(), -1);
    if (p_.reduces || p_.outer.empty() || p_.outer.back() < G || p_.row_length < V) return;
    for (size_t k = 0; k < s_.inputs.size(); ++k) {
      const KernelInput& in = s_.inputs[k];
      const RowPlan::Access& a = p_.inputs[k];
      if (in.kind == KernelInput::Kind::Scalar) continue;
      if (!fits_int32(a.outer_strides.back() * G * itemsize_of(in.dtype))) return;
      if (in.kind == KernelInput::Kind::Buffer && !fits_int32(a.inner_stride * W * itemsize_of(in.dtype))) return;
      if (in.kind == KernelInput::Kind::Buffer && itemsize(in.dtype) == 4 && a.inner_stride != 0 &&
          a.inner_stride != 1 && a.outer_strides.back() == 1)
        tile_of_[k] = tiles_++;
    }
    for (const KernelOutput& o : s_.outputs)
      if (!fits_int32(p_.row_length * G * itemsize_of(o.dtype))) tiles_ = 0;
  }

  void group_body() {
    const int64_t L = p_.row_length, full = L - L % W;
    if (full > 0) {
      Xbyak::Label loop;
      xor_(r8, r8);
      L_(loop);
      fill_tiles();
      for (int a = 0; a < G; ++a) group_row(a, 0, W / V, true);
      add(r8, W);
      cmp(r8, static_cast<int>(full));
      jl(loop, T_NEAR);
    }
    if (L % W != 0) {  // the rest of each row, per row
      mov(r8, full);
      for (int a = 0; a < G; ++a) group_row(a, 0, static_cast<int>((L % W + V - 1) / V), false);
    }
  }

  // Row `a` of the group: its row constants, then vectors first..last-1 of
  // the block at column r8 (a line of the output, written in one go). The
  // vector that passes the end of the row is a tail.
  void group_row(int a, int first, int last, bool from_tile) {
    group_row_ = a;
    from_tile_ = from_tile;
    const_reg_.assign(s_.body.size(), -1);
    std::fill(std::begin(used_), std::end(used_), false);
    plan_passes();
    row_constants(0);
    const int64_t rest = p_.row_length % W;
    for (int h = first; h < last; ++h) {
      tile_column_ = h * V;
      if (h > 0) add(r8, V);
      pass_body(passes_plan_[0], !from_tile && (h + 1) * V > rest);
    }
    if (last - 1 > first) sub(r8, (last - 1 - first) * V);
    std::fill(std::begin(used_), std::end(used_), false);
    group_row_ = 0;
    tile_column_ = 0;
    from_tile_ = false;
  }

  // The G x W block at rows 0..G-1 of the group, columns r8..r8+W-1, of
  // each tiled input, transposed into its stack tile (row a at a * W
  // floats), V columns at a time. In sets of 4 rows g: register j collects,
  // in its 128-bit lane q, the 4 floats of column 4q + j; a 4 x 4 transpose
  // inside every lane then leaves row 4g + j in register j. Nothing else is
  // live here: v0..v7 are free.
  void fill_tiles() {
    for (size_t k = 0; k < s_.inputs.size(); ++k) {
      if (tile_of_[k] < 0) continue;
      const int stride = static_cast<int>(p_.inputs[k].inner_stride * 4);
      const int tile = tile_slot_ + tile_of_[k] * G * W * 4;
      mov(rax, qword[rsp + in_slot_ + 8 * static_cast<int>(k)]);
      imul(r9, r8, stride);
      add(rax, r9);
      // The block kTileAhead blocks on: W input rows, G floats each. The
      // hardware prefetchers do not follow a 64-float-wide column stripe
      // down the rows.
      if (fits_int32(static_cast<int64_t>(stride) * W * (kTileAhead + 1)))
        for (int row = 0; row < W; ++row)
          for (int line = 0; line < G * 4 / 64; ++line)
            prefetcht0(ptr[rax + (W * kTileAhead + row) * stride + 64 * line]);
      for (int h = 0; h < W / V; ++h) {
        for (int g = 0; g < G / 4; ++g) {
          for (int j = 0; j < 4; ++j) {
            for (int q = 0; q < V / 4; ++q) {
              Xbyak::Address at = ptr[rax + (h * V + j + 4 * q) * stride + 16 * g];
              if (q == 0) vmovups(Xbyak::Xmm(j), at);
              else if constexpr (kZmm) vinsertf32x4(Xbyak::Zmm(j), Xbyak::Zmm(j), at, q);
              else vinsertf128(Xbyak::Ymm(j), Xbyak::Ymm(j), at, q);
            }
          }
          const Vmm r0(0), r1(1), r2(2), r3(3), t0(4), t1(5), t2(6), t3(7);
          vunpcklps(t0, r0, r1);
          vunpckhps(t1, r0, r1);
          vunpcklps(t2, r2, r3);
          vunpckhps(t3, r2, r3);
          vshufps(r0, t0, t2, 0x44);
          vshufps(r1, t0, t2, 0xee);
          vshufps(r2, t1, t3, 0x44);
          vshufps(r3, t1, t3, 0xee);
          for (int j = 0; j < 4; ++j) vmovups(ptr[rsp + tile + ((4 * g + j) * W + h * V) * 4], Vmm(j));
        }
      }
    }
  }

  // rax = input k's pointer (bytes; elements for an arange) for the current
  // row of the group.
  void input_base(int32_t k) {
    mov(rax, qword[rsp + in_slot_ + 8 * k]);
    const KernelInput& in = s_.inputs[k];
    int64_t step = p_.outer.empty() ? 0 : p_.inputs[k].outer_strides.back();
    if (in.kind == KernelInput::Kind::Buffer) step *= itemsize_of(in.dtype);
    if (group_row_ > 0 && step != 0) add(rax, static_cast<int>(group_row_ * step));
  }

  void output_base(size_t k) {
    mov(rax, qword[rsp + out_slot_ + 8 * static_cast<int>(k)]);
    if (group_row_ > 0) add(rax, static_cast<int>(group_row_ * p_.row_length * itemsize_of(s_.outputs[k].dtype)));
  }

  // --- column reductions (Note [Column reductions]) -------------------------

  // Per reduction, its scratch rows: the running total (2i) and, for a sum,
  // the current block (2i + 1). Note [Blocked sums] applies down a column:
  // a block of kColumnBlock rows is summed apart, then added to the total.
  static constexpr int kColumnBlock = 64;

  std::vector<int32_t> column_reductions() const {
    std::vector<int32_t> out;
    for (size_t v = 0; v < s_.body.size(); ++v)
      if (reduces(s_.body[v])) out.push_back(static_cast<int32_t>(v));
    return out;
  }

  void check_columns() {
    for (size_t v = 0; v < s_.body.size(); ++v) {
      const KernelOp& op = s_.body[v];
      if (reduces(op) && !elem_[op.args[0]])
        throw Unsupported("a column reduction of a value that does not vary along the row");
    }
    for (const KernelOutput& o : s_.outputs)
      if (!elem_[o.value] && !(p_.reduces && o.space == Space::Reduced))
        throw Unsupported("a column reduction with an output that does not vary along the row");
  }

  // Passes down the columns: pass p feeds the reductions of values of stage
  // p and stores the Full outputs of stage p (x - x.mean(0) takes two).
  int column_passes() const {
    int n = 1;
    for (size_t v = 0; v < s_.body.size(); ++v)
      if (reduces(s_.body[v])) n = std::max(n, stage_[s_.body[v].args[0]] + 1);
    for (const KernelOutput& o : s_.outputs)
      if (o.space == Space::Full) n = std::max(n, stage_[o.value] + 1);
    return n;
  }

  template <class F>
  void each_vector(int64_t width, F body) {
    xor_(r8, r8);
    if (width >= V) {
      Xbyak::Label loop;
      L_(loop);
      body(false);
      add(r8, V);
      cmp(r8, static_cast<int>(width - V));
      jle(loop, T_NEAR);
    }
    if (width % V != 0) {
      mov(r8, width - width % V);
      body(true);
    }
  }

  void generate_columns() {
    check_columns();
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
    frame_ = (count_slot_ + 8 + 15) / 16 * 16 + 8;

    sub(rsp, frame_);
    mov(qword[rsp + kScratchPtr], r8);
    for (int d = 0; d < outer; ++d) {
      mov(rax, qword[rcx + 8 * d]);
      mov(qword[rsp + kIndex + 8 * d], rax);
    }
    const int64_t tiles = p_.outer.back(), last = p_.row_length - (tiles - 1) * p_.column_tile;
    Xbyak::Label unit_loop, done, next, last_tile;
    L(unit_loop);
    cmp(rsi, rdx);
    jge(done, T_NEAR);
    column_output_pointers();
    if (last != p_.column_tile) {
      mov(rax, qword[rsp + kIndex + 8 * (outer - 1)]);
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
    add(rsp, frame_);
    vzeroupper();
    ret();
    k_.emit();
    ready();
  }

  // Outputs are dense [O..., C]: unit (o, t) starts at o * C + t * tile.
  void column_output_pointers() {
    const int outer = static_cast<int>(p_.outer.size());
    xor_(rax, rax);
    for (int d = 0; d + 1 < outer; ++d) {
      imul(rax, rax, static_cast<int>(p_.outer[d]));
      add(rax, qword[rsp + kIndex + 8 * d]);
    }
    if (!p_.reduces) {  // reduced along the row too: one value per unit
      imul(rax, rax, static_cast<int>(p_.row_length));
      mov(r9, qword[rsp + kIndex + 8 * (outer - 1)]);
      imul(r9, r9, static_cast<int>(p_.column_tile));
      add(rax, r9);
    }
    mov(r11, rax);
    for (size_t k = 0; k < s_.outputs.size(); ++k) {
      if (s_.outputs[k].space == Space::Full) continue;  // full_output_pointers, per pass
      imul(rax, r11, static_cast<int>(itemsize_of(s_.outputs[k].dtype)));
      mov(r10, qword[rdi + offsetof(LaunchArgs, outputs)]);
      add(rax, qword[r10 + 8 * static_cast<int>(k)]);
      mov(qword[rsp + out_slot_ + 8 * static_cast<int>(k)], rax);
    }
  }

  // Full outputs are dense over the domain: walked like inputs, from the
  // unit's first row.
  void full_output_pointers() {
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
      mov(r10, qword[rdi + offsetof(LaunchArgs, outputs)]);
      add(rax, qword[r10 + 8 * static_cast<int>(k)]);
      mov(qword[rsp + out_slot_ + 8 * static_cast<int>(k)], rax);
    }
  }

  void column_unit(int64_t width, const std::vector<int32_t>& reds) {
    width_ = width;
    if constexpr (kZmm) {
      int64_t t = width % V;
      mov(eax, t ? (1u << t) - 1 : 0xffff);
      kmovw(k1, eax);
    }
    each_vector(width, [&](bool) {
      for (int32_t r : reds) {
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
    Xbyak::Label no_rows;
    if (p_.reduce_length == 0) jmp(no_rows, T_NEAR);  // an empty reduction: the identities stand
    for (int p = 0; p < column_passes(); ++p) column_pass(p, width);
    L(no_rows);
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
      const_reg_[v] = alloc();
      if (op.op == Op::Input) load_constant(op.input, vr(const_reg_[v]));
      else compute(op, vr(const_reg_[v]), [&](int32_t a) { return vr(const_reg_[a]); });
    }
    if (!results.stores.empty()) each_vector(width, [&](bool tail) { pass_body(results, tail); });
    std::fill(std::begin(used_), std::end(used_), false);
  }

  // Pass p down the R rows of the unit: computes per element what the
  // pass's reductions and Full outputs need, reading the per-column totals
  // of earlier passes' reductions from scratch.
  void column_pass(int p, int64_t width) {
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
    mov(qword[rsp + count_slot_], 0);
    Xbyak::Label row;
    L(row);
    unit_constants(p);
    each_vector(width, [&](bool tail) { pass_body(down, tail); });
    std::fill(std::begin(used_), std::end(used_), false);
    for (size_t k = 0; k < s_.inputs.size(); ++k) {
      const KernelInput& in = s_.inputs[k];
      int64_t step = p_.inputs[k].reduce_stride * (in.kind == KernelInput::Kind::Buffer ? itemsize_of(in.dtype) : 1);
      if (step != 0) add(qword[rsp + in_slot_ + 8 * static_cast<int>(k)], static_cast<int>(step));
    }
    for (size_t k : down.stores) {
      int64_t step = p_.full_outputs[k].reduce_stride * itemsize_of(s_.outputs[k].dtype);
      add(qword[rsp + out_slot_ + 8 * static_cast<int>(k)], static_cast<int>(step));
    }
    inc(qword[rsp + count_slot_]);
    if (!sums.empty()) {
      Xbyak::Label skip;
      test(qword[rsp + count_slot_], kColumnBlock - 1);
      jnz(skip, T_NEAR);
      fold_column_blocks(width, sums);
      L(skip);
    }
    mov(rax, p_.reduce_length);
    cmp(qword[rsp + count_slot_], rax);
    jl(row, T_NEAR);
    if (!sums.empty() && p_.reduce_length % kColumnBlock != 0) fold_column_blocks(width, sums);
  }

  // Registers for the values that do not vary along the row up to stage
  // `st`: inputs and constants, and when the row is reduced too, the units'
  // reduction values (from their scratch slots) and what is computed from
  // them. Recomputed per row of a pass: a handful of instructions per row.
  void unit_constants(int st) {
    const_reg_.assign(s_.body.size(), -1);
    std::fill(std::begin(used_), std::end(used_), false);
    for (size_t v = 0; v < s_.body.size(); ++v) {
      const KernelOp& op = s_.body[v];
      if (elem_[v] || stage_[v] > st) continue;
      const_reg_[v] = alloc();
      if (reduces(op)) vmovups(vr(const_reg_[v]), unit_value_at(unit_slot_[v]));
      else if (op.op == Op::Input) load_constant(op.input, vr(const_reg_[v]));
      else compute(op, vr(const_reg_[v]), [&](int32_t a) { return vr(const_reg_[a]); });
    }
  }

  // Reduced along the row too: the unit's outputs, one value each.
  void unit_results(int st) {
    unit_constants(st);
    for (size_t k = 0; k < s_.outputs.size(); ++k)
      if (s_.outputs[k].space == Space::Reduced) store_scalar(k, vr(const_reg_[s_.outputs[k].value]));
    std::fill(std::begin(used_), std::end(used_), false);
  }

  Xbyak::Address unit_value_at(int slot) {
    mov(rax, qword[rsp + kScratchPtr]);
    return ptr[rax + slot * stash_row_bytes()];
  }

  // Reduction r's per-column totals reduced along the row, broadcast into
  // its unit slot. Sums are blocked like a row's (Note [Blocked sums]).
  void reduce_along_row(int32_t r, int64_t width) {
    Op op = s_.body[r].op;
    std::fill(std::begin(used_), std::end(used_), false);
    const Vmm acc = vr(alloc()), block = vr(alloc());
    vmovaps(acc, k_.bits_of(identity(r)));
    vmovaps(block, k_.bits_of(identity(r)));
    each_vector(width, [&](bool tail) {
      vmovups(scratch(0), stash_at(stash_slot_[r]));
      if (tail) {  // lanes past the row: the identity
        vmovaps(scratch(1), k_.bits_of(identity(r)));
        vmovups(scratch(2), tail_mask());
        ops_.blend(scratch(0), scratch(1), scratch(0), scratch(2));
      }
      combine(op, lanes(r), ops_, block, scratch(0), scratch(1));
      if (op == Op::Sum) {
        Xbyak::Label same_block;
        lea(rax, ptr[r8 + V]);
        test(rax, kSumBlock - 1);
        jnz(same_block);
        vaddps(acc, acc, block);
        vmovaps(block, k_(-0.0f));
        L(same_block);
      }
    });
    if (op == Op::Sum) vaddps(acc, acc, block);
    else vmovaps(acc, block);
    vmovups(ptr[rsp + kBounce], acc);
    Xbyak::Xmm a(0), b(1), s(2);
    VectorOps<Xbyak::Xmm> x(*this, k_);
    vmovss(a, dword[rsp + kBounce]);
    for (int i = 1; i < V; ++i) {
      vmovss(b, dword[rsp + kBounce + 4 * i]);
      combine(op, lanes(r), x, a, b, s);
    }
    vbroadcastss(acc, a);
    vmovups(unit_value_at(unit_slot_[r]), acc);
    std::fill(std::begin(used_), std::end(used_), false);
  }

  void mark_results(int32_t v, std::vector<bool>& need, std::vector<bool>& from_total) const {
    if (need[v] || from_total[v] || !elem_[v]) return;
    if (reduces(s_.body[v])) {
      from_total[v] = true;
      return;
    }
    need[v] = true;
    for (int32_t a : s_.body[v].args) mark_results(a, need, from_total);
  }

  void fold_column_blocks(int64_t width, const std::vector<int32_t>& sums) {
    each_vector(width, [&](bool) {
      for (int32_t r : sums) {
        vmovups(scratch(0), stash_at(stash_slot_[r]));
        vaddps(scratch(0), scratch(0), stash_at(stash_slot_[r] + 1));
        vmovups(stash_at(stash_slot_[r]), scratch(0));
        vmovaps(scratch(0), k_(-0.0f));
        vmovups(stash_at(stash_slot_[r] + 1), scratch(0));
      }
    });
  }

  // acc = op(acc, x) in the reduction's scratch row (the block for a sum).
  void accumulate_column(int32_t r, const Vmm& x) {
    Op op = s_.body[r].op;
    int slot = stash_slot_[r] + (op == Op::Sum ? 1 : 0);
    vmovups(scratch(1), stash_at(slot));
    combine(op, lanes(r), ops_, scratch(1), x, scratch(2));
    vmovups(stash_at(slot), scratch(1));
  }

  // --- reductions -------------------------------------------------------------

  // acc = op(acc, x), a reduction's step, in lanes `l` of registers X (the
  // vector accumulators, or Xmm for the horizontal reduction).
  template <class X>
  void combine(Op op, Lanes l, VectorOps<X>& f, const X& acc, const X& x, const X& s) {
    switch (l) {
      case Lanes::Float:
        switch (op) {
          case Op::Sum: vaddps(acc, acc, x); return;
          case Op::Prod: vmulps(acc, acc, x); return;
          case Op::Max: f.maximum(acc, acc, x, s); return;
          case Op::Min: f.minimum(acc, acc, x, s); return;
          default: break;
        }
        break;
      case Lanes::Int:  // integer sums and products are int64, which has no lanes
        if (op == Op::Max) return vpmaxsd(acc, acc, x);
        if (op == Op::Min) return vpminsd(acc, acc, x);
        break;
      case Lanes::Mask:  // any, all
        if (op == Op::Max) return vorps(acc, acc, x);
        if (op == Op::Min) return vandps(acc, acc, x);
        break;
    }
    throw Unsupported("the reduction " + std::string(info(op).name) + " in " + std::string(name(widest(l))) + " lanes");
  }

  // The identity of reduction r, as the bits of a lane.
  uint32_t identity(int32_t r) const {
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
    }
    throw Unsupported("the reduction " + std::string(info(op).name));
  }

  // What an accumulator starts from: the identity, except that an empty
  // float sum is +0 (NumPy's), where -0 + nothing would leave -0.
  Xbyak::Address start_value(int32_t r) {
    int64_t n = p_.columns ? p_.reduce_length : p_.row_length;
    return k_.bits_of(s_.body[r].op == Op::Sum && n == 0 ? 0 : identity(r));
  }

  void accumulate(Pass& pass, int32_t r, const Vmm& x, bool tail) {
    Op op = s_.body[r].op;
    if (p_.columns) {
      accumulate_column(r, x);
      return;
    }
    Vmm acc = vr(pass.acc[r]);
    if (arg_reduction(r)) {
      accumulate_arg(op, acc, vr(pass.index[r]), x, tail);
      return;
    }
    if (int64_row_total(r)) {
      accumulate_int64(acc, x, lanes(s_.body[r].args[0]), tail);
      return;
    }
    Vmm v = x;
    if (tail) {  // lanes past the row contribute the identity
      v = scratch(0);
      vmovaps(v, k_.bits_of(identity(r)));
      if constexpr (kZmm) {
        vmovaps(v | k1, x);
      } else {
        vmovups(scratch(1), tail_mask());
        vblendvps(v, v, x, scratch(1));
      }
    }
    combine(op, lanes(r), ops_, acc, v, scratch(2));
  }

  // Note [Arg reductions]: best/index take x and its indices (r8 + lane)
  // where x is better.
  void accumulate_arg(Op op, const Vmm& best, const Vmm& index, const Vmm& x, bool tail) {
    const Vmm take = scratch(0), s = scratch(1);
    ops_.cmp(take, x, best, op == Op::ArgMax ? Ops::Gt : Ops::Lt);
    ops_.cmp(s, x, x, Ops::Unord);
    vorps(take, take, s);
    ops_.cmp(s, best, best, Ops::Eq);  // the best is not NaN
    vandps(take, take, s);
    if (tail) vandps(take, take, tail_mask());
    vmovq(Xbyak::Xmm(s.getIdx()), r8);
    vpbroadcastd(s, Xbyak::Xmm(s.getIdx()));
    std::array<uint32_t, 16> iota{};
    for (uint32_t i = 0; i < 16; ++i) iota[i] = i;
    vpaddd(s, s, k_.lanes(iota));
    ops_.blend(index, index, s, take);
    ops_.blend(best, best, x, take);
  }

  // The best lane of best/index: NaN first, then the better value, then
  // the lower index. Leaves the index in eax.
  void finish_arg(Op op, const Vmm& best, const Vmm& index) {
    vmovups(ptr[rsp + kBounce], best);
    vmovups(ptr[rsp + kBounce + 4 * V], index);
    const Xbyak::Xmm a(0), b(1);
    vmovss(a, dword[rsp + kBounce]);
    mov(eax, dword[rsp + kBounce + 4 * V]);
    for (int i = 1; i < V; ++i) {
      Xbyak::Label take, keep, b_nan, equal;
      vmovss(b, dword[rsp + kBounce + 4 * i]);
      mov(r9d, dword[rsp + kBounce + 4 * V + 4 * i]);
      vucomiss(b, b);
      jp(b_nan);
      vucomiss(a, a);
      jp(keep);                                   // a is NaN, b is not
      vucomiss(b, a);
      je(equal);
      if (op == Op::ArgMax) ja(take);
      else jb(take);
      jmp(keep);
      L(b_nan);
      vucomiss(a, a);
      jnp(take);                                  // b is NaN, a is not
      L(equal);
      cmp(r9d, eax);
      jl(take);
      jmp(keep);
      L(take);
      vmovaps(a, b);
      mov(eax, r9d);
      L(keep);
    }
  }

  // Note [Blocked sums]: a row's sum accumulates kSumBlock elements per lane
  // block into one register, then adds the block into the row total, so
  // rounding error grows with L / kSumBlock + kSumBlock / V instead of L / V.
  void flush_sums(Pass& pass) {
    if (pass.total.empty()) return;
    Xbyak::Label skip;
    test(r8, static_cast<int>(kSumBlock - 1));
    jnz(skip, T_NEAR);
    for (auto [r, total] : pass.total) {
      vaddps(vr(total), vr(total), vr(pass.acc[r]));
      vmovaps(vr(pass.acc[r]), k_(-0.0f));
    }
    L(skip);
  }

  // Horizontal reduction of the accumulator; the result, broadcast, is the
  // reduce op's row constant.
  // Note [Integer sums]: acc (int64 lanes) += the int32 lanes of x.
  void accumulate_int64(const Vmm& acc, const Vmm& x, Lanes l, bool tail) {
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

  void finish_reduction(Pass& pass, int32_t r) {
    Op op = s_.body[r].op;
    int acc = pass.acc[r];
    if (arg_reduction(r)) {  // the index, as an int64, broadcast
      finish_arg(op, vr(acc), vr(pass.index[r]));
      release(pass.index[r]);
      movsxd(rax, eax);
      vmovq(Xbyak::Xmm(0), rax);
      vpbroadcastq(vr(acc), Xbyak::Xmm(0));
      const_reg_[r] = acc;
      return;
    }
    if (int64_row_total(r)) {  // the row's int64 total, broadcast
      vmovups(ptr[rsp + kBounce], vr(acc));
      mov(rax, qword[rsp + kBounce]);
      for (int i = 1; i < V / 2; ++i) add(rax, qword[rsp + kBounce + 8 * i]);
      vmovq(Xbyak::Xmm(0), rax);
      vpbroadcastq(vr(acc), Xbyak::Xmm(0));
      const_reg_[r] = acc;
      return;
    }
    if (pass.total.count(r)) {
      vaddps(vr(acc), vr(acc), vr(pass.total[r]));
      release(pass.total[r]);
    }
    vmovups(ptr[rsp + kBounce], vr(acc));
    Xbyak::Xmm a(0), b(1), s(2);
    VectorOps<Xbyak::Xmm> x(*this, k_);
    vmovss(a, dword[rsp + kBounce]);
    for (int i = 1; i < V; ++i) {
      vmovss(b, dword[rsp + kBounce + 4 * i]);
      combine(op, lanes(r), x, a, b, s);
    }
    vbroadcastss(vr(acc), a);
    const_reg_[r] = acc;
  }

  // --- loads and stores -------------------------------------------------------

  Xbyak::Address tail_mask() {
    std::array<uint32_t, 16> m{};
    for (int64_t i = 0; i < width_ % V; ++i) m[i] = 0xffffffffu;
    return k_.lanes(m);
  }

  // A bool loaded as 0/1 integers becomes a lane mask.
  void int_to_mask(const Vmm& v) { ints_.nonzero(v, v, scratch(4)); }

  void load_element(int32_t k, const Vmm& dst, bool tail) {
    const KernelInput& in = s_.inputs[k];
    const int64_t stride = p_.inputs[k].inner_stride;
    if (from_tile_ && tile_of_[k] >= 0) {
      vmovups(dst, ptr[rsp + tile_slot_ + ((tile_of_[k] * G + group_row_) * W + tile_column_) * 4]);
      return;
    }
    input_base(k);
    if (in.kind == KernelInput::Kind::Arange) {  // start + i * step, i the element's index
      imul(r9, r8, static_cast<int>(stride));
      add(rax, r9);
      vmovq(Xbyak::Xmm(0), rax);
      vpbroadcastd(dst, Xbyak::Xmm(0));
      std::array<uint32_t, 16> lanes{};
      for (int i = 0; i < 16; ++i) lanes[i] = static_cast<uint32_t>(i * stride);
      vpaddd(dst, dst, k_.lanes(lanes));
      mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
      vpbroadcastd(scratch(0), dword[r10 + 8 * k + 4]);
      vpbroadcastd(scratch(1), dword[r10 + 8 * k]);
      if (lanes_of(in.dtype) == Lanes::Int) {  // int32 arithmetic wraps as the reference's int64 does, mod 2^32
        vpmulld(dst, dst, scratch(0));
        vpaddd(dst, dst, scratch(1));
        ints_.wrap(dst, dst, DType::Int32, in.dtype);
        return;
      }
      vcvtdq2ps(dst, dst);
      vfmadd213ps(dst, scratch(0), scratch(1));
      return;
    }
    const int size = static_cast<int>(itemsize(in.dtype));
    Xbyak::RegExp at = rax + r8 * size;
    if (stride != 1 && size != 4) {
      // No gathers of 8- and 16-bit elements (a 32-bit gather would read
      // past the buffer's end): the lanes are copied one by one into the
      // bounce area and loaded from there as a contiguous vector.
      imul(r9, r8, static_cast<int>(stride * size));
      add(rax, r9);
      bounce_strided(size, stride * size, tail ? static_cast<int>(width_ % V) : V);
      at = rsp + kBounce;
      tail = false;
    } else if (stride != 1) {  // a gather of 32-bit elements
      std::array<uint32_t, 16> lanes{};
      for (int i = 0; i < 16; ++i) lanes[i] = static_cast<uint32_t>(i * stride);
      imul(r9, r8, static_cast<int>(stride * size));
      add(rax, r9);
      vmovups(scratch(3), k_.lanes(lanes));
      vxorps(dst, dst, dst);
      if constexpr (kZmm) {
        if (tail) kmovw(k3, k1);
        else kxnorw(k3, k3, k3);
        vgatherdps(dst | k3, ptr[rax + scratch(3) * 4]);
      } else {
        if (tail) vmovups(scratch(4), tail_mask());
        else vpcmpeqd(scratch(4), scratch(4), scratch(4));
        vgatherdps(dst, ptr[rax + scratch(3) * 4], scratch(4));
      }
      return;
    }
    if (tail && !kZmm) {
      if (size == 4) {
        vmovups(scratch(4), tail_mask());
        vmaskmovps(dst, scratch(4), ptr[at]);
        return;
      }
      bounce_in(size);  // the partial vector, copied to the stack
      at = rsp + kBounce;
      tail = false;
    }
    // An AVX-512 tail loads under k1, zeroing the lanes past the row; any
    // other load is whole (an AVX2 tail was bounced to the stack above).
    auto load = [&](auto&& emit) {
      if constexpr (kZmm) {
        if (tail) return emit(dst | k1 | T_z);
      }
      emit(dst);
    };
    const Xbyak::Address from = ptr[at];
    switch (in.dtype) {
      case DType::Float32:
      case DType::Int32: load([&](const Vmm& d) { vmovups(d, from); }); break;
      case DType::Int8: load([&](const Vmm& d) { vpmovsxbd(d, from); }); break;
      case DType::UInt8: load([&](const Vmm& d) { vpmovzxbd(d, from); }); break;
      case DType::Float16: load([&](const Vmm& d) { vcvtph2ps(d, from); }); break;
      case DType::BFloat16:
        load([&](const Vmm& d) { vpmovzxwd(d, from); });
        vpslld(dst, dst, 16);
        break;
      case DType::Bool:
        load([&](const Vmm& d) { vpmovzxbd(d, from); });
        int_to_mask(dst);
        break;
      default: throw Unsupported("loads of " + std::string(name(in.dtype)));
    }
  }

  // Copies the row's last partial vector (elements r8 .. L) of `size`-byte
  // elements at rax into the zeroed bounce area (AVX2 has no masked loads of
  // 8- and 16-bit elements).
  void bounce_in(int size) {
    vxorps(Xbyak::Ymm(0), Xbyak::Ymm(0), Xbyak::Ymm(0));
    vmovups(ptr[rsp + kBounce], Xbyak::Ymm(0));
    for (int i = 0; i < width_ % V; ++i) {
      if (size == 2) {
        movzx(r9d, word[rax + r8 * 2 + 2 * i]);
        mov(word[rsp + kBounce + 2 * i], r9w);
      } else {
        movzx(r9d, byte[rax + r8 + i]);
        mov(byte[rsp + kBounce + i], r9b);
      }
    }
  }

  // Copies `n` elements of `size` bytes, `step` bytes apart from rax on,
  // into the zeroed bounce area.
  void bounce_strided(int size, int64_t step, int n) {
    vxorps(Xbyak::Ymm(0), Xbyak::Ymm(0), Xbyak::Ymm(0));
    vmovups(ptr[rsp + kBounce], Xbyak::Ymm(0));
    for (int i = 0; i < n; ++i) {
      if (size == 2) {
        movzx(r9d, word[rax + static_cast<int>(i * step)]);
        mov(word[rsp + kBounce + 2 * i], r9w);
      } else {
        movzx(r9d, byte[rax + static_cast<int>(i * step)]);
        mov(byte[rsp + kBounce + i], r9b);
      }
    }
  }

  void bounce_out(int size) {  // the partial vector at the bounce area to r8.. at rax
    for (int i = 0; i < width_ % V; ++i) {
      if (size == 2) {
        movzx(r9d, word[rsp + kBounce + 2 * i]);
        mov(word[rax + r8 * 2 + 2 * i], r9w);
      } else {
        movzx(r9d, byte[rsp + kBounce + i]);
        mov(byte[rax + r8 + i], r9b);
      }
    }
  }

  void load_constant(int32_t k, const Vmm& dst) {
    const KernelInput& in = s_.inputs[k];
    Xbyak::Xmm x0(0);
    switch (in.kind) {
      case KernelInput::Kind::Scalar:  // passed as its lane (LaunchArgs)
        mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
        vbroadcastss(dst, dword[r10 + 8 * k]);
        return;
      case KernelInput::Kind::Arange:
        input_base(k);
        mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
        if (lanes_of(in.dtype) == Lanes::Int) {
          imul(eax, dword[r10 + 8 * k + 4]);
          add(eax, dword[r10 + 8 * k]);
          vmovd(x0, eax);
          vpbroadcastd(dst, x0);
          ints_.wrap(dst, dst, DType::Int32, in.dtype);
          return;
        }
        vcvtsi2ss(x0, x0, rax);
        vmulss(x0, x0, dword[r10 + 8 * k + 4]);
        vaddss(x0, x0, dword[r10 + 8 * k]);
        vbroadcastss(dst, x0);
        return;
      case KernelInput::Kind::Buffer: break;
    }
    input_base(k);
    switch (in.dtype) {
      case DType::Float32:
      case DType::Int32: vbroadcastss(dst, dword[rax]); return;
      case DType::Int8:
      case DType::UInt8:
        if (in.dtype == DType::Int8) movsx(r9d, byte[rax]);
        else movzx(r9d, byte[rax]);
        vmovd(x0, r9d);
        vpbroadcastd(dst, x0);
        return;
      case DType::Float16:
        movzx(r9d, word[rax]);
        vmovd(x0, r9d);
        vcvtph2ps(x0, x0);
        vbroadcastss(dst, x0);
        return;
      case DType::BFloat16:
        movzx(r9d, word[rax]);
        shl(r9d, 16);
        vmovd(x0, r9d);
        vbroadcastss(dst, x0);
        return;
      case DType::Bool:
        movzx(r9d, byte[rax]);
        vmovd(x0, r9d);
        vpbroadcastd(dst, x0);
        int_to_mask(dst);
        return;
      default: throw Unsupported("loads of " + std::string(name(in.dtype)));
    }
  }

  // float32 lanes to bfloat16 bits in the low half of each 32-bit lane,
  // rounding to nearest even; NaN stays a quiet NaN.
  void to_bf16_bits(const Vmm& dst, const Vmm& x) {
    vpsrld(scratch(1), x, 16);
    vandps(scratch(1), scratch(1), k_.bits_of(1));
    vpaddd(scratch(1), scratch(1), k_.bits_of(0x7fff));
    vpaddd(dst, x, scratch(1));
    vpsrld(dst, dst, 16);
    ops_.cmp(scratch(1), x, x, Ops::Unord);
    vmovaps(scratch(2), k_.bits_of(0x7fc0));
    ops_.blend(dst, dst, scratch(2), scratch(1));
  }

  void store_element(size_t k, const Vmm& x, bool tail) {
    const KernelOutput& o = s_.outputs[k];
    const int size = static_cast<int>(itemsize(o.dtype));
    output_base(k);
    Xbyak::Address at = ptr[rax + r8 * size];
    if constexpr (kZmm) {
      const Xbyak::Ymm y0(0);
      switch (o.dtype) {
        case DType::Float32:
        case DType::Int32:
          if (tail) vmovups(at | k1, x);
          else if (stream_) vmovntps(at, x);
          else vmovups(at, x);
          return;
        case DType::Int8:
        case DType::UInt8: tail ? vpmovdb(at | k1, x) : vpmovdb(at, x); return;  // in range: truncation is exact
        case DType::Float16: tail ? vcvtps2ph(at | k1, x, 0) : vcvtps2ph(at, x, 0); return;
        case DType::BFloat16:
          to_bf16_bits(scratch(0), x);
          tail ? vpmovdw(at | k1, scratch(0)) : vpmovdw(at, scratch(0));
          return;
        case DType::Bool:
          vpsrld(scratch(0), x, 31);
          tail ? vpmovdb(at | k1, scratch(0)) : vpmovdb(at, scratch(0));
          return;
        default: break;
      }
      (void)y0;
    } else {
      const Xbyak::Xmm x0(0), x1(1), xl(x.getIdx());
      switch (o.dtype) {
        case DType::Float32:
        case DType::Int32:
          if (tail) {
            vmovups(scratch(4), tail_mask());
            vmaskmovps(at, scratch(4), x);
          } else if (stream_) {
            vmovntps(at, x);
          } else {
            vmovups(at, x);
          }
          return;
        case DType::Float16: vcvtps2ph(x0, x, 0); break;
        case DType::BFloat16:
          to_bf16_bits(scratch(0), x);
          vextracti128(x1, scratch(0), 1);
          vpackusdw(x0, x0, x1);
          break;
        case DType::Bool:
          vpsrld(scratch(0), x, 31);
          vextracti128(x1, scratch(0), 1);
          vpackusdw(x0, x0, x1);
          vpackuswb(x0, x0, x0);
          break;
        case DType::Int8:  // in range: the saturating packs are exact
          vextracti128(x1, x, 1);
          vpackssdw(x0, xl, x1);
          vpacksswb(x0, x0, x0);
          break;
        case DType::UInt8:
          vextracti128(x1, x, 1);
          vpackusdw(x0, xl, x1);
          vpackuswb(x0, x0, x0);
          break;
        default: throw Unsupported("stores of " + std::string(name(o.dtype)));
      }
      if (!tail) {
        if (size == 2) vmovdqu(at, x0);
        else vmovq(at, x0);
        return;
      }
      vmovdqu(ptr[rsp + kBounce], x0);
      bounce_out(size);
      return;
    }
    throw Unsupported("stores of " + std::string(name(o.dtype)));
  }

  void store_scalar(size_t k, const Vmm& x) {
    const KernelOutput& o = s_.outputs[k];
    mov(rax, qword[rsp + out_slot_ + 8 * static_cast<int>(k)]);
    Xbyak::Xmm x0(0), xv(x.getIdx());
    switch (o.dtype) {
      case DType::Float32:
      case DType::Int32: vmovss(dword[rax], xv); return;
      case DType::Int64: vmovq(qword[rax], xv); return;  // Note [Integer sums]
      case DType::Int8:
      case DType::UInt8:
        vmovd(r9d, xv);
        mov(byte[rax], r9b);
        return;
      case DType::Float16:
        vcvtps2ph(x0, xv, 0);
        vpextrw(word[rax], x0, 0);
        return;
      case DType::BFloat16:
        vmovd(r9d, xv);
        mov(r10d, r9d);
        shr(r10d, 16);
        and_(r10d, 1);
        add(r9d, 0x7fff);
        add(r9d, r10d);
        shr(r9d, 16);
        mov(word[rax], r9w);
        return;
      case DType::Bool:
        vmovd(r9d, xv);
        shr(r9d, 31);
        mov(byte[rax], r9b);
        return;
      default: throw Unsupported("stores of " + std::string(name(o.dtype)));
    }
  }

  // --- element-wise ops -------------------------------------------------------

  // d = op(args), arg(v) the register of value v (Note [Lanes]): the
  // arguments are brought to the lanes the op computes in, the op is
  // emitted for those lanes, and its result fitted to its dtype.
  template <class Arg>
  void compute(const KernelOp& op, const Vmm& d, Arg arg) {
    auto dtype = [&](size_t i) { return s_.body[op.args[i]].dtype; };
    switch (op.op) {  // ops that read their arguments in whatever lanes they are
      case Op::Copy: vmovaps(d, arg(op.args[0])); return;
      case Op::Cast: convert(d, arg(op.args[0]), dtype(0), op.dtype); return;
      case Op::LogicalAnd:
        vandps(d, truth(arg(op.args[0]), dtype(0), scratch(0)), truth(arg(op.args[1]), dtype(1), scratch(1)));
        return;
      case Op::LogicalOr:
        vorps(d, truth(arg(op.args[0]), dtype(0), scratch(0)), truth(arg(op.args[1]), dtype(1), scratch(1)));
        return;
      case Op::LogicalNot: vxorps(d, truth(arg(op.args[0]), dtype(0), scratch(0)), k_.bits_of(0xffffffff)); return;
      case Op::Sin:
      case Op::Cos:  // of integers: from the exact int32, not its float32 rounding
        if (*lanes_of(dtype(0)) != Lanes::Int || *lanes_of(op.dtype) != Lanes::Float) break;
        math_.sin_cos_of_int(d, arg(op.args[0]), {scratch(0), scratch(1), scratch(2), scratch(3), scratch(4)},
                             /*cos=*/op.op == Op::Cos);
        return;
      default: break;
    }
    // Where picks between its branches in the result's lanes; any other
    // op computes in those of its compute dtype.
    const bool where = op.op == Op::Where;
    const Lanes in = where ? *lanes_of(op.dtype) : compute_lanes(compute_dtype_of(op));
    std::array<Vmm, 3> args;
    std::vector<int> converted;  // registers of their own: an op's emitter clobbers the scratch registers
    for (size_t i = 0; i < op.args.size(); ++i) {
      args[i] = arg(op.args[i]);
      if (where && i == 0) {
        args[i] = truth(args[i], dtype(i), scratch(0));
      } else if (*lanes_of(dtype(i)) != in) {
        converted.push_back(alloc());
        convert(vr(converted.back()), args[i], dtype(i), widest(in));
        args[i] = vr(converted.back());
      }
    }
    if (where) ops_.blend(d, args[2], args[1], args[0]);
    else if (in == Lanes::Int) compute_int(op, d, args[0], args[1]);
    else compute_float(op, d, args[0], args[1]);
    for (int r : converted) release(r);
    DTypeRule rule = info(op.op).dtype_rule;
    bool masks = !where && (rule == DTypeRule::Compare || rule == DTypeRule::ToBool);
    fit(d, masks ? Lanes::Mask : in, op.dtype);
  }

  // An op's result, computed in lanes `out`, in the lanes and range of its
  // dtype: bools computed as integers become masks, 8-bit integers wrap.
  // Float results keep all of float32 (Note [Lanes]).
  void fit(const Vmm& d, Lanes out, DType t) {
    Lanes want = *lanes_of(t);
    if (want == Lanes::Mask && out == Lanes::Int) ints_.nonzero(d, d, scratch(0));
    else if (want == Lanes::Int) ints_.wrap(d, d, DType::Int32, t);
  }

  void compute_int(const KernelOp& op, const Vmm& d, const Vmm& a, const Vmm& b) {
    const Vmm s0 = scratch(0), s1 = scratch(1), s2 = scratch(2), s3 = scratch(3);
    using I = IntOps<Vmm>;
    switch (op.op) {
      case Op::Add: vpaddd(d, a, b); return;
      case Op::Sub: vpsubd(d, a, b); return;
      case Op::Mul: vpmulld(d, a, b); return;
      case Op::Mod: ints_.mod(d, a, b, s0, s1, s2, s3); return;
      case Op::Pow: ints_.pow(d, a, b, s0, s1, s2, s3); return;
      case Op::Maximum: vpmaxsd(d, a, b); return;
      case Op::Minimum: vpminsd(d, a, b); return;
      case Op::Eq: ints_.cmp(d, a, b, I::Eq); return;
      case Op::Ne: ints_.cmp(d, a, b, I::Ne); return;
      case Op::Lt: ints_.cmp(d, a, b, I::Lt); return;
      case Op::Le: ints_.cmp(d, a, b, I::Le); return;
      case Op::Gt: ints_.cmp(d, a, b, I::Gt); return;
      case Op::Ge: ints_.cmp(d, a, b, I::Ge); return;
      case Op::Neg:
        vxorps(s0, s0, s0);
        vpsubd(d, s0, a);
        return;
      case Op::Abs: vpabsd(d, a); return;  // abs(INT32_MIN) wraps to itself, as the reference's
      case Op::Sign: ints_.sign(d, a); return;
      case Op::Square: vpmulld(d, a, a); return;
      case Op::Relu:
        vxorps(s0, s0, s0);
        vpmaxsd(d, a, s0);
        return;
      case Op::Floor:
      case Op::Ceil:
      case Op::Round: vmovaps(d, a); return;  // integers are whole
      case Op::IsNan:
      case Op::IsInf: vxorps(d, d, d); return;
      case Op::Max:
      case Op::Min:  // over no axes, or over size-1 axes only: the value itself
        if (s_.body[op.args[0]].dtype != op.dtype) throw Unsupported("a reduction that changes dtype");
        vmovaps(d, a);
        return;
      default: break;
    }
    throw Unsupported("the op " + std::string(info(op.op).name) + " on integers");
  }

  void compute_float(const KernelOp& op, const Vmm& d, const Vmm& x, const Vmm& y) {
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
      case Op::Pow: math_.pow(d, a(), b(), math_scratch); return;
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
      case Op::IsInf:
        vandps(s0, a(), k_.bits_of(0x7fffffff));
        ops_.cmp(d, s0, k_(INFINITY), Ops::Eq);
        return;
      case Op::Sum:
      case Op::Prod:
      case Op::Max:
      case Op::Min:
        // Over no axes, or over size-1 axes only: the value itself.
        if (s_.body[op.args[0]].dtype != op.dtype) throw Unsupported("a reduction that changes dtype");
        vmovaps(d, a());
        return;
      default: break;
    }
    throw Unsupported("the op " + std::string(info(op.op).name));
  }

  // x, of dtype t, as a lane mask of its truth: a bool already is one; a
  // number is true when nonzero (NaN too). By value: `s` is often a
  // temporary (scratch(i)) that dies before a returned reference is used.
  Vmm truth(const Vmm& x, DType t, const Vmm& s) {
    switch (*lanes_of(t)) {
      case Lanes::Mask: return x;
      case Lanes::Int: ints_.nonzero(s, x, s); return s;
      case Lanes::Float: ops_.cmp(s, x, k_(0.0f), Ops::Ne); return s;
    }
    return x;
  }

  // d = x, a value of dtype `from`, cast to dtype `to` as the reference
  // casts (graph/array.h: floats truncate toward zero through int64,
  // integers wrap, halves round to nearest even). d must not be x.
  void convert(const Vmm& d, const Vmm& x, DType from, DType to) {
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
  void round_float(const Vmm& d, const Vmm& x, DType t) {
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

  const KernelSpec& s_;
  const RowPlan& p_;
  ConstantPool k_;
  Ops ops_;
  VectorMath<Vmm> math_;
  IntOps<Vmm> ints_;
  std::vector<bool> elem_;
  std::vector<int> stage_;
  std::vector<int> const_reg_;
  bool used_[32] = {};
  int passes_ = 0;
  std::vector<Pass> passes_plan_;
  std::vector<int> last_point_;
  int in_slot_ = 0, out_slot_ = 0, tile_slot_ = 0, frame_ = 0;
  std::vector<int> unit_slot_;   // column plans reduced along the row: per reduction, its value's scratch row
  std::vector<int> stash_slot_;  // Note [Stashed values]: per value, its scratch row or -1
  int stashes_ = 0, max_stashes_ = 0;
  int64_t width_ = p_.row_length;  // elements of the row a pass covers (a tile's, for a column plan)
  int count_slot_ = 0;             // column plans: rows of R done
  bool stash_ok_ = true;
  bool stream_ = false;  // Note [Streaming stores]
  // Note [Tiled transposes]: per input its tile (or -1), the number of
  // tiles, and while a group is emitted the row within it and whether the
  // tiled inputs are read from their tiles.
  std::vector<int> tile_of_;
  int tiles_ = 0;
  int group_row_ = 0;
  int tile_column_ = 0;
  bool from_tile_ = false;
};

template <class Vmm>
class GeneratedKernel final : public CompiledKernel {
 public:
  GeneratedKernel(RowPlan plan, const KernelSpec& spec) : CompiledKernel(std::move(plan)), gen_(spec, plan_) {
    gen_.generate();
    streaming_stores_ = gen_.streams();
    scratch_floats_ = gen_.stash_floats();
  }
  KernelFn fn() const override { return gen_.template getCode<KernelFn>(); }
  const uint8_t* code() const override { return gen_.getCode(); }
  size_t code_size() const override { return gen_.getSize(); }
  size_t text_size() const override { return gen_.text_size(); }

 private:
  RowKernelGen<Vmm> gen_;
};

}  // namespace

std::unique_ptr<CompiledKernel> compile(const KernelSpec& spec, Isa isa, std::string& why) {
  std::optional<RowPlan> plan = plan_rows(spec, why);
  if (!plan) return nullptr;
  try {
    if (isa == Isa::Avx512) return std::make_unique<GeneratedKernel<Xbyak::Zmm>>(std::move(*plan), spec);
    return std::make_unique<GeneratedKernel<Xbyak::Ymm>>(std::move(*plan), spec);
  } catch (const Unsupported& e) {
    why = std::string("the CPU code generator does not emit ") + e.what() + " yet";
    return nullptr;
  } catch (const Xbyak::Error& e) {
    why = std::string("xbyak: ") + e.what();
    return nullptr;
  }
}

}  // namespace braze::jit
