// Note [Library capabilities] (library_rules.h).
#include "fusion/library_rules.h"

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

std::string cpu_refuse(const Graph& g, NodeId library, std::span<const PostOp>, const PostOp&) {
  return blas_call(g[library]) ? "a float64 matmul or float32 matrix-vector product is a BLAS call, which "
                                 "applies no post-ops"
                               : "";
}

bool cpu_reads(const Graph& g, const Node& library, size_t operand) {
  if (!blas_call(library)) return true;  // oneDNN reads any strides
  const View& v = g[library.inputs[operand]].view;
  const size_t r = v.shape.size();
  return numel(v.shape) == 0 ||
         transposed_view(v.shape[r - 2], v.shape[r - 1], v.strides[r - 2], v.strides[r - 1], true).has_value();
}

}  // namespace

const LibraryRules& cpu_library_rules() {
  static const LibraryRules rules{"oneDNN/BLAS", cpu_refuse, cpu_reads};
  return rules;
}

namespace {

// Whether a library call can read operand i of `n` where it is: a
// constant or an arange (through views) has no memory until a kernel
// writes it, whatever the library's rules (bz.full((1, 1), 2.0) @ b).
bool readable(const Graph& g, const LibraryRules& rules, const Node& n, size_t i) {
  const Op base = g[g.base(n.inputs[i])].op;
  if (base == Op::Const || base == Op::Arange) return false;
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
