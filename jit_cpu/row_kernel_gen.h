// The row-kernel generator (Note [Row kernels] in row_plan.h), one class
// template over the register type: Zmm (AVX-512, 16 lanes, k-mask tails) or
// Ymm (AVX2, 8 lanes, vmaskmov or a stack bounce for tails). Its member
// functions are defined by topic in the gen_*.cpp files, each of which
// instantiates them for both; jit_cpu/README.md lists where each Note lives.
//
// Per row, the body runs in passes over the row. Every value is either
// per-element (it varies along the row) or a row constant (a Reduced value,
// a scalar, a broadcast input). A reduction consumes a per-element value in
// one pass and yields a row constant after it, so softmax is three passes
// over a row that stays in cache: max, then sum of exp(x - max), then the
// stores of exp(x - max) / sum. stage(v) is the number of passes that must
// finish before v is known; pass p computes what the reductions and stores
// of stage p need.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

#include "jit_cpu/int_ops.h"
#include "jit_cpu/kernel.h"
#include "jit_cpu/lanes.h"
#include "jit_cpu/long_ops.h"
#include "jit_cpu/vector_math.h"
#include "jit_cpu/vector_math_f64.h"
#include "jit_cpu/vector_ops.h"

namespace braze::jit::detail {

// A spec the generator cannot emit yet; compile() returns null with the reason.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Note [Constants in memory]: the registers ran out; compile() tries again
// with the row constants kept on the stack and per-element values spilled
// (Note [Spilled values]).
struct OutOfRegisters : Unsupported {
  OutOfRegisters() : Unsupported("more live values than vector registers") {}
};

inline bool fits_int32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

template <class Vmm>
class RowKernelGen : public Xbyak::CodeGenerator {
  using Ops = VectorOps<Vmm>;
  static constexpr bool kZmm = Ops::kZmm;
  static constexpr int kNumRegs = kZmm ? 32 : 16;
  static constexpr int kScratch = 5;              // v0..v4: temporaries inside one op
  // Note [Constants in memory]
  // A row constant (a scalar, a broadcast input, a reduction's result)
  // holds a register while any pass reads it, so a kernel with many of
  // them (nine scalars and a pow on AVX2, which has 11 registers beside
  // the scratch ones) can run out. Such a kernel is generated again with
  // every row constant stored to a stack slot of its own once computed,
  // and loaded into a register for each op that reads it: a load from L1
  // per use, paid only by the kernels that need it. The same slots hold
  // the per-element values spilled in that try (Note [Spilled values]):
  // a value is a row constant or per-element, never both.
  const bool constants_in_memory_;
  static constexpr int kInMemory = -3;  // const_reg_ of a constant in its slot
  // Note [Wide kernels] (lanes.h): whether lanes are 64-bit, and so the
  // lanes per register (16 or 8 of 32 bits, 8 or 4 of 64) and their bytes.
  const bool wide_;
  const int V;
  const int eb_;
  const int64_t kSumBlock = 16 * V;               // Note [Blocked sums]
  static constexpr int G = 64;                    // Note [Tiled transposes]: rows per group
  static constexpr int kTileAhead = 2;            // blocks of a tiled input prefetched ahead
  static constexpr int W = 16;                    // and columns per block: a cache line of floats
  static constexpr int kTileBytes = 32 << 10;     // Note [Tile chunks]: the stack the tiles may take

  // Stack frame.
  static constexpr int kBounce = 0;     // 128 bytes: tails and horizontal reductions
  static constexpr int kScratchPtr = 128;  // the launch's per-thread scratch (Note [Stashed values])
  static constexpr int kCallerRsp = 136;   // rsp at entry (Note [Aligned frame])
  static constexpr int kIndex = 144;    // outer multi-index

 public:
  RowKernelGen(const KernelSpec& spec, const RowPlan& plan, bool constants_in_memory = false)
      : CodeGenerator(4096, Xbyak::AutoGrow),
        constants_in_memory_(constants_in_memory),
        wide_(is_wide(spec, plan)),
        V((kZmm ? 16 : 8) / (wide_ ? 2 : 1)),
        eb_(wide_ ? 8 : 4),
        s_(spec),
        p_(plan),
        k_(*this),
        ops_(*this, k_),
        math_(*this, k_, ops_),
        ints_(*this, k_, ops_),
        longs_(*this, k_, ops_),
        math64_(*this, k_, ops_) {}

  bool streams() const { return stream_; }
  bool wide() const { return wide_; }  // Note [Wide kernels]
  // Bytes of instructions; the constant pool follows them.
  size_t text_size() const { return k_.code_size(); }
  // Floats of per-thread scratch a launch must pass (Note [Stashed values]).
  int64_t stash_floats() const { return static_cast<int64_t>(max_stashes_) * stash_row_bytes() / 4; }
  // Note [Split columns]: bytes of one unit-part's totals (a stash row per reduction).
  int64_t partial_bytes() const {
    return p_.column_parts > 1 ? static_cast<int64_t>(column_reductions().size()) * stash_row_bytes() : 0;
  }

  // Note [Tiled transposes]: the rows of a group, where tiles are read
  // (a pair plan's rows are its units).
  int64_t row_grain() const { return tiles_ > 0 && p_.pair_blocks == 0 ? G : 1; }

  // Note [Wide kernels]: a spec with a float64 or int64 input or value,
  // other than the int64 row totals of 32-bit kernels (Note [Integer sums]).
  static bool is_wide(const KernelSpec& spec, const RowPlan& plan);

  void generate();

 private:
  // --- analysis: gen_analysis.cpp --------------------------------------------

  void check_supported();
  void check_wide();

  // Note [Lanes]: the kind of lanes a value of dtype t, or value v, is
  // held in, and those an op computes in, given its compute dtype.
  Lanes lanes_for(DType t) const { return wide_ ? wide_lanes_of(t) : *lanes_of(t); }
  Lanes lanes(int32_t v) const { return lanes_for(s_.body[v].dtype); }
  Lanes op_lanes(DType compute) const { return compute_lanes(compute, wide_); }
  Width width() const { return wide_ ? Width::k64 : Width::k32; }

  DType compute_dtype_of(const KernelOp& op) const;
  bool reduces(const KernelOp& op) const;
  void analyse();

  bool stored_per_element(const KernelOutput& o) const { return o.space == Space::Full || !p_.reduces; }

  void decide_streaming();

  // --- registers ------------------------------------------------------------

  int alloc() {
    for (int r = kScratch; r < kNumRegs; ++r)
      if (!used_[r]) {
        used_[r] = true;
        return r;
      }
    if (body_ != nullptr && constants_in_memory_) return spill();  // Note [Spilled values]
    throw OutOfRegisters();
  }
  void release(int r) { used_[r] = false; }
  static Vmm vr(int r) { return Vmm(r); }
  static Vmm scratch(int i) { return Vmm(i); }

  // --- per row: gen_rows.cpp -------------------------------------------------

  int64_t itemsize_of(DType t) const { return static_cast<int64_t>(itemsize(t)); }

  void enter_frame(int bytes);
  void leave_frame();
  void row_loop();
  void row_pointers();
  void input_pointers();
  void output_pointer(size_t k);
  void units_before(size_t axes);
  void tile_start(int64_t tile, size_t axis);
  void set_tail_mask();
  void tiled_row_body();
  void next_row(int step);
  void row_body();
  void plan_passes();
  void release_constants(int point);
  void row_constants(int st);
  void compute_constant(int32_t v);
  void keep_constant(int32_t v, int reg);
  // Row constant v's register, loaded from its slot into a register added
  // to `loaded` when it is in memory (Note [Constants in memory]).
  Vmm constant(int32_t v, std::vector<int>& loaded) {
    if (const_reg_[v] != kInMemory) return vr(const_reg_[v]);
    loaded.push_back(alloc());
    vmovups(vr(loaded.back()), constant_at(v));
    return vr(loaded.back());
  }
  // A per-element value of the body being emitted: in its register, or
  // loaded from its slot into one added to `loaded` (Note [Spilled values]).
  Vmm element(int32_t v, std::vector<int>& loaded) {
    if (auto it = body_->reg.find(v); it != body_->reg.end()) return vr(it->second);
    loaded.push_back(alloc());
    vmovups(vr(loaded.back()), constant_at(v));
    return vr(loaded.back());
  }
  void release_all(std::vector<int>& regs) {
    for (int r : regs) release(r);
    regs.clear();
  }
  Xbyak::Address constant_at(int32_t v) { return ptr[rsp + const_slot_ + v * V * eb_]; }
  // Bytes of the frame the slots of Note [Constants in memory] take.
  int constant_slot_bytes() const { return constants_in_memory_ ? static_cast<int>(s_.body.size()) * V * eb_ : 0; }

  // --- one pass over the row: gen_passes.cpp ---------------------------------

  static constexpr int64_t kMaxStashBytes = 256 << 10;  // Note [Stashed values]

  struct Pass {
    std::vector<int32_t> values;     // per-element values computed, in body order
    std::vector<int32_t> from_stash; // per-element values an earlier pass computed
    std::vector<int32_t> reductions; // reduce ops fed in this pass
    std::vector<size_t> stores;      // outputs stored in this pass
    std::map<int32_t, int> acc;      // reduce op -> accumulator register
    std::map<int32_t, int> total;    // Sum: the row total beside the block accumulator, or kInMemory
    std::map<int32_t, int> index;    // argmax/argmin: each lane's best index
    std::map<int32_t, std::vector<int>> spread;  // Note [Interleaved accumulators]: acc's siblings
  };

  Pass make_pass(int p, const std::vector<bool>& computed) const;
  void loop_pass(Pass pass, bool prefetch_next_row);
  int interleave(Pass& pass);
  void vector_loop(Pass& pass, int unroll, bool prefetch_next_row);
  void gather_accumulators(Pass& pass);

  void L_(Xbyak::Label& l) { L(l); }

  void prefetch_row_ahead();
  void mark(int32_t v, std::vector<bool>& need, const std::vector<bool>& computed, std::vector<bool>& stashed) const;
  Xbyak::Address stash_at(int slot);
  int stash_row_bytes() const;
  void pass_body(Pass& pass, bool tail);

  // Note [Spilled values]: the registers of the pass body being emitted,
  // so that alloc() can spill in the try with constants in memory.
  struct BodyRegisters {
    const Pass& pass;
    std::map<int32_t, int> reg{};  // per-element value -> its register, while it has one
    size_t at = 0;               // the op of pass.values being emitted
    std::vector<int32_t> pinned{};  // the values it reads: never spilled under it
  };
  BodyRegisters* body_ = nullptr;
  int spill();
  size_t next_use(int32_t v) const;

  // --- transposed inputs, V rows at a time: gen_tiles.cpp --------------------

  void decide_tiling();
  void decide_tiles();
  void pair_loop();
  void pair_ahead(bool second_block);
  void group_body();
  void tile_chunk();
  void tile_row(int a);
  void tail_row(int a);
  void row_of_group(int a);
  void fill_tiles();
  void tile_load(DType t, const Xbyak::Xmm& x, const Xbyak::Address& at);
  void tile_finish(DType t, const Vmm& v);
  void fill_wide_tile(DType t, int stride, int tile);
  void wide_tile_load(DType t, const Xbyak::Ymm& y, const Xbyak::Address& at);
  void prefetch_pointers(const Xbyak::Address& group);
  void row_prefetch(int a);
  // Note [Tile pairs]: elements from one memory run of an access to the next.
  int64_t run_step(size_t k) const { return p_.inputs[k].inner_stride == 1 ? p_.inputs[k].outer_strides[0] : p_.inputs[k].inner_stride; }
  // Note [Tile chunks]: the chunk's first column, its end, and the tiles' base
  // less 4 bytes a column before it (so that a tile row reads at r8 like a row).
  Xbyak::Address chunk_word(int i) { return qword[rsp + chunk_slot_ + 8 * i]; }
  // Word i of the pair walk's frame: kPairSlots of the walk, then per input
  // the block's and then the group's prefetch words.
  Xbyak::Address pair_word(int i) { return qword[rsp + pair_slot_ + 8 * i]; }
  void input_base(int32_t k);
  void output_base(size_t k);

  // --- column reductions (Note [Column reductions]): gen_columns.cpp ---------

  // Per reduction, its scratch rows: the running total (2i) and, for a sum,
  // the current block (2i + 1) of kColumnBlock rows (row_plan.h).

  std::vector<int32_t> column_reductions() const;
  int column_passes() const;

  // body(tail) per vector of a row of `width` at element r8: the whole
  // vectors, then the partial one.
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
  void generate_columns();
  void column_output_pointers();
  void full_output_pointers();
  void next_row_down(const Pass& down);
  void column_unit(int64_t width, const std::vector<int32_t>& reds);
  void column_pass(int p, int64_t width);
  void round_column_totals(int p, int64_t width, const std::vector<int32_t>& reds);
  void split_column_pass(int64_t width, const std::vector<int32_t>& reds, Xbyak::Label& not_last);
  void publish_partials(int64_t width, const std::vector<int32_t>& reds, Xbyak::Label& not_last);
  void combine_partials(int64_t width, const std::vector<int32_t>& reds);
  void unit_constants(int st);
  void unit_results(int st);
  Xbyak::Address unit_value_at(int slot);
  void reduce_along_row(int32_t r, int64_t width);
  void mark_results(int32_t v, std::vector<bool>& need, std::vector<bool>& from_total) const;
  void fold_column_blocks(int64_t width, const std::vector<int32_t>& sums);
  void accumulate_column(int32_t r, const Vmm& x);

  // --- reductions: gen_reductions.cpp ----------------------------------------

  // Note [Integer sums], [Arg reductions]: the int64 values a 32-bit
  // kernel holds (so is_wide can ask before there is a generator).
  static bool int64_row_total(const KernelSpec& s, const RowPlan& p, int32_t v);
  static bool arg_reduction(const KernelSpec& s, const RowPlan& p, int32_t v);
  bool int64_row_total(int32_t v) const { return !wide_ && int64_row_total(s_, p_, v); }
  bool arg_reduction(int32_t v) const { return arg_reduction(s_, p_, v); }

  // acc = op(acc, x), a reduction's step, in lanes `l` of registers X (the
  // vector accumulators, or Xmm for the horizontal reduction); s and s2
  // are scratch.
  template <class X>
  void combine(Op op, Lanes l, VectorOps<X>& f, const X& acc, const X& x, const X& s, const X& s2) {
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
      case Lanes::Int:  // integer sums and products are int64: Long lanes
        if (op == Op::Max) return vpmaxsd(acc, acc, x);
        if (op == Op::Min) return vpminsd(acc, acc, x);
        break;
      case Lanes::Long: {
        LongOps<X> n(*this, k_, f);
        switch (op) {
          case Op::Sum: vpaddq(acc, acc, x); return;
          case Op::Prod: IntOps<X>(*this, k_, f).mul(acc, acc, x, s, s2, Width::k64); return;
          case Op::Max: n.max(acc, acc, x, s); return;
          case Op::Min: n.min(acc, acc, x, s); return;
          default: break;
        }
        break;
      }
      case Lanes::Mask:  // any, all
        if (op == Op::Max) return vorps(acc, acc, x);
        if (op == Op::Min) return vandps(acc, acc, x);
        break;
      case Lanes::Double:
        switch (op) {
          case Op::Sum: vaddpd(acc, acc, x); return;
          case Op::Prod: vmulpd(acc, acc, x); return;
          case Op::Max: f.maximum(acc, acc, x, s, Width::k64); return;
          case Op::Min: f.minimum(acc, acc, x, s, Width::k64); return;
          default: break;
        }
        break;
    }
    throw Unsupported("the reduction " + std::string(info(op).name) + " in " + std::string(name(widest(l))) + " lanes");
  }

  // Sum r's step, and the zero its blocks start from (Note [Blocked
  // sums]), in its lanes: float32, float64, or int64 (where blocks change
  // nothing, but cost little).
  void add_sum(int32_t r, const Vmm& d, const Vmm& a, const Xbyak::Operand& b) {
    if (lanes(r) == Lanes::Long) vpaddq(d, a, b);
    else if (wide_) vaddpd(d, a, b);
    else vaddps(d, a, b);
  }
  Xbyak::Address sum_zero(int32_t r) {
    if (lanes(r) == Lanes::Long) return k_.bits_of(0);
    return wide_ ? k_.f64(-0.0) : k_(-0.0f);
  }

  uint32_t identity(int32_t r) const;
  Xbyak::Address identity_value(int32_t r);
  Xbyak::Address start_value(int32_t r);
  void accumulate(Pass& pass, int32_t r, const Vmm& x, bool tail);
  void flush_sums(Pass& pass);
  void accumulate_int64(const Vmm& acc, const Vmm& x, Lanes l, bool tail);
  void finish_reduction(Pass& pass, int32_t r);
  void reduce_lanes(int32_t r, const Vmm& acc);

  // --- arg reductions: gen_arg_reductions.cpp --------------------------------

  Lanes arg_lanes(int32_t r) const;
  Xbyak::Address arg_start(int32_t r);
  void arg_takes(int32_t r, const Vmm& take, const Vmm& best, const Vmm& x, const Vmm& s);
  void accumulate_arg(int32_t r, const Vmm& best, const Vmm& index, const Vmm& x, bool tail);
  void lane_positions(const Vmm& d);
  void accumulate_column_arg(int32_t r, const Vmm& x);
  void reduce_arg_along_row(int32_t r, int64_t width);
  void finish_arg(int32_t r, const Vmm& best, const Vmm& index);

  // --- loads and stores: gen_memory.cpp --------------------------------------

  Xbyak::Address tail_mask(int bytes = 0);

  // A bool loaded as 0/1 integers becomes a lane mask.
  void int_to_mask(const Vmm& v) { ints_.nonzero(v, v, scratch(4)); }

  void load_element(int32_t k, const Vmm& dst, bool tail);
  // Note [Masked loads on the CPU] (gen_memory.cpp).
  void load_masked(int32_t k, const Vmm& dst, const Vmm& mask, bool tail);
  void load_constant_masked(int32_t k, const Vmm& dst, const Vmm& mask);
  void bounce_masked(int32_t k, int lanes);
  void window_lanes(int32_t k, const Vmm& dst);
  void window_constant(int32_t k, const Vmm& dst);
  void load_converted(DType t, const Vmm& dst, Xbyak::RegExp at, bool tail);
  void load_every_other(const Vmm& dst);
  void bounce_in(int size);
  void bounce_strided(int size, int64_t step, int n);
  void bounce_out(int size);
  void load_constant(int32_t k, const Vmm& dst);
  void load_half_float(DType t, const Xbyak::Xmm& x);
  void to_bf16_bits(const Vmm& dst, const Vmm& x);
  void store_element(size_t k, const Vmm& x, bool tail);
  void store_scalar(size_t k, const Vmm& x);
  void store_float_scalar(DType t, const Xbyak::Xmm& x);

  // --- loads and stores of wide kernels: gen_wide_memory.cpp -----------------

  using Half = typename Ops::Half;
  void load_wide(int32_t k, const Vmm& dst, bool tail);
  void load_wide_at(DType t, const Vmm& dst, Xbyak::Address at, bool tail);
  void gather_wide(int32_t k, const Vmm& dst, bool tail);
  void load_every_other_wide(const Vmm& dst, bool f64);
  void widen_small(const Vmm& dst, const Xbyak::Address& at, DType t, bool tail);
  void widen_dwords(const Vmm& dst, DType t);
  void arange_wide(int32_t k, const Vmm& dst);
  void load_constant_wide(int32_t k, const Vmm& dst);
  void store_wide(size_t k, const Vmm& x, bool tail);
  void store_half(const Xbyak::Address& at, bool tail);
  void store_scalar_wide(size_t k, const Vmm& x);

  // --- element-wise ops: gen_elementwise.cpp ---------------------------------

  // d = op(args), arg(v) the register of value v: compute_op with the
  // arguments' registers.
  template <class Arg>
  void compute(const KernelOp& op, const Vmm& d, Arg arg) {
    std::array<Vmm, 3> regs;
    for (size_t i = 0; i < op.args.size(); ++i) regs[i] = arg(op.args[i]);
    compute_op(op, d, regs);
  }
  void compute_op(const KernelOp& op, const Vmm& d, const std::array<Vmm, 3>& regs);

  void fit(const Vmm& d, Lanes out, DType t);
  void compute_float(const KernelOp& op, const Vmm& d, const Vmm& x, const Vmm& y);
  Vmm truth(const Vmm& x, DType t, const Vmm& s);
  void convert(const Vmm& d, const Vmm& x, DType from, DType to);
  void round_float(const Vmm& d, const Vmm& x, DType t);

  // --- element-wise ops of integer lanes, 32- or 64-bit: gen_integers.cpp ---

  void compute_int(const KernelOp& op, const Vmm& d, const Vmm& a, const Vmm& b);
  void mod_long(const Vmm& d, const Vmm& a, const Vmm& b);
  void mod_in_f64(const Vmm& d, const Vmm& a, const Vmm& b);

  // --- element-wise ops of wide kernels: gen_wide.cpp ------------------------

  void compute_double(const KernelOp& op, const Vmm& d, const Vmm& x, const Vmm& y);
  Vmm truth_wide(const Vmm& x, DType t, const Vmm& s);
  void sign_mask_wide(const Vmm& d, const Vmm& x);
  void convert_wide(const Vmm& d, const Vmm& x, DType from, DType to);

  const KernelSpec& s_;
  const RowPlan& p_;
  ConstantPool k_;
  Ops ops_;
  VectorMath<Vmm> math_;
  IntOps<Vmm> ints_;
  LongOps<Vmm> longs_;
  VectorMathF64<Vmm> math64_;
  std::vector<bool> elem_;
  std::vector<int> stage_;
  std::vector<int> const_reg_;
  bool used_[32] = {};
  int passes_ = 0;
  std::vector<Pass> passes_plan_;
  std::vector<int> last_point_;
  std::vector<int32_t> last_constant_reader_;  // Note [Constant lifetimes]: or -1
  int in_slot_ = 0, out_slot_ = 0, tile_slot_ = 0, chunk_slot_ = 0, pair_slot_ = 0, const_slot_ = 0;
  std::vector<int> unit_slot_;   // column plans reduced along the row: per reduction, its value's scratch row
  std::vector<int> stash_slot_;  // Note [Stashed values]: per value, its scratch row or -1
  int stashes_ = 0, max_stashes_ = 0;
  int64_t width_ = p_.row_width();  // elements of the row a pass covers (a tile's, for a column plan)
  int count_slot_ = 0;             // column plans: rows of R done, then Note [Column reductions]'s counters
  int partials_slot_ = 0;          // Note [Split columns]: where the unit's partials start
  int64_t rows_ = p_.reduce_length;  // rows of R a column pass walks (a part's, when R is split)
  bool stash_ok_ = true;
  bool stream_ = false;  // Note [Streaming stores]
  // Note [Tiled transposes]: per input its tile (or -1), the number of
  // tiles, and while a group is emitted the row within it and whether the
  // tiled inputs are read from their tiles.
  std::vector<int> tile_of_;
  int tiles_ = 0;
  int tile_width_ = W;  // Note [Tile chunks]: columns per tile, a multiple of W
  // Note [Tile pairs]: the words of the frame the pair walk keeps, then
  // per input its prefetch distance, and the inputs that prefetch.
  static constexpr int kPairSlots = 6;
  std::vector<bool> pair_prefetch_;
  int group_row_ = 0;
  bool from_tile_ = false;
};

}  // namespace braze::jit::detail
