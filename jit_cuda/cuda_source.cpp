#include "jit_cuda/cuda_source.h"

#include <algorithm>
#include <sstream>

#include "fusion/loop_order.h"
#include "fusion/lower_windows.h"
#include "graph/check.h"
#include "graph/infer.h"
#include "jit_cuda/cuda_layout.h"
#include "jit_cuda/cuda_source_renderer.h"

namespace braze::cuda {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

Renderer::Renderer(const KernelSpec& spec) : spec_(spec), l_(make_layout(spec)) {
  if (!l_.reduces() && !(tiled_ = tiled_inputs(spec_, l_)).empty()) {
    if ((paired_ = pairs_tiles(spec_, l_, tiled_))) plan_pairs();
    launch_ = {KernelShape::Tiles, kTileThreads, tile_units()};
  } else if (!l_.reduces()) {
    vec_ = plan_vectors(spec_, l_);
    launch_ = {KernelShape::Elements, 256, vec_.width > 1 ? vec_.vectors : l_.numel()};
  } else if (l_.reduced.back()) {
    vec_ = plan_vectors(spec_, l_);
    launch_ = {KernelShape::BlockPerRow, row_threads(l_.row_length() / vec_.width), l_.rows()};
  } else if (l_.rows() < kSplitColumnsBelow && l_.row_length() >= kMinSplitLength) {
    split_columns_ = 1;
    while (split_columns_ < 32 && split_columns_ < l_.rows()) split_columns_ *= 2;
    launch_ = {KernelShape::SplitColumns, kSplitThreads, (l_.rows() + split_columns_ - 1) / split_columns_};
  } else {
    launch_ = {KernelShape::ThreadPerRow, 128, l_.rows()};
  }
}

CudaKernelSource Renderer::run() {
  CudaKernelSource k;
  k.name = kernel_name();
  std::string text = canonical_text(spec_);
  out_ << "// braze CUDA kernel " << k.name << " (codegen " << kCudaCodegenVersion << ", " << name(launch_.shape)
       << (vec_.width > 1 ? ", " + std::to_string(vec_.width) + " elements per thread" : "") << ")\n// key "
       << kernel_key(spec_).hex() << "\n";
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out_ << "//   " << line << "\n";
  out_ << "#include \"graph/scalar_math.h\"\n#include \"braze/prelude.cuh\"\n\n";
  out_ << "extern \"C\" __global__ void __launch_bounds__(" << launch_.threads << ") " << k.name << "(" << params(k.param_types)
       << ") {\n";
  // Offsets are signed (strides may be negative), linear indices and loop
  // counters unsigned (Note [CUDA index space]).
  if (l_.index32) out_ << "  typedef int I;\n  typedef unsigned U;\n";
  else out_ << "  typedef long long I;\n  typedef unsigned long long U;\n";
  for (size_t d = 0; d < l_.sizes.size(); ++d) out_ << "  [[maybe_unused]] constexpr U n" << d << " = " << l_.sizes[d] << ";\n";
  for (size_t i = 0; i < spec_.body.size(); ++i)
    if (is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), "  ");
  if (launch_.shape == KernelShape::Elements) elements();
  else if (launch_.shape == KernelShape::Tiles) tiles();
  else rows();
  out_ << "}\n";
  k.launch = launch_;  // after the body, which may need exact_threads
  k.source = out_.str();
  return k;
}

int Renderer::row_threads(int64_t length) {
  if (length <= 256) return static_cast<int>(std::max<int64_t>(32, (length + 31) / 32 * 32));
  return length <= 4096 ? 256 : 512;
}

std::string Renderer::kernel_name() const {
  std::string n = "bz_";
  switch (launch_.shape) {
    case KernelShape::Elements: n += "ew"; break;
    case KernelShape::Tiles: n += "tile"; break;
    case KernelShape::BlockPerRow: n += "row"; break;
    case KernelShape::ThreadPerRow: n += "col"; break;
    case KernelShape::SplitColumns: n += "colsplit"; break;
  }
  std::vector<Op> seen;
  for (const KernelOp& op : spec_.body) {
    if (op.op == Op::Input || std::find(seen.begin(), seen.end(), op.op) != seen.end()) continue;
    seen.push_back(op.op);
    if (seen.size() <= 3) n += "_" + lower(info(op.op).name);
  }
  if (seen.empty()) n += "_copy";
  return n + "_" + kernel_key(spec_).hex().substr(0, 12);
}

std::string Renderer::params(std::vector<std::string>& types) const {
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
      case KernelInput::Kind::Window: break;  // computed from the index
    }
  }
  for (size_t k = 0; k < spec_.outputs.size(); ++k)
    add(std::string(storage_type(spec_.outputs[k].dtype)) + "* __restrict__ out" + std::to_string(k));
  return p;
}

bool Renderer::is_scalar(int32_t i) const {
  const KernelOp& op = spec_.body[i];
  return op.op == Op::Input && spec_.inputs[op.input].kind == KernelInput::Kind::Scalar;
}

// Computed inside the passes over a row (every value, for Elements).
bool Renderer::per_element(int32_t i) const {
  return !is_scalar(i) && (launch_.shape == KernelShape::Elements || spec_.body[i].space == Space::Full);
}

// The element offset of input k from the axis variables x<d>, plus the
// lane's step along the innermost axis inside a vector kernel's lane loop.
std::string Renderer::offset(size_t k) const {
  std::string e = std::to_string(l_.offsets[k]);
  for (size_t d = 0; d < l_.strides[k].size(); ++d) {
    int64_t s = l_.strides[k][d];
    if (s == 0) continue;
    std::string x = "x" + std::to_string(d);
    if (!lane_.empty() && d + 1 == l_.strides[k].size()) x = "(" + x + " + " + lane_ + ")";
    e += " + " + x + (s == 1 ? "" : " * " + std::to_string(s));
  }
  return e;
}

// Defines x<d> (signed: offsets may subtract) for `axes` (row-major) from
// the linear index `var` (unsigned: cheaper division by the constants).
void Renderer::decompose(const std::string& var, const std::vector<size_t>& axes, const std::string& ind) {
  if (axes.empty()) return;
  if (axes.size() == 1) {
    out_ << ind << "const I x" << axes[0] << " = (I)" << var << ";\n";
    return;
  }
  out_ << ind << "U t = " << var << ";\n";
  for (size_t a = axes.size(); a-- > 1;) {
    std::string d = std::to_string(axes[a]);
    out_ << ind << "const I x" << d << " = (I)(t % n" << d << "); t /= n" << d << ";\n";
  }
  out_ << ind << "const I x" << axes[0] << " = (I)t;\n";
}

std::vector<size_t> Renderer::axes(bool reduced) const {
  std::vector<size_t> a;
  for (size_t d = 0; d < l_.sizes.size(); ++d)
    if (l_.reduced[d] == reduced) a.push_back(d);
  return a;
}

std::string Renderer::dense_index() const {
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
void Renderer::emit_value(int32_t i, const std::string& ind) {
  const KernelOp& op = spec_.body[i];
  std::string r = register_type(op.dtype);
  // A load is already a value of its dtype; everything else is rounded to it.
  bool load = op.op == Op::Input && spec_.inputs[op.input].kind == KernelInput::Kind::Buffer;
  std::string e = value_expr(op, r);
  out_ << ind << "const " << r << " " << value_name(i) << " = " << (load ? e : round_to(op.dtype, e)) << ";\n";
}

std::string Renderer::value_expr(const KernelOp& op, const std::string& r) const {
  if (op.op == Op::Input) {
    const KernelInput& in = spec_.inputs[op.input];
    std::string k = std::to_string(op.input);
    switch (in.kind) {
      case KernelInput::Kind::Buffer:
        if (!op.args.empty())  // a masked load (Note [Masked loads]): no address read where the mask is false
          return "(" + value_name(op.args[0]) + " ? " + load_expr(in.dtype, "in" + k, offset(op.input)) + " : bz::cv<" +
                 r + ">(0ll))";
        if (staged_ && (tiled_[op.input] || (!partner_.empty() && partner_[op.input] >= 0))) return tile_read(op.input);
        if (!lane_.empty() && vec_.inputs[op.input] == Access::Vector) return load_expr(in.dtype, "r" + k + ".v", lane_);
        if (!lane_.empty() && vec_.inputs[op.input] == Access::Broadcast) return "b" + k;
        return load_expr(in.dtype, "in" + k, offset(op.input));
      case KernelInput::Kind::Scalar: return "bz::cv<" + r + ">(s" + k + ")";
      case KernelInput::Kind::Arange: {
        std::string at = "(long long)(" + offset(op.input) + ")";
        if (is_float(in.dtype)) return "bz::cv<" + r + ">(a" + k + "_start + (double)" + at + " * a" + k + "_step)";
        return "bz::cv<" + r + ">((long long)((unsigned long long)a" + k + "_start + (unsigned long long)" + at +
               " * (unsigned long long)a" + k + "_step))";
      }
      case KernelInput::Kind::Window: {
        std::string at = "(long long)(" + offset(op.input) + ")";
        return "(" + at + " >= " + std::to_string(in.bounds.lo) + "ll && " + at + " < " + std::to_string(in.bounds.hi) +
               "ll)";
      }
    }
  }
  if (is_reduce(op.op)) {  // over no axes, or size-1 ones only: the value itself
    if (op.op == Op::ArgMax || op.op == Op::ArgMin) return "bz::cv<" + r + ">(0ll)";
    DType in = spec_.body[op.args[0]].dtype;
    return "bz::cv<" + r + ">(bz::cv<" + accumulator_type(op.op, in) + ">(" + value_name(op.args[0]) + "))";
  }
  std::vector<DType> types;
  for (int32_t a : op.args) types.push_back(spec_.body[a].dtype);
  std::string ct = compute_type(compute_dtype(op.op, types, op.dtype));
  std::string call = "braze::fn::" + std::string(info(op.op).name) + "{}(";
  for (size_t k = 0; k < op.args.size(); ++k) {
    bool condition = op.op == Op::Where && k == 0;
    call += (k ? ", " : "") + std::string("bz::cv<") + (condition ? "bool" : ct) + ">(" + value_name(op.args[k]) + ")";
  }
  return "bz::cv<" + r + ">(" + call + "))";
}

// The per-element values that `targets` need.
std::vector<bool> Renderer::closure(const std::vector<int32_t>& targets) const {
  std::vector<bool> need(spec_.body.size(), false);
  std::vector<int32_t> stack = targets;
  while (!stack.empty()) {
    int32_t i = stack.back();
    stack.pop_back();
    if (need[i] || !per_element(i)) continue;
    need[i] = true;
    for (int32_t a : spec_.body[i].args) stack.push_back(a);
  }
  return need;
}

// Those values, in body order.
void Renderer::emit_closure(const std::vector<int32_t>& targets, const std::string& ind) {
  std::vector<bool> need = closure(targets);
  for (size_t i = 0; i < need.size(); ++i)
    if (need[i]) emit_value(static_cast<int32_t>(i), ind);
}

const char* name(KernelShape s) {
  switch (s) {
    case KernelShape::Elements: return "elements";
    case KernelShape::Tiles: return "tiles";
    case KernelShape::BlockPerRow: return "block per row";
    case KernelShape::ThreadPerRow: return "thread per row";
    case KernelShape::SplitColumns: return "split columns";
  }
  return "?";
}

// The grid never has more than kMaxGridThreads threads, which the 32-bit
// index math relies on (Note [CUDA index space]).
int64_t CudaLaunch::blocks(int64_t max_blocks) const {
  bool block_per_item = shape == KernelShape::BlockPerRow || shape == KernelShape::SplitColumns || shape == KernelShape::Tiles;
  int64_t b = block_per_item ? work : (work + threads - 1) / threads;
  return std::min({b, max_blocks, kMaxGridThreads / threads});
}

CudaKernelSource render_cuda(const KernelSpec& spec) {
  KernelSpec loops = lower_windows(spec);  // Note [Masked loads]
  order_loops(loops, Combine::AnyOrder);  // Note [Loops in memory order]
  return Renderer(loops).run();
}

}  // namespace braze::cuda
