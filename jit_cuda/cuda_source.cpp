#include "jit_cuda/cuda_source.h"

#include <algorithm>
#include <sstream>

#include "graph/check.h"
#include "graph/infer.h"
#include "jit_cuda/cuda_layout.h"

namespace braze::cuda {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string v(int32_t i) { return "v" + std::to_string(i); }

// The reduction's combining functor (prelude.cuh), identity, and the
// accumulator's type.
struct Reduction {
  std::string op, identity, acc;
  bool arg = false;
};

Reduction reduction_of(Op op, DType input) {
  std::string a = accumulator_type(input);
  bool ll = a == "long long";
  std::string lowest = ll ? "(long long)(1ull << 63)"
                          : a == "float" ? "__int_as_float(0xff800000)" : "__longlong_as_double(0xfff0000000000000ull)";
  std::string highest = ll ? "0x7fffffffffffffffll"
                           : a == "float" ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000ull)";
  switch (op) {
    case Op::Sum: return {"bz::SumOp{}", "static_cast<" + a + ">(0)", a};
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

class Renderer {
 public:
  explicit Renderer(const KernelSpec& spec) : spec_(spec), l_(make_layout(spec)) {
    if (!l_.reduces()) launch_ = {KernelShape::Elements, 256, l_.numel()};
    else if (l_.reduced.back()) launch_ = {KernelShape::BlockPerRow, row_threads(l_.row_length()), l_.rows()};
    else launch_ = {KernelShape::ThreadPerRow, 128, l_.rows()};
  }

  CudaKernelSource run() {
    CudaKernelSource k;
    k.name = kernel_name();
    k.launch = launch_;
    std::string text = canonical_text(spec_);
    out_ << "// braze CUDA kernel " << k.name << " (codegen " << kCudaCodegenVersion << ", " << name(launch_.shape)
         << ")\n// key " << kernel_key(spec_).hex() << "\n";
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) out_ << "//   " << line << "\n";
    out_ << "#include \"graph/scalar_math.h\"\n#include \"braze/prelude.cuh\"\n\n";
    out_ << "extern \"C\" __global__ void __launch_bounds__(" << launch_.threads << ") " << k.name << "(" << params(k.param_types)
         << ") {\n";
    out_ << "  typedef " << (l_.index32 ? "int" : "long long") << " I;\n";
    for (size_t d = 0; d < l_.sizes.size(); ++d) out_ << "  [[maybe_unused]] constexpr I n" << d << " = " << l_.sizes[d] << ";\n";
    for (size_t i = 0; i < spec_.body.size(); ++i)
      if (is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), "  ");
    if (launch_.shape == KernelShape::Elements) elements();
    else rows();
    out_ << "}\n";
    k.source = out_.str();
    return k;
  }

 private:
  static int row_threads(int64_t length) {
    if (length <= 256) return static_cast<int>(std::max<int64_t>(32, (length + 31) / 32 * 32));
    return length <= 4096 ? 256 : 512;
  }

  std::string kernel_name() const {
    std::string n = "bz_";
    n += launch_.shape == KernelShape::Elements ? "ew" : launch_.shape == KernelShape::BlockPerRow ? "row" : "col";
    std::vector<Op> seen;
    for (const KernelOp& op : spec_.body) {
      if (op.op == Op::Input || std::find(seen.begin(), seen.end(), op.op) != seen.end()) continue;
      seen.push_back(op.op);
      if (seen.size() <= 3) n += "_" + lower(info(op.op).name);
    }
    if (seen.empty()) n += "_copy";
    return n + "_" + kernel_key(spec_).hex().substr(0, 12);
  }

  std::string params(std::vector<std::string>& types) const {
    std::string p;
    auto add = [&](const std::string& s) {
      p += (p.empty() ? "" : ", ") + s;
      std::string type = s.substr(0, s.rfind(' '));
      if (type.ends_with(" __restrict__")) type.resize(type.size() - 13);
      types.push_back(type);
    };
    for (size_t k = 0; k < spec_.inputs.size(); ++k) {
      const KernelInput& in = spec_.inputs[k];
      std::string n = std::to_string(k);
      const char* value_type = is_float(in.dtype) ? "double" : "long long";
      switch (in.kind) {
        case KernelInput::Kind::Buffer: add(std::string("const ") + storage_type(in.dtype) + "* __restrict__ in" + n); break;
        case KernelInput::Kind::Scalar: add(std::string(value_type) + " s" + n); break;
        case KernelInput::Kind::Arange:
          add(std::string(value_type) + " a" + n + "_start");
          add(std::string(value_type) + " a" + n + "_step");
          break;
      }
    }
    for (size_t k = 0; k < spec_.outputs.size(); ++k)
      add(std::string(storage_type(spec_.outputs[k].dtype)) + "* __restrict__ out" + std::to_string(k));
    return p;
  }

  bool is_scalar(int32_t i) const {
    const KernelOp& op = spec_.body[i];
    return op.op == Op::Input && spec_.inputs[op.input].kind == KernelInput::Kind::Scalar;
  }
  // Computed inside the passes over a row (every value, for Elements).
  bool per_element(int32_t i) const {
    return !is_scalar(i) && (launch_.shape == KernelShape::Elements || spec_.body[i].space == Space::Full);
  }

  // The element offset of input k from the axis variables x<d>.
  std::string offset(size_t k) const {
    std::string e = std::to_string(l_.offsets[k]);
    for (size_t d = 0; d < l_.strides[k].size(); ++d) {
      int64_t s = l_.strides[k][d];
      if (s == 0) continue;
      e += " + x" + std::to_string(d) + (s == 1 ? "" : " * " + std::to_string(s));
    }
    return e;
  }

  // Defines x<d> for `axes` (row-major) from the linear index `var`.
  void decompose(const std::string& var, const std::vector<size_t>& axes, const std::string& ind) {
    if (axes.empty()) return;
    if (axes.size() == 1) {
      out_ << ind << "const I x" << axes[0] << " = " << var << ";\n";
      return;
    }
    out_ << ind << "I t = " << var << ";\n";
    for (size_t a = axes.size(); a-- > 1;) {
      std::string d = std::to_string(axes[a]);
      out_ << ind << "const I x" << d << " = t % n" << d << "; t /= n" << d << ";\n";
    }
    out_ << ind << "const I x" << axes[0] << " = t;\n";
  }

  std::vector<size_t> axes(bool reduced) const {
    std::vector<size_t> a;
    for (size_t d = 0; d < l_.sizes.size(); ++d)
      if (l_.reduced[d] == reduced) a.push_back(d);
    return a;
  }

  std::string dense_index() const {
    std::string e;
    int64_t stride = 1;
    for (size_t d = l_.sizes.size(); d-- > 0;) {
      std::string term = "x" + std::to_string(d) + (stride == 1 ? "" : " * " + std::to_string(stride));
      e = e.empty() ? term : term + " + " + e;
      stride *= l_.sizes[d];
    }
    return e.empty() ? "0" : e;
  }

  // One value that is not a reduction pass: a load or an element-wise op.
  void emit_value(int32_t i, const std::string& ind) {
    const KernelOp& op = spec_.body[i];
    std::string r = register_type(op.dtype);
    // A load is already a value of its dtype; everything else is rounded to it.
    bool load = op.op == Op::Input && spec_.inputs[op.input].kind == KernelInput::Kind::Buffer;
    std::string e = value_expr(op, r);
    out_ << ind << "const " << r << " " << v(i) << " = " << (load ? e : round_to(op.dtype, e)) << ";\n";
  }

  std::string value_expr(const KernelOp& op, const std::string& r) const {
    if (op.op == Op::Input) {
      const KernelInput& in = spec_.inputs[op.input];
      std::string k = std::to_string(op.input);
      switch (in.kind) {
        case KernelInput::Kind::Buffer: return load_expr(in.dtype, "in" + k, offset(op.input));
        case KernelInput::Kind::Scalar: return "bz::cv<" + r + ">(s" + k + ")";
        case KernelInput::Kind::Arange: {
          std::string at = "(long long)(" + offset(op.input) + ")";
          if (is_float(in.dtype)) return "bz::cv<" + r + ">(a" + k + "_start + (double)" + at + " * a" + k + "_step)";
          return "bz::cv<" + r + ">((long long)((unsigned long long)a" + k + "_start + (unsigned long long)" + at +
                 " * (unsigned long long)a" + k + "_step))";
        }
      }
    }
    if (is_reduce(op.op)) {  // over no axes, or size-1 ones only: the value itself
      if (op.op == Op::ArgMax || op.op == Op::ArgMin) return "bz::cv<" + r + ">(0ll)";
      DType in = spec_.body[op.args[0]].dtype;
      return "bz::cv<" + r + ">(bz::cv<" + accumulator_type(in) + ">(" + v(op.args[0]) + "))";
    }
    std::vector<DType> types;
    for (int32_t a : op.args) types.push_back(spec_.body[a].dtype);
    std::string ct = compute_type(compute_dtype(op.op, types, op.dtype));
    std::string call = "braze::fn::" + std::string(info(op.op).name) + "{}(";
    for (size_t k = 0; k < op.args.size(); ++k) {
      bool condition = op.op == Op::Where && k == 0;
      call += (k ? ", " : "") + std::string("bz::cv<") + (condition ? "bool" : ct) + ">(" + v(op.args[k]) + ")";
    }
    return "bz::cv<" + r + ">(" + call + "))";
  }

  void elements() {
    out_ << "  constexpr I kN = " << l_.numel() << ";\n";
    out_ << "  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < kN; i += (I)gridDim.x * blockDim.x) {\n";
    decompose("i", axes(false), "    ");
    for (size_t i = 0; i < spec_.body.size(); ++i)
      if (!is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), "    ");
    for (size_t k = 0; k < spec_.outputs.size(); ++k)
      out_ << "    out" << k << "[i] = " << store_expr(spec_.outputs[k].dtype, v(spec_.outputs[k].value)) << ";\n";
    out_ << "  }\n";
  }

  // The per-element values that `targets` need, in body order.
  void emit_closure(const std::vector<int32_t>& targets, const std::string& ind) {
    std::vector<bool> need(spec_.body.size(), false);
    std::vector<int32_t> stack = targets;
    while (!stack.empty()) {
      int32_t i = stack.back();
      stack.pop_back();
      if (need[i] || !per_element(i)) continue;
      need[i] = true;
      for (int32_t a : spec_.body[i].args) stack.push_back(a);
    }
    for (size_t i = 0; i < need.size(); ++i)
      if (need[i]) emit_value(static_cast<int32_t>(i), ind);
  }

  void rows() {
    bool block = launch_.shape == KernelShape::BlockPerRow;
    for (size_t i = 0; i < spec_.body.size(); ++i) {
      const KernelOp& op = spec_.body[i];
      if (is_reduce(op.op) && !op.attr.ints.empty() && block)
        out_ << "  __shared__ " << reduction_of(op.op, spec_.body[op.args[0]].dtype).acc << " sh" << i << "[32];\n";
    }
    out_ << "  constexpr I kRows = " << l_.rows() << ", kL = " << l_.row_length() << ";\n";
    if (block) out_ << "  for (I row = blockIdx.x; row < kRows; row += gridDim.x) {\n";
    else out_ << "  for (I row = blockIdx.x * (I)blockDim.x + threadIdx.x; row < kRows; row += (I)gridDim.x * blockDim.x) {\n";
    decompose("row", axes(false), "    ");
    const std::string loop = block ? "    for (I j = threadIdx.x; j < kL; j += blockDim.x) {\n"
                                   : "    for (I j = 0; j < kL; ++j) {\n";
    for (size_t n = 0; n < spec_.body.size(); ++n) {
      int32_t i = static_cast<int32_t>(n);
      const KernelOp& op = spec_.body[i];
      if (is_scalar(i) || per_element(i)) continue;
      if (!is_reduce(op.op) || op.attr.ints.empty()) {
        emit_value(i, "    ");
        continue;
      }
      BRAZE_ASSERT(op.attr.ints == spec_.reduce_axes, "a reduction over other axes than its kernel's");
      Reduction red = reduction_of(op.op, spec_.body[op.args[0]].dtype);
      std::string acc = "acc" + std::to_string(i);
      out_ << "    " << red.acc << " " << acc << " = " << red.identity << ";\n" << loop;
      decompose("j", axes(true), "      ");
      emit_closure({op.args[0]}, "      ");
      std::string x = "bz::cv<" + std::string(accumulator_type(spec_.body[op.args[0]].dtype)) + ">(" + v(op.args[0]) + ")";
      if (red.arg) x = red.acc + "{" + x + ", (long long)j}";
      out_ << "      " << acc << " = " << red.op << "(" << acc << ", " << x << ");\n    }\n";
      if (block)
        out_ << "    " << acc << " = bz::block_reduce(" << acc << ", " << red.op << ", " << red.identity << ", sh" << i << ");\n";
      std::string r = register_type(op.dtype);
      std::string value = "bz::cv<" + r + ">(" + acc + (red.arg ? ".i" : "") + ")";
      out_ << "    const " << r << " " << v(i) << " = " << round_to(op.dtype, value) << ";\n";
    }
    std::vector<int32_t> full;
    for (const KernelOutput& o : spec_.outputs)
      if (o.space == Space::Full) full.push_back(o.value);
    if (!full.empty()) {
      out_ << loop;
      decompose("j", axes(true), "      ");
      emit_closure(full, "      ");
      for (size_t k = 0; k < spec_.outputs.size(); ++k)
        if (spec_.outputs[k].space == Space::Full)
          out_ << "      out" << k << "[" << dense_index() << "] = "
               << store_expr(spec_.outputs[k].dtype, v(spec_.outputs[k].value)) << ";\n";
      out_ << "    }\n";
    }
    for (size_t k = 0; k < spec_.outputs.size(); ++k) {
      if (spec_.outputs[k].space != Space::Reduced) continue;
      out_ << "    " << (block ? "if (threadIdx.x == 0) " : "") << "out" << k
           << "[row] = " << store_expr(spec_.outputs[k].dtype, v(spec_.outputs[k].value)) << ";\n";
    }
    out_ << "  }\n";
  }

  const KernelSpec& spec_;
  CudaLayout l_;
  CudaLaunch launch_;
  std::ostringstream out_;
};

}  // namespace

const char* name(KernelShape s) {
  switch (s) {
    case KernelShape::Elements: return "elements";
    case KernelShape::BlockPerRow: return "block per row";
    case KernelShape::ThreadPerRow: return "thread per row";
  }
  return "?";
}

int64_t CudaLaunch::blocks(int64_t max_blocks) const {
  int64_t b = shape == KernelShape::BlockPerRow ? work : (work + threads - 1) / threads;
  return std::min(b, max_blocks);
}

CudaKernelSource render_cuda(const KernelSpec& spec) { return Renderer(spec).run(); }

}  // namespace braze::cuda
