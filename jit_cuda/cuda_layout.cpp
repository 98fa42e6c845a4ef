#include "jit_cuda/cuda_layout.h"

#include <algorithm>
#include <cstdlib>

#include "fusion/lower_windows.h"

namespace braze::cuda {

namespace {

bool has_view(const KernelInput& in) { return in.kind != KernelInput::Kind::Scalar; }

}  // namespace

bool CudaLayout::reduces() const { return std::find(reduced.begin(), reduced.end(), true) != reduced.end(); }

int64_t CudaLayout::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t CudaLayout::rows() const {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (!reduced[d]) n *= sizes[d];
  return n;
}

int64_t CudaLayout::row_length() const {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (reduced[d]) n *= sizes[d];
  return n;
}

CudaLayout make_layout(const KernelSpec& spec) {
  const size_t rank = spec.domain.size();
  std::vector<bool> is_reduced(rank, false);
  for (int64_t a : spec.reduce_axes) is_reduced[a] = true;
  // An input's stride along an axis, as the kernel reads it.
  auto stride = [&](const KernelInput& in, size_t d) -> int64_t {
    return in.space == Space::Reduced && is_reduced[d] ? 0 : in.view.strides[d];
  };

  CudaLayout l;
  l.strides.resize(spec.inputs.size());
  for (size_t k = 0; k < spec.inputs.size(); ++k) l.offsets.push_back(has_view(spec.inputs[k]) ? spec.inputs[k].view.offset : 0);
  for (size_t d = 0; d < rank; ++d) {
    if (spec.domain[d] == 1) continue;
    bool merge = !l.sizes.empty() && l.reduced.back() == is_reduced[d];
    for (size_t k = 0; merge && k < spec.inputs.size(); ++k) {
      const KernelInput& in = spec.inputs[k];
      if (has_view(in) && l.strides[k].back() != stride(in, d) * spec.domain[d]) merge = false;
    }
    if (merge) {
      l.sizes.back() *= spec.domain[d];
      for (size_t k = 0; k < spec.inputs.size(); ++k)
        if (has_view(spec.inputs[k])) l.strides[k].back() = stride(spec.inputs[k], d);
      continue;
    }
    l.sizes.push_back(spec.domain[d]);
    l.reduced.push_back(is_reduced[d]);
    for (size_t k = 0; k < spec.inputs.size(); ++k)
      if (has_view(spec.inputs[k])) l.strides[k].push_back(stride(spec.inputs[k], d));
  }
  // Every offset an input reaches lies between its offset plus its negative
  // and its positive extents (Note [CUDA index space]).
  l.index32 = l.numel() <= kMaxIndex32;
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    int64_t lo = l.offsets[k], hi = l.offsets[k];
    for (size_t d = 0; d < l.strides[k].size(); ++d) {
      int64_t reach = (l.sizes[d] - 1) * l.strides[k][d];
      (reach < 0 ? lo : hi) += reach;
    }
    if (lo < -kMaxIndex32 || hi > kMaxIndex32) l.index32 = false;
  }
  return l;
}

Access vector_access(const CudaLayout& l, size_t k, int64_t width) {
  const std::vector<int64_t>& s = l.strides[k];
  const size_t inner = s.size() - 1;
  bool aligned = l.offsets[k] % width == 0;
  for (size_t d = 0; d < inner; ++d) aligned = aligned && s[d] % width == 0;
  if (s[inner] == 0) return Access::Broadcast;
  return s[inner] == 1 && aligned ? Access::Vector : Access::Gather;
}

VectorPlan plan_vectors(const KernelSpec& spec, const CudaLayout& l) {
  VectorPlan p;
  if (l.sizes.empty() || l.numel() == 0) return p;
  // A row reduction reads along its one reduced axis, the innermost; only
  // what it reads per element (Full space) moves in vectors.
  const bool rows = l.reduces();
  if (rows && (!l.reduced.back() || std::count(l.reduced.begin(), l.reduced.end(), true) != 1)) return p;
  auto moves = [&](Space s) { return !rows || s == Space::Full; };
  int64_t widest = 1;
  for (const KernelInput& in : spec.inputs)
    if (in.kind == KernelInput::Kind::Buffer && moves(in.space)) widest = std::max<int64_t>(widest, itemsize(in.dtype));
  for (const KernelOutput& o : spec.outputs)
    if (moves(o.space)) widest = std::max<int64_t>(widest, itemsize(o.dtype));
  const int64_t width = kVectorBytes / widest;
  const size_t inner = l.sizes.size() - 1;
  const bool one_axis = inner == 0 && !rows;  // only then a scalar tail
  if (width < 2 || l.numel() < width || (!one_axis && l.sizes[inner] % width != 0)) return p;
  p.inputs.assign(spec.inputs.size(), Access::Gather);
  const std::vector<bool> masked = masked_inputs(spec);  // read element by element (Note [Masked loads])
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    if (spec.inputs[k].kind != KernelInput::Kind::Buffer || !moves(spec.inputs[k].space)) continue;
    if (masked[k]) {
      if (rows) return VectorPlan{};
      continue;
    }
    p.inputs[k] = vector_access(l, k, width);
    if (rows && p.inputs[k] == Access::Gather) return VectorPlan{};  // rows keep one element per step rather than gather
  }
  p.width = static_cast<int>(width);
  p.vectors = l.numel() / width;
  p.tail = l.numel() % width;
  return p;
}

const char* storage_type(DType t) {
  switch (t) {
    case DType::Bool: return "unsigned char";
    case DType::UInt8: return "unsigned char";
    case DType::Int8: return "signed char";
    case DType::UInt16: return "unsigned short";
    case DType::Int16: return "short";
    case DType::UInt32: return "unsigned int";
    case DType::Int32: return "int";
    case DType::Int64: return "long long";
    case DType::Float16: return "bz::f16_bits";
    case DType::BFloat16: return "bz::bf16_bits";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "?";
}

const char* register_type(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Float16:
    case DType::BFloat16: return "float";
    default: return storage_type(t);
  }
}

const char* compute_type(DType t) { return t == DType::Bool ? "int" : register_type(t); }

const char* accumulator_type(Op op, DType input) {
  if (input == DType::Float64 || (op == Op::Prod && is_float(input))) return "double";
  return is_float(input) ? "float" : "long long";
}

std::string round_to(DType t, const std::string& e) {
  if (t == DType::Float16) return "bz::rh(" + e + ")";
  if (t == DType::BFloat16) return "bz::rb(" + e + ")";
  return e;
}

std::string load_expr(DType t, const std::string& ptr, const std::string& index) {
  std::string at = ptr + "[" + index + "]";
  switch (t) {
    case DType::Bool: return "(" + at + " != 0)";
    case DType::Float16: return "bz::h2f(" + at + ")";
    case DType::BFloat16: return "bz::b2f(" + at + ")";
    default: return at;
  }
}

std::string store_expr(DType t, const std::string& value) {
  switch (t) {
    case DType::Bool: return "static_cast<unsigned char>(" + value + ")";
    case DType::Float16: return "bz::f2h(" + value + ")";
    case DType::BFloat16: return "bz::f2b(" + value + ")";
    default: return value;
  }
}

}  // namespace braze::cuda
