// What the generator decides before it emits: whether it can emit the spec, which
// values vary along the row, their stages and the number of passes, streaming stores.
#include <algorithm>
#include <iterator>
#include <cstdint>
#include <fstream>
#include <string>

#include <unistd.h>

#include "graph/infer.h"
#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

namespace {

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
//
// The last-level cache is the one this CPU's threads see, from sysfs:
// glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) reports 384 MB on a 2-core VM of
// a Zen 5 EPYC whose cores share 32 MB, and no output was ever streamed.
int64_t last_level_cache_bytes() {
  int64_t best_level = 0, bytes = 0;
  for (int i = 0; i < 8; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size");
    int64_t level = 0, size = 0;
    std::string unit;
    if (!(level_file >> level) || !(size_file >> size)) break;
    size_file >> unit;  // "32768K"
    if (unit == "K") size <<= 10;
    else if (unit == "M") size <<= 20;
    if (level >= best_level) best_level = level, bytes = size;
  }
  if (bytes > 0) return bytes;
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? l3 : 0;
}

int64_t streaming_store_threshold() {
  static const int64_t bytes = std::max<int64_t>(last_level_cache_bytes(), int64_t{8} << 20);
  return bytes;
}

}  // namespace

template <class Vmm>
bool RowKernelGen<Vmm>::is_wide(const KernelSpec& spec, const RowPlan& plan) {
  auto wide = [](DType t) { return !lanes_of(t); };  // float64, int64, uint32
  for (const KernelInput& in : spec.inputs)
    if (wide(in.dtype)) return true;
  for (size_t v = 0; v < spec.body.size(); ++v)
    if (wide(spec.body[v].dtype) && !int64_row_total(spec, plan, static_cast<int32_t>(v))) return true;
  for (const KernelOutput& o : spec.outputs)  // a cast stored (astype of an input)
    if (o.dtype == DType::Float64) return true;
  // Note [Float products]
  // A product of float32 (float16, bfloat16) values accumulates in
  // float64, as the reference's does in double: in float32 a product of
  // subnormals underflows to 0, or of large values overflows to inf, where
  // double does not, and a later inf or 0 then gives NaN (0 * inf) where
  // the reference gives inf or 0 (bfloat16 [1e-40, -4.9, 1e-40, inf]:
  // -inf, not NaN). Rounded once on store, as a wide float32 sum is.
  for (const KernelOp& op : spec.body)
    if (op.op == Op::Prod && is_float(op.dtype)) return true;
  // A comparison of an int32 with a float: float32 lanes would round the
  // int32 past 2^24 (16777217 == 16777216.0f); float64 holds both exactly.
  for (const KernelOp& op : spec.body) {
    if (info(op.op).dtype_rule != DTypeRule::Compare) continue;
    std::vector<DType> in;
    for (int32_t a : op.args) in.push_back(spec.body[a].dtype);
    if (is_float(compute_dtype(op.op, in, op.dtype)) && std::count(in.begin(), in.end(), DType::Int32)) return true;
  }
  return false;
}

template <class Vmm>
void RowKernelGen<Vmm>::check_supported() {
  if (wide_) check_wide();
  for (const KernelInput& in : s_.inputs) {
    if (wide_) break;
    if (!lanes_of(in.dtype)) throw Unsupported(std::string("inputs of dtype ") + std::string(name(in.dtype)));
    if (in.kind == KernelInput::Kind::Arange && in.dtype != DType::Float32 && lanes_of(in.dtype) != Lanes::Int)
      throw Unsupported("an arange of dtype " + std::string(name(in.dtype)));
  }
  for (size_t v = 0; v < s_.body.size() && !wide_; ++v) {
    const KernelOp& op = s_.body[v];
    if (!lanes_of(op.dtype) && !int64_row_total(static_cast<int32_t>(v)))
      throw Unsupported("values of dtype " + std::string(name(op.dtype)));
    // float32 lanes round an int32 past 2^24, which a comparison would
    // see (16777217 == 16777216.0f); the reference compares exactly.
    if (info(op.op).dtype_rule == DTypeRule::Compare && op_lanes(compute_dtype_of(op)) == Lanes::Float)
      for (int32_t a : op.args)
        if (s_.body[a].dtype == DType::Int32) throw Unsupported("comparisons of int32 with float values");
  }
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    const RowPlan::Access& a = p_.inputs[k];
    if (!fits_int32(a.inner_stride * (p_.row_length + V)) || !fits_int32(a.offset))
      throw Unsupported("strides past 32 bits");
    for (int64_t st : a.outer_strides)
      if (!fits_int32(st)) throw Unsupported("strides past 32 bits");
    for (size_t l = 0; l < a.reduce_strides.size(); ++l)
      if (!fits_int32(8 * p_.reduce_step(a, l))) throw Unsupported("strides past 32 bits");
  }
}

// Note [Wide kernels]: what a wide kernel holds. float32 results only of
// the ops that the reference computes in double and rounds once, as the
// kernel does (correctly rounded ops, casts), and of the math functions:
// their float64 versions (<= 2 ulp of float64) rounded once are within
// 0.5 ulp + 2^-28 of the exact float32 result, closer than the float32
// versions' bounds; float32 sums and products along the row, accumulated
// in float64 as the reference does in double and rounded once. Integer
// results of any op that has Long lanes.
template <class Vmm>
void RowKernelGen<Vmm>::check_wide() {
  static constexpr Op kAsTheReference[] = {
      Op::Copy,  Op::Depend, Op::Cast,  Op::Where, Op::Add,  Op::Sub,  Op::Mul,  Op::Div,  Op::Sqrt,    Op::Rsqrt,   Op::Reciprocal,
      Op::Neg,   Op::Abs,   Op::Sign,  Op::Relu, Op::Square, Op::Floor, Op::Ceil, Op::Round, Op::Maximum, Op::Minimum,
      Op::Mod,   Op::Sum,   Op::Prod,  Op::Max,   Op::Min};  // (over size-1 axes)
  static constexpr Op kMathOfFloat32[] = {Op::Exp, Op::Exp2, Op::Expm1,   Op::Log, Op::Log2, Op::Log1p,
                                          Op::Sigmoid, Op::Tanh, Op::Sin, Op::Cos, Op::Tan, Op::Erf, Op::Pow};
  for (size_t v = 0; v < s_.body.size(); ++v) {
    const KernelOp& op = s_.body[v];
    if (op.op == Op::Input) continue;
    const DType t = op.dtype;
    if (reduces(op)) {
      if ((op.op == Op::ArgMax || op.op == Op::ArgMin) && !arg_reduction(static_cast<int32_t>(v)))
        throw Unsupported("argmax/argmin other than along the row");
      continue;  // a float32 one rounds once (finish_reduction, round_column_totals, reduce_along_row)
    }
    if (!rounds_to_float32(t)) continue;
    auto listed = [&](auto& list) { return std::find(std::begin(list), std::end(list), op.op) != std::end(list); };
    if (!listed(kAsTheReference) && !listed(kMathOfFloat32))
      throw Unsupported("the op " + std::string(info(op.op).name) + " to " + std::string(name(t)) + " in wide kernels");
  }
}

template <class Vmm>
DType RowKernelGen<Vmm>::compute_dtype_of(const KernelOp& op) const {
  std::vector<DType> in;
  for (int32_t a : op.args) in.push_back(s_.body[a].dtype);
  return compute_dtype(op.op, in, op.dtype);
}

template <class Vmm>
bool RowKernelGen<Vmm>::reduces(const KernelOp& op) const {
  return is_reduce(op.op) && !op.attr.ints.empty() && (p_.reduces || p_.columns);
}

template <class Vmm>
void RowKernelGen<Vmm>::analyse() {
  const size_t n = s_.body.size();
  elem_.assign(n, false);
  stage_.assign(n, 0);
  for (size_t v = 0; v < n; ++v) {
    const KernelOp& op = s_.body[v];
    if (op.op == Op::Input) {
      const KernelInput& in = s_.inputs[op.input];
      elem_[v] = in.kind != KernelInput::Kind::Scalar && p_.inputs[op.input].inner_stride != 0;
      if (!op.args.empty()) {  // a masked load (Note [Masked loads on the CPU]) varies where its mask does
        elem_[v] = elem_[v] || elem_[op.args[0]];
        stage_[v] = stage_[op.args[0]];
      }
    } else if (reduces(op)) {
      stage_[v] = stage_[op.args[0]] + 1;
      // A column reduction's totals are per column, unless the row is
      // reduced too: even a total of a value the same along the row
      // (b[:, None] summed over axis 0) is kept and read per column.
      elem_[v] = p_.columns && !p_.reduces;
    } else {
      for (int32_t a : op.args) {
        elem_[v] = elem_[v] || elem_[a];
        stage_[v] = std::max(stage_[v], stage_[a]);
      }
    }
  }
  // Note [Constant lifetimes]
  // A row constant holds a register from when it is computed until the
  // last point that reads it (release_constants), or for a column plan
  // until the unit's results. One that only other row constants read
  // (a chain of ops on scalars, or on a one-element domain's values)
  // gives its register back as soon as the last of them is computed, so
  // a long chain fits in the registers. Row constants are computed stage
  // by stage, in body order within a stage (row_constants,
  // unit_constants): "last" is in that order.
  last_constant_reader_.assign(n, -1);
  std::vector<bool> read_otherwise(n, false);  // per element, by a reduction, or stored
  const int last_stage = n ? *std::max_element(stage_.begin(), stage_.end()) : 0;
  for (int st = 0; st <= last_stage; ++st)
    for (size_t v = 0; v < n; ++v) {
      const KernelOp& op = s_.body[v];
      if (stage_[v] != st) continue;
      const bool constant = !elem_[v] && !reduces(op);
      for (int32_t a : op.args) {
        if (constant) last_constant_reader_[a] = static_cast<int32_t>(v);
        else read_otherwise[a] = true;
      }
    }
  for (const KernelOutput& o : s_.outputs) read_otherwise[o.value] = true;
  for (size_t v = 0; v < n; ++v)
    if (read_otherwise[v]) last_constant_reader_[v] = -1;
  passes_ = 0;
  for (size_t v = 0; v < n; ++v)
    if (reduces(s_.body[v])) passes_ = std::max(passes_, stage_[s_.body[v].args[0]] + 1);
  for (const KernelOutput& o : s_.outputs)
    if (stored_per_element(o)) passes_ = std::max(passes_, stage_[o.value] + 1);
}

template <class Vmm>
void RowKernelGen<Vmm>::decide_streaming() {
  if (p_.row_length % V != 0 || p_.row_width() % V != 0) return;
  int64_t bytes = 0;
  for (const KernelOutput& o : s_.outputs) {
    if (!stored_per_element(o)) continue;
    if (itemsize(o.dtype) != static_cast<size_t>(eb_)) return;  // float32 and int32 (float64 if wide): whole registers
    bytes += p_.elements() * eb_;
  }
  stream_ = bytes >= streaming_store_threshold();
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
