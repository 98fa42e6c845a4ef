// Reduction kernels (Note [CUDA kernel shapes]): BlockPerRow, ThreadPerRow
// and SplitColumns share one frame: a loop over rows (columns), then per
// reduction a pass along the reduced axes, then a pass storing the Full
// outputs. They differ in who walks a row and how partial values combine.
#include <string>

#include "graph/check.h"
#include "jit_cuda/cuda_source_renderer.h"

namespace braze::cuda {

namespace {

// The reduction's combining functor (prelude.cuh), identity, and the
// accumulator's type.
struct Reduction {
  std::string op, identity, acc;
  bool arg = false;
};

// A float sum starts from -0.0, which leaves every value as it is (+0.0
// would turn a sum of -0.0s into +0.0, where the reference, which starts
// from the first value, and the CPU kernels give -0.0); a sum over no
// values is +0.0, as NumPy's, and shapes are baked in, so that case is
// known here.
Reduction reduction_of(Op op, DType input, bool empty) {
  std::string a = accumulator_type(op, input);
  std::string zero = a == "float" && !empty ? "-0.0f" : a == "double" && !empty ? "-0.0" : "static_cast<" + a + ">(0)";
  bool ll = a == "long long";
  std::string lowest = ll ? "(long long)(1ull << 63)"
                          : a == "float" ? "__int_as_float(0xff800000)" : "__longlong_as_double(0xfff0000000000000ull)";
  std::string highest = ll ? "0x7fffffffffffffffll"
                           : a == "float" ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000ull)";
  switch (op) {
    case Op::Sum: return {"bz::SumOp{}", zero, a};
    case Op::Prod: return {"bz::ProdOp{}", "static_cast<" + a + ">(1)", a};
    case Op::Max: return {"bz::MaxOp{}", lowest, a};
    case Op::Min: return {"bz::MinOp{}", highest, a};
    case Op::ArgMax: return {"bz::ArgOp<true>{}", "bz::Arg<" + a + ">{" + lowest + ", 0x7fffffffffffffffll}", "bz::Arg<" + a + ">", true};
    case Op::ArgMin: return {"bz::ArgOp<false>{}", "bz::Arg<" + a + ">{" + highest + ", 0x7fffffffffffffffll}", "bz::Arg<" + a + ">", true};
    default: break;
  }
  BRAZE_ASSERT(false, info(op).name, " is not a reduction");
  return {};
}

}  // namespace

// SplitColumns: a block takes split_columns_ (C, a power of two <= 32)
// neighbouring columns; thread t works on column t % C at positions
// t / C, t / C + S, ... of the reduced axes (S = blockDim.x / C splits), so
// a warp still reads C neighbouring columns at once. The last block's
// threads past the last column read the last column again (every load
// stays in bounds, every thread reaches every barrier) and store nothing.
// A thread walking down columns (SplitColumns, ThreadPerRow) has its loop
// unrolled 4 times: the loads of 4 rows are independent of the
// accumulator, so they are in flight together (Note [Bytes in flight] in
// cuda_source_renderer.h).
void Renderer::rows() {
  const bool block = launch_.shape == KernelShape::BlockPerRow;
  const bool split = launch_.shape == KernelShape::SplitColumns;
  const std::string slots = split ? std::to_string(launch_.threads) : "32";
  for (size_t i = 0; i < spec_.body.size(); ++i) {
    const KernelOp& op = spec_.body[i];
    if (is_reduce(op.op) && !op.attr.ints.empty() && (block || split))
      out_ << "  __shared__ " << reduction_of(op.op, spec_.body[op.args[0]].dtype, false).acc << " sh" << i << "[" << slots
           << "];\n";
  }
  out_ << "  constexpr U kRows = " << l_.rows() << ", kL = " << l_.row_length() << ";\n";
  std::string loop;
  const std::string w = std::to_string(vec_.width);
  const int per_thread = block && vec_.width > 1 ? plan_row_cache() : 0;
  if (per_thread > 0) {  // Note [Rows held in registers]
    launch_.exact_threads = true;
    out_ << "  constexpr int kPer = " << per_thread << ";\n";
    out_ << "  for (U row = blockIdx.x; row < kRows; row += gridDim.x) {\n";
    loop = "#pragma unroll\n    for (int it = 0; it < kPer; ++it) {\n      const U j = ((U)threadIdx.x + (U)it * " +
           std::to_string(launch_.threads) + "u) * " + w + ";\n      if (j >= kL) break;\n";
  } else if (block) {
    out_ << "  for (U row = blockIdx.x; row < kRows; row += gridDim.x) {\n";
    loop = vec_.width > 1 ? "    for (U j = threadIdx.x * " + w + "; j < kL; j += blockDim.x * " + w + ") {\n"
                          : "    for (U j = threadIdx.x; j < kL; j += blockDim.x) {\n";
  } else if (split) {
    out_ << "  constexpr unsigned kC = " << split_columns_ << ";\n";
    out_ << "  const unsigned tx = threadIdx.x % kC, ty = threadIdx.x / kC, kS = blockDim.x / kC;\n";
    out_ << "  for (U first = blockIdx.x * kC; first < kRows; first += (U)gridDim.x * kC) {\n";
    out_ << "    const bool live = first + tx < kRows;\n";
    out_ << "    const U row = live ? first + tx : kRows - 1;\n";
    loop = "#pragma unroll 4\n    for (U j = ty; j < kL; j += kS) {\n";
  } else {
    out_ << "  for (U row = blockIdx.x * (U)blockDim.x + threadIdx.x; row < kRows; row += (U)gridDim.x * blockDim.x) {\n";
    loop = "#pragma unroll 4\n    for (U j = 0; j < kL; ++j) {\n";
  }
  decompose("row", axes(false), "    ");
  if (per_thread > 0) load_row_cache(loop);
  for (size_t n = 0; n < spec_.body.size(); ++n) {
    int32_t i = static_cast<int32_t>(n);
    const KernelOp& op = spec_.body[i];
    if (is_scalar(i) || per_element(i)) continue;
    if (!is_reduce(op.op) || op.attr.ints.empty()) emit_value(i, "    ");
    else reduction_pass(i, loop);
  }
  std::vector<int32_t> full;
  for (const KernelOutput& o : spec_.outputs)
    if (o.space == Space::Full) full.push_back(o.value);
  if (!full.empty()) {
    out_ << (split ? "    if (live)\n" : "") << loop;
    decompose("j", axes(true), "      ");
    if (vec_.width == 1) {
      emit_closure(full, "      ");
      for (size_t k = 0; k < spec_.outputs.size(); ++k)
        if (spec_.outputs[k].space == Space::Full)
          out_ << "      out" << k << "[" << dense_index() << "] = "
               << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value)) << ";\n";
    } else {  // as the element-wise vector loop (cuda_source_elements.cpp)
      emit_vector_loads(closure(full), "      ");
      for (size_t k = 0; k < spec_.outputs.size(); ++k)
        if (spec_.outputs[k].space == Space::Full)
          out_ << "      bz::Vec<" << storage_type(spec_.outputs[k].dtype) << ", " << w << "> o" << k << ";\n";
      out_ << "#pragma unroll\n      for (int e = 0; e < " << w << "; ++e) {\n";
      lane_ = "e";
      emit_closure(full, "        ");
      lane_.clear();
      for (size_t k = 0; k < spec_.outputs.size(); ++k)
        if (spec_.outputs[k].space == Space::Full)
          out_ << "        o" << k << ".v[e] = " << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value))
               << ";\n";
      out_ << "      }\n";
      for (size_t k = 0; k < spec_.outputs.size(); ++k)
        if (spec_.outputs[k].space == Space::Full)
          out_ << "      bz::store_vec(out" << k << " + (" << dense_index() << "), o" << k << ");\n";
    }
    out_ << "    }\n";
  }
  for (size_t k = 0; k < spec_.outputs.size(); ++k) {
    if (spec_.outputs[k].space != Space::Reduced) continue;
    out_ << "    " << (block ? "if (threadIdx.x == 0) " : split ? "if (live && ty == 0) " : "") << "out" << k
         << "[row] = " << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value)) << ";\n";
  }
  out_ << "  }\n";
}

// Note [Rows held in registers]
// A block-per-row kernel reads each row once per pass: softmax three
// times (max, sum of exp, store). With a grid-stride loop along the row a
// thread has one 16-byte load in flight per pass step, and the passes
// after the first wait on the L1 and L2 again. Where a thread's share of
// a row is a few vectors (at most kCachedRegisters 32-bit registers over
// all the inputs kept), the inputs that two or more passes read are
// loaded once, all of a thread's vectors at once before the first pass,
// into a register array (the loops over them are unrolled with constant
// trip counts, so the array is registers, not local memory), and every
// pass reads them from there.
int Renderer::plan_row_cache() {
  const int64_t per = (l_.row_length() / vec_.width + launch_.threads - 1) / launch_.threads;
  std::vector<std::vector<int32_t>> passes;
  std::vector<int32_t> full;
  for (size_t i = 0; i < spec_.body.size(); ++i) {
    const KernelOp& op = spec_.body[i];
    if (is_reduce(op.op) && !op.attr.ints.empty() && !is_scalar(static_cast<int32_t>(i))) passes.push_back({op.args[0]});
  }
  for (const KernelOutput& o : spec_.outputs)
    if (o.space == Space::Full) full.push_back(o.value);
  if (!full.empty()) passes.push_back(full);
  std::vector<int> reads(spec_.inputs.size(), 0);
  for (const std::vector<int32_t>& targets : passes) {
    std::vector<bool> need = closure(targets), seen(spec_.inputs.size(), false);
    for (size_t i = 0; i < need.size(); ++i) {
      const KernelOp& op = spec_.body[i];
      if (need[i] && op.op == Op::Input && !seen[op.input]) {
        seen[op.input] = true;
        ++reads[op.input];
      }
    }
  }
  cached_.assign(spec_.inputs.size(), false);
  int64_t registers = 0;
  for (size_t k = 0; k < spec_.inputs.size(); ++k) {
    if (reads[k] < 2 || spec_.inputs[k].kind != KernelInput::Kind::Buffer || vec_.inputs[k] != Access::Vector) continue;
    cached_[k] = true;
    registers += per * vec_.width * static_cast<int64_t>(itemsize(spec_.inputs[k].dtype)) / 4;
  }
  if (registers == 0 || registers > kCachedRegisters) {
    cached_.clear();
    return 0;
  }
  return static_cast<int>(per);
}

// Before the first pass: each kept input's vectors of this thread, loaded
// together.
void Renderer::load_row_cache(const std::string& loop) {
  const std::string w = std::to_string(vec_.width);
  for (size_t k = 0; k < cached_.size(); ++k)
    if (cached_[k])
      out_ << "    bz::Vec<" << storage_type(spec_.inputs[k].dtype) << ", " << w << "> c" << k << "[kPer];\n";
  out_ << loop;
  decompose("j", axes(true), "      ");
  for (size_t k = 0; k < cached_.size(); ++k)
    if (cached_[k])
      out_ << "      c" << k << "[it] = bz::load_vec<" << storage_type(spec_.inputs[k].dtype) << ", " << w << ">(in" << k
           << " + (" << offset(k) << "));\n";
  out_ << "    }\n";
}

// One reduction: the threads of a row accumulate their share of it, then
// combine (block_reduce, column_reduce) so every one of them has the value.
void Renderer::reduction_pass(int32_t i, const std::string& loop) {
  const KernelOp& op = spec_.body[i];
  BRAZE_ASSERT(op.attr.ints == spec_.reduce_axes, "a reduction over other axes than its kernel's");
  Reduction red = reduction_of(op.op, spec_.body[op.args[0]].dtype, l_.row_length() == 0);
  std::string acc = "acc" + std::to_string(i), sh = "sh" + std::to_string(i);
  out_ << "    " << red.acc << " " << acc << " = " << red.identity << ";\n" << loop;
  decompose("j", axes(true), "      ");
  std::string x = "bz::cv<" + std::string(accumulator_type(op.op, spec_.body[op.args[0]].dtype)) + ">(" + value_name(op.args[0]) + ")";
  if (vec_.width == 1) {
    emit_closure({op.args[0]}, "      ");
    if (red.arg) x = red.acc + "{" + x + ", (long long)j}";
    out_ << "      " << acc << " = " << red.op << "(" << acc << ", " << x << ");\n    }\n";
  } else {  // as the element-wise vector loop; an argmax position is j + lane
    emit_vector_loads(closure({op.args[0]}), "      ");
    out_ << "#pragma unroll\n      for (int e = 0; e < " << vec_.width << "; ++e) {\n";
    lane_ = "e";
    emit_closure({op.args[0]}, "        ");
    lane_.clear();
    if (red.arg) x = red.acc + "{" + x + ", (long long)(j + e)}";
    out_ << "        " << acc << " = " << red.op << "(" << acc << ", " << x << ");\n      }\n    }\n";
  }
  if (launch_.shape == KernelShape::BlockPerRow)
    out_ << "    " << acc << " = bz::block_reduce(" << acc << ", " << red.op << ", " << red.identity << ", " << sh << ");\n";
  else if (launch_.shape == KernelShape::SplitColumns)
    out_ << "    " << acc << " = bz::column_reduce(" << acc << ", " << red.op << ", " << sh << ", kC);\n";
  std::string r = register_type(op.dtype);
  std::string value = "bz::cv<" + r + ">(" + acc + (red.arg ? ".i" : "") + ")";
  out_ << "    const " << r << " " << value_name(i) << " = " << round_to(op.dtype, value) << ";\n";
}

}  // namespace braze::cuda
