// Note [Library capabilities] (library_rules.h).
#include "fusion/library_rules.h"

#include <algorithm>
#include <vector>

#include "fusion/blas_layout.h"
#include "fusion/passes.h"

namespace braze {

namespace {

// A float64 matmul, or a float32 matrix-vector product, is a BLAS call on
// the CPU (cpu_blas_matmul, jit_cpu/blas_matmul.h). BLAS applies no
// post-ops, so its epilogue is a generated kernel after it, and it reads a
// matrix with a unit stride along one of its axes (fusion/blas_layout.h);
// other layouts are copied.
bool blas_call(const Node& library) {
  return library.op == Op::MatMul && cpu_blas_matmul(library.dtype, library.shape());
}

// Which axes of `out` a post-op's operand varies along (right-aligned, as
// it broadcasts; a broadcast axis of the operand's view varies not).
std::vector<bool> varies(const View& operand, const Shape& out) {
  std::vector<bool> v(out.size(), false);
  const size_t lead = out.size() - operand.shape.size();
  for (size_t d = lead; d < out.size(); ++d)
    v[d] = operand.shape[d - lead] > 1 && operand.strides[d - lead] != 0;
  return v;
}

std::string cpu_refuse(const Graph& g, NodeId library, std::span<const PostOp> taken, const PostOp& next) {
  if (blas_call(g[library]))
    return "a float64 matmul or float32 matrix-vector product is a BLAS call, which applies no post-ops";
  if (g[library].dtype == DType::Int32 && g[library].dtype != g[g[library].inputs[0]].dtype)
    return "oneDNN's integer matmul and convolution run here without post-ops (Note [Integer matmul])";
  if (g[library].op == Op::Conv2d) {  // Note [Convolution bias]
    if (next.kind == PostOp::Kind::Activation) return "";
    const bool bias = taken.empty() && next.kind == PostOp::Kind::Binary && next.op == Op::Add &&
                      g[next.addend].dtype == g[library].dtype && is_channel_bias(g[next.addend].view, g[library].shape());
    return bias ? "" : "oneDNN's convolution takes a bias and activations; its other post-ops ran on a slow path";
  }
  if (next.kind != PostOp::Kind::Binary) return "";
  // oneDNN's fast kernels take an operand that is one value, one per output
  // channel (a matmul's last axis, a convolution's second) or one per
  // output element; broadcast any other way (one per row, a [T, T] mask
  // over a batch) it ran the whole call on its reference implementation:
  // [256, 512] @ [512, 256] * [256, 1] took 240 ms, 0.36 ms as a call and a
  // kernel.
  const Shape& out = g[library].shape();
  const size_t channel = g[library].op == Op::Conv2d ? 1 : out.size() - 1;
  const std::vector<bool> v = varies(g[next.addend].view, out);
  bool none = true, channels = true, all = true;
  for (size_t d = 0; d < out.size(); ++d) {
    none = none && !v[d];
    channels = channels && v[d] == (d == channel);
    all = all && (v[d] || out[d] == 1);
  }
  return none || channels || all ? "" : "oneDNN applies an operand broadcast this way only on its slow path";
}

// Whether `v` is dense row-major (the strides of size-1 axes do not matter).
bool dense(const View& v) {
  const Strides want = contiguous_strides(v.shape);
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] > 1 && v.strides[d] != want[d]) return false;
  return true;
}

// Whether the axes of `v` longer than 1 nest: ordered by stride, each
// steps over all the elements of the ones inside it. oneDNN describes no
// other strided layout ("could not construct a memory descriptor"): a
// batch of diagonals, x[i, j, j] as [3, 3, 1] with strides 9 and 4, steps
// 9 between matrices that span 12.
bool nested(const View& v) {
  std::vector<std::pair<int64_t, int64_t>> axes;  // stride, extent
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] > 1 && v.strides[d] != 0) axes.emplace_back(v.strides[d], v.shape[d]);
  std::sort(axes.begin(), axes.end());
  int64_t inner = 1;
  for (auto [stride, extent] : axes) {
    if (stride < inner) return false;
    inner = stride * extent;
  }
  return true;
}

// Whether the matrices of `v` (its last two axes) have a unit stride along
// one axis (fusion/blas_layout.h); batch axes may have any strides.
bool plain_matrices(const View& v) {
  const size_t r = v.shape.size();
  return transposed_view(v.shape[r - 2], v.shape[r - 1], v.strides[r - 2], v.strides[r - 1], true).has_value();
}

// Which layouts the CPU's libraries read at full speed. oneDNN takes any
// non-negative strides, but on others than these it picks its reference
// implementation, two orders of magnitude slower than a copy and the call:
// a convolution reads dense operands (conv2d's weight gradient reads its
// operands with the first two axes swapped: 73 ms, 0.35 ms with copies;
// Note [Convolution gradients], runtime/autodiff.cpp), a matmul matrices
// with a unit stride along one axis, as BLAS does.
bool cpu_reads(const Graph& g, const Node& library, size_t operand) {
  const View& v = g[library.inputs[operand]].view;
  if (numel(v.shape) == 0) return true;
  if (std::any_of(v.strides.begin(), v.strides.end(), [](int64_t s) { return s < 0; })) return false;
  if (library.op == Op::Conv2d) return dense(v);
  return plain_matrices(v) && nested(v);
}

// oneDNN's convolutions (Note [Convolutions as matmuls]): float32 and
// bfloat16 (float16 ones are float32 ones by then: Note [Half library
// calls in float32]), and int8 products into int32 (Note [Integer matmul]).
bool onednn_convolves(const Graph& g, const Node& conv) {
  return is_float(conv.dtype) ? conv.dtype != DType::Float64 : accumulates_bytes(g, conv);
}

// Note [Half library calls in float32]: oneDNN here has no float16 call.
bool onednn_widens(const Graph&, const Node& call) { return call.dtype == DType::Float16; }

}  // namespace

bool is_channel_bias(const View& addend, const Shape& out) {
  if (out.size() != 4) return false;
  const std::vector<bool> v = varies(addend, out);
  if (v[0] || v[2] || v[3]) return false;
  if (out[1] == 1) return true;  // one channel: one value, wherever it is
  // Along the channels with a unit stride, the channel axis the operand's own.
  const size_t lead = out.size() - addend.shape.size();
  return v[1] && lead <= 1 && addend.strides[1 - lead] == 1;
}

const LibraryRules& cpu_library_rules() {
  static const LibraryRules rules{"oneDNN/BLAS", cpu_refuse, cpu_reads, nullptr, onednn_convolves, onednn_widens};
  return rules;
}

namespace {

// Whether a library call can read operand i of `n` where it is: a
// constant or an arange (through views) has no memory until a kernel
// writes it, whatever the library's rules (bz.full((1, 1), 2.0) @ b).
bool readable(const Graph& g, const LibraryRules& rules, const Node& n, size_t i) {
  const Op base = g[g.base(n.inputs[i])].op;
  if (base == Op::Const || base == Op::Arange) return false;
  if (g[n.inputs[i]].view.windowed()) return false;  // padding is not in memory (Note [Windows])
  return !rules.reads || rules.reads(g, n, i);
}

}  // namespace

Graph copy_unread_operands(const Graph& g, const LibraryRules& rules) {
  bool any = false;
  for (const Node& n : g.nodes())
    if (info(n.op).kind == FusionKind::Opaque)
      for (size_t i = 0; i < n.inputs.size(); ++i) any = any || !readable(g, rules, n, i);
  if (!any) return g;
  // `n` arrives with its inputs numbered in `to`: the rules read their views there.
  return rewrite_nodes(g, [&](Graph& to, const Node& n, NodeId) {
    if (info(n.op).kind != FusionKind::Opaque) return to.add(n);
    Node m = n;
    for (size_t i = 0; i < m.inputs.size(); ++i)
      if (!readable(to, rules, n, i)) m.inputs[i] = to.apply(Op::Copy, {m.inputs[i]});
    return to.add(m);
  });
}

}  // namespace braze
