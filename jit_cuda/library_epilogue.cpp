// Note [CUDA library epilogues] (library_epilogue.h).
#include "jit_cuda/library_epilogue.h"

#include <optional>

#include "graph/check.h"
#include "jit_cuda/matmul_plan.h"

namespace braze::cuda {

namespace {

const char* library_of(const Node& lib) { return lib.op == Op::MatMul ? "cuBLASLt" : "cuDNN"; }

bool scalar_operand(const Graph& g, const PostOp& p) {
  const Node& base = g[g.base(p.addend)];
  return base.op == Op::Input && base.rank() == 0;
}

// A Binary add's operand along the last axis only (stride 1), broadcast
// over every other axis.
bool bias_vector(const View& v) {
  const size_t r = v.shape.size();
  for (size_t d = 0; d + 1 < r; ++d)
    if (v.shape[d] != 1 && v.strides[d] != 0) return false;
  return r > 0 && (v.shape[r - 1] == 1 || v.strides[r - 1] == 1);
}

// A Binary operand that cuBLASLt reads as C: rows with stride 1 along the
// last axis and a leading dimension, batch axes with any stride >= 0.
bool residual_matrix(const View& v) {
  const size_t r = v.shape.size();
  for (size_t d = 0; d + 2 < r; ++d)
    if (v.shape[d] != 1 && v.strides[d] < 0) return false;
  return transposed_view(v.shape[r - 2], v.shape[r - 1], v.strides[r - 2], v.strides[r - 1], false).has_value();
}

// A matmul's post-op that is not a scale: its role for cuBLASLt.
std::optional<LibraryRole> classify_matmul(const Graph& g, const PostOp& p, bool& also_residual, std::string& why) {
  if (p.kind == PostOp::Kind::Activation) {
    if (p.activation == Activation::Relu || p.activation == Activation::GeluTanh) return LibraryRole::Activation;
    why = p.activation == Activation::Gelu
              ? "cuBLASLt's GELU epilogue is the tanh approximation, not gelu with erf: it runs as a kernel"
              : "cuBLASLt's epilogues apply relu and gelu (tanh), not " + std::string(name(p.activation));
    return std::nullopt;
  }
  const View& v = g[p.addend].view;
  if (p.op == Op::Add && bias_vector(v)) {
    also_residual = residual_matrix(v);
    return LibraryRole::Bias;
  }
  if ((p.op == Op::Add || p.op == Op::Sub) && residual_matrix(v)) return LibraryRole::Residual;
  why = "cuBLASLt adds a bias along the last axis (stride 1) or a tensor with contiguous rows (as C), and "
        "scales by a scalar; not " + describe(g, p);
  return std::nullopt;
}

// What a post-op can be for the library, on its own: nullopt and `why`
// when it can be nothing. A bias-shaped add may also serve as the
// residual (`also_residual`).
std::optional<LibraryRole> classify(const Graph& g, const Node& lib, const PostOp& p, bool& also_residual,
                                    std::string& why) {
  const std::string library = library_of(lib);
  const bool conv = lib.op == Op::Conv2d;
  also_residual = false;
  switch (p.kind) {
    case PostOp::Kind::Linear:
      if (p.beta == 0) return LibraryRole::Scale;
      why = library + " scales its result (alpha) but adds no constant to it";
      return std::nullopt;
    case PostOp::Kind::Binary:
      if ((p.op == Op::Mul || p.op == Op::Div) && scalar_operand(g, p)) return LibraryRole::Scale;
      break;
    case PostOp::Kind::Activation: break;
  }
  if (conv) {
    why = "cuDNN's convolution takes a scale (alpha) here, not a " + describe(g, p) +
          ": bias and activations run as a kernel after it";
    return std::nullopt;
  }
  std::optional<LibraryRole> role = classify_matmul(g, p, also_residual, why);
  if (lib.dtype != DType::Float64 || !role || *role == LibraryRole::Residual) return role;
  if (*role == LibraryRole::Bias && also_residual) {
    also_residual = false;
    return LibraryRole::Residual;
  }
  why = "braze takes no cuBLASLt bias or activation epilogue for float64: " + describe(g, p) + " runs as a kernel";
  return std::nullopt;
}

std::string refuse(const Graph& g, NodeId library, std::span<const PostOp> taken, const PostOp& next) {
  std::vector<PostOp> ops(taken.begin(), taken.end());
  ops.push_back(next);
  return assign_roles(g, library, ops).why_not;
}

}  // namespace

std::string_view name(LibraryRole r) {
  switch (r) {
    case LibraryRole::Scale: return "scale";
    case LibraryRole::Residual: return "residual";
    case LibraryRole::Bias: return "bias";
    case LibraryRole::Activation: return "activation";
  }
  return "?";
}

Roles planned_roles(const Graph& g, const FusedGroup& group) {
  const Node& lib = g[group.nodes[0]];
  const DType x = g[lib.inputs[0]].dtype, w = g[lib.inputs[1]].dtype, t = lib.dtype;
  const bool matmul = lib.op == Op::MatMul;
  BRAZE_CHECK((t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16 || t == DType::Float64) && x == t &&
                  w == t,
              info(lib.op).api, " on cuda: ", library_of(lib),
              " runs float32, float16, bfloat16 and float64 operands of the result's dtype, not ", name(x),
              matmul ? " @ " : " and ", name(w), " -> ", name(t), "; cast them with astype",
              matmul ? ", or run it on the CPU (.to('cpu'))" : "");
  Roles r = assign_roles(g, group.nodes[0], group.post_ops);
  BRAZE_ASSERT(r.why_not.empty(), "a ", info(lib.op).name, " group with a post-op ", library_of(lib),
               " refuses: ", r.why_not);
  return r;
}

bool computes_nothing(const Graph& g, NodeId library) {
  const Node& lib = g[library];
  if (numel(lib.shape()) == 0) return true;
  const Shape& w = g[lib.inputs[1]].shape();
  // matmul: K; conv2d: input channels per group x kernel taps.
  return lib.op == Op::MatMul ? w[w.size() - 2] == 0 : w[1] * w[2] * w[3] == 0;
}

Roles assign_roles(const Graph& g, NodeId library, std::span<const PostOp> ops) {
  const Node& lib = g[library];
  Roles r;
  if (!ops.empty() && computes_nothing(g, library)) {
    r.why_not = std::string(library_of(lib)) + " is not called for an empty result or an empty sum: the post-ops "
                "run as a kernel";
    return r;
  }
  bool added = false, bias = false, residual = false, activated = false;
  for (const PostOp& p : ops) {
    bool also_residual = false;
    std::optional<LibraryRole> role = classify(g, lib, p, also_residual, r.why_not);
    if (!role) return r;
    if (activated) {
      r.why_not = std::string(library_of(lib)) + " applies its activation last: " + describe(g, p) +
                  " after it runs as a kernel";
      return r;
    }
    if (*role == LibraryRole::Scale && added) {
      r.why_not = std::string(library_of(lib)) + " scales the product only (alpha), before its adds: " +
                  describe(g, p) + " runs as a kernel";
      return r;
    }
    if (*role == LibraryRole::Bias && bias) {
      if (!also_residual || residual) {
        r.why_not = "cuBLASLt adds one bias and one tensor (C): " + describe(g, p) + " runs as a kernel";
        return r;
      }
      role = LibraryRole::Residual;
    } else if (*role == LibraryRole::Residual && residual) {
      r.why_not = "cuBLASLt adds one tensor (C): " + describe(g, p) + " runs as a kernel";
      return r;
    }
    added = added || *role == LibraryRole::Bias || *role == LibraryRole::Residual;
    bias = bias || *role == LibraryRole::Bias;
    residual = residual || *role == LibraryRole::Residual;
    activated = *role == LibraryRole::Activation;
    r.roles.push_back(*role);
  }
  return r;
}

bool reads_operand(const Graph& g, const Node& library, size_t operand) {
  const View& v = g[library.inputs[operand]].view;
  const size_t r = v.shape.size();
  if (numel(v.shape) == 0) return true;  // nothing is read
  if (library.op == Op::MatMul)
    return transposed_view(v.shape[r - 2], v.shape[r - 1], v.strides[r - 2], v.strides[r - 1], true).has_value();
  // Note [cuDNN convolutions]: an operand's start is aligned for cuDNN's vector loads, or copied.
  if (v.offset * static_cast<int64_t>(itemsize(g[library.inputs[operand]].dtype)) % kCudnnOperandAlignment != 0)
    return false;
  Strides dense = contiguous_strides(v.shape);
  for (size_t d = 0; d < r; ++d) {
    if (v.shape[d] == 1) continue;  // any stride
    if (operand == 0 ? v.strides[d] <= 0 : v.strides[d] != dense[d]) return false;
  }
  return true;
}

const LibraryRules& cuda_library_rules() {
  // Note [Split reductions]: an H100 or H200 has 132 SMs, each holding
  // 2048 threads or four 512-thread blocks (a long row's block,
  // cuda_source.cpp): 1024 rows keep every SM busy about twice over, each
  // with at least 8192 elements (four 16-byte loads per thread); 2^18
  // columns fill every SM's threads, each walking at least 64 elements.
  // Below 2^16 elements (256 KB of float32), even one SM reads them in
  // about the time of the second kernel's launch.
  static const ReductionSplit split{1024, 8192, 1 << 18, 64, 1 << 16};
  // cuDNN's convolutions are of floats: an integer one becomes matmuls,
  // sums of products (Note [Convolutions as matmuls]).
  static const LibraryRules rules{"cuBLASLt/cuDNN", refuse, reads_operand, &split,
                                  [](const Graph&, const Node& conv) { return is_float(conv.dtype); }};
  return rules;
}

Scale collect_scale(const Graph& g, std::span<const PostOp> ops, std::span<const LibraryRole> roles) {
  BRAZE_ASSERT(ops.size() == roles.size(), ops.size(), " post-ops but ", roles.size(), " roles");
  Scale s;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (roles[i] != LibraryRole::Scale) continue;
    if (ops[i].kind == PostOp::Kind::Linear) s.alpha *= ops[i].alpha;
    else s.operands.push_back({g.base(ops[i].addend), ops[i].op == Op::Div});
  }
  return s;
}

}  // namespace braze::cuda
