// Element-wise kernels (Note [CUDA kernel shapes], Elements): a grid-stride
// loop over the domain, one element per step, or `width` elements per step
// through aligned vector loads and stores (Note [CUDA vector access]).
#include <string>

#include "jit_cuda/cuda_source_renderer.h"

namespace braze::cuda {

void Renderer::elements() {
  out_ << "  constexpr U kN = " << l_.numel() << ";\n";
  if (vec_.width == 1) {
    scalar_elements("0");
    return;
  }
  vector_elements();
  // The last numel % width elements of a one-axis domain.
  if (vec_.tail > 0) scalar_elements("kVectors * " + std::to_string(vec_.width));
}

void Renderer::scalar_elements(const std::string& first) {
  out_ << "  for (U i = " << first << " + blockIdx.x * (U)blockDim.x + threadIdx.x; i < kN; i += (U)gridDim.x * blockDim.x) {\n";
  decompose("i", axes(false), "    ");
  for (size_t i = 0; i < spec_.body.size(); ++i)
    if (!is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), "    ");
  for (size_t k = 0; k < spec_.outputs.size(); ++k)
    out_ << "    out" << k << "[i] = " << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value)) << ";\n";
  out_ << "  }\n";
}

// Step q covers elements q * width ...: x<d> name the first of them (the
// innermost one a multiple of width), Vector inputs are loaded whole and
// Broadcast ones once before the lane loop, which computes the body per
// element (lane e) into the output vectors, stored whole after it.
void Renderer::vector_elements() {
  const std::string w = std::to_string(vec_.width);
  out_ << "  constexpr U kVectors = " << vec_.vectors << ";\n";
  out_ << "  for (U q = blockIdx.x * (U)blockDim.x + threadIdx.x; q < kVectors; q += (U)gridDim.x * blockDim.x) {\n";
  out_ << "    const U i = q * " << w << ";\n";
  decompose("i", axes(false), "    ");
  emit_vector_loads(std::vector<bool>(spec_.body.size(), true), "    ");
  for (size_t k = 0; k < spec_.outputs.size(); ++k)
    out_ << "    bz::Vec<" << storage_type(spec_.outputs[k].dtype) << ", " << w << "> o" << k << ";\n";
  out_ << "#pragma unroll\n    for (int e = 0; e < " << w << "; ++e) {\n";
  lane_ = "e";
  for (size_t i = 0; i < spec_.body.size(); ++i)
    if (!is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), "      ");
  lane_.clear();
  for (size_t k = 0; k < spec_.outputs.size(); ++k)
    out_ << "      o" << k << ".v[e] = " << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value)) << ";\n";
  out_ << "    }\n";
  for (size_t k = 0; k < spec_.outputs.size(); ++k) out_ << "    bz::store_vec(out" << k << " + i, o" << k << ");\n";
  out_ << "  }\n";
}

// Before a lane loop: the Vector inputs among the values `need`s, loaded
// whole, and the Broadcast ones, loaded once.
void Renderer::emit_vector_loads(const std::vector<bool>& need, const std::string& ind) {
  const std::string w = std::to_string(vec_.width);
  std::vector<bool> loaded(spec_.inputs.size(), false);
  for (size_t i = 0; i < need.size(); ++i) {
    const KernelOp& op = spec_.body[i];
    if (!need[i] || op.op != Op::Input || loaded[op.input]) continue;
    const size_t k = static_cast<size_t>(op.input);
    const KernelInput& in = spec_.inputs[k];
    if (in.kind != KernelInput::Kind::Buffer) continue;
    loaded[k] = true;
    std::string n = std::to_string(k);
    if (!cached_.empty() && cached_[k]) {  // Note [Rows held in registers]
      out_ << ind << "const bz::Vec<" << storage_type(in.dtype) << ", " << w << ">& r" << n << " = c" << n << "[it];\n";
    } else if (vec_.inputs[k] == Access::Vector) {
      std::string vt = std::string("bz::Vec<") + storage_type(in.dtype) + ", " + w + ">";
      out_ << ind << "const " << vt << " r" << n << " = bz::load_vec<" << storage_type(in.dtype) << ", " << w << ">(in"
           << n << " + (" << offset(k) << "));\n";
    } else if (vec_.inputs[k] == Access::Broadcast) {
      out_ << ind << "const " << register_type(in.dtype) << " b" << n << " = " << load_expr(in.dtype, "in" + n, offset(k))
           << ";\n";
    }
  }
}

}  // namespace braze::cuda
