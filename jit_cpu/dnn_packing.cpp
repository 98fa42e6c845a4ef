#include "jit_cpu/dnn_packing.h"

#include <string>

namespace braze::dnn {

namespace {

using dnnl::memory;

// Rows of the result that pay for a copy of the right operand at every run.
constexpr int64_t kPackRows = 128;

// Whether oneDNN asks for a layout of its own (inner blocks: brgemm's
// BA16a64b, ...) rather than a plain strided one.
bool blocked(const memory::desc& md) {
  return md.data.format_kind == dnnl_blocked && md.data.format_desc.blocking.inner_nblks > 0;
}

// The same axes as `b`, each matrix column-major, batches outermost.
memory::desc column_major(const memory::desc& b) {
  memory::dims dims = b.dims(), strides(dims.size());
  const size_t rank = dims.size();
  int64_t step = 1;
  for (size_t k : {rank - 2, rank - 1}) strides[k] = step, step *= dims[k];
  for (size_t k = rank - 2; k-- > 0;) strides[k] = step, step *= dims[k];
  return memory::desc(dims, b.data_type(), strides);
}

}  // namespace

// Note [Packed matmul weights]
// Where a matmul's right operand is copied before the product (the way BLAS
// libraries pack their operands), or nullopt to read it where it is:
//   - oneDNN's own layout when it has one. Asked with format_tag::any, its
//     brgemm matmul (AVX-512) names a blocked layout; read from a plain one
//     it copies blocks of the operand into its scratchpad at every run
//     instead (measured on one Zen 5 core: 256x1024 @ 1024x4096 145 GFLOP/s
//     packed against 137 in place; bfloat16 256x4096 @ 4096x1024 500
//     against 250; 16x512 @ 512x2048 264 against 167).
//   - for its gemm matmul (AVX2), which reads plain layouts only, a
//     column-major copy of a row-major operand: oneDNN 2.6's AVX2 sgemm
//     runs at half speed on AMD machines when the operand is row-major
//     [K, N] (140 vs 75 ms for 256x1024 @ 1024x4096 on one core). x @ w.T
//     is column-major already: no copy.
//   - else none: brgemm names no layout for batched operands (3-D and up)
//     and copies what it needs into its scratchpad; a column-major copy
//     only made that copy a transpose (4x128x1024 @ 1024x256: 1.04 ms
//     against 0.97 in place, and twice the scratchpad).
// A copy pays when enough rows share it (M >= kPackRows: the 16 MB
// transpose took 18 ms, the product with it 92 ms instead of 140), or when
// the operand is a graph input: a program packs that once and keeps it
// (Note [Kept packed weights] in runtime/execute.h), so any M gains from
// oneDNN's layout (the column-major copy keeps to M >= kPackRows, where it
// was measured).
std::optional<memory::desc> packed_layout(const Call& c, const memory::desc& a, const memory::desc& b,
                                          const memory::desc& out, const dnnl::primitive_attr& attr,
                                          const dnnl::engine& engine) {
  const bool many_rows = c.out[c.out.size() - 2] >= kPackRows;
  if (!many_rows && !c.b_input) return std::nullopt;
  try {
    memory::desc any(b.dims(), b.data_type(), memory::format_tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, any, out), attr, engine);
    if (blocked(pd.weights_desc())) return pd.weights_desc();
    // The name oneDNN's verbose mode prints: "gemm:jit", "brg:avx512_core", ...
    std::string impl = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, out), attr, engine).impl_info_str();
    if (!impl.starts_with("gemm")) return std::nullopt;
  } catch (const dnnl::error&) {
    return std::nullopt;  // no implementation for this call: create() says so
  }
  const View& bv = c.b.view;
  if (!many_rows || bv.strides.back() != 1 || bv.shape.back() == 1) return std::nullopt;
  return column_major(b);
}

}  // namespace braze::dnn
