// Element-wise kernels over tiles (Note [CUDA kernel shapes], Tiles): the
// inputs read transposed staged through shared memory.
#include <string>

#include "fusion/lower_windows.h"
#include "jit_cuda/cuda_source_renderer.h"

namespace braze::cuda {

// Per spec input, whether a Tiles kernel stages it: a buffer that steps 1
// along the second-to-last collapsed axis and not along the last. Empty
// when there is none, when the domain is not at least kTile x kTile in its
// last two axes, or when more than kMaxTiledInputs would be.
std::vector<bool> Renderer::tiled_inputs(const KernelSpec& spec, const CudaLayout& l) {
  const size_t n = l.sizes.size();
  if (n < 2 || l.sizes[n - 2] < kTile || l.sizes[n - 1] < kTile) return {};
  std::vector<bool> tiled(spec.inputs.size(), false);
  const std::vector<bool> masked = masked_inputs(spec);  // read element by element (Note [Masked loads])
  size_t count = 0;
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    if (spec.inputs[k].kind != KernelInput::Kind::Buffer || masked[k]) continue;
    const std::vector<int64_t>& st = l.strides[k];
    if (st[n - 2] == 1 && st[n - 1] != 1 && st[n - 1] != 0) tiled[k] = true, ++count;
  }
  if (count == 0 || count > kMaxTiledInputs) return {};
  return tiled;
}

// A block per tile (grid-stride over tiles): thread t is column tx = t %
// kTile of the tile and starts at row t / kTile, stepping blockDim.x /
// kTile rows (any multiple of 32 threads runs it). The staging pass reads
// tile<k>[c][r] = input k at (row r, column c), r varying fastest across a
// warp (the input's contiguous axis); the compute pass gives thread tx
// column tx of rows r, so outputs and the inputs read straight coalesce,
// and reads tile<k>[tx][r]. Threads outside the domain (the last tiles'
// edges) load and store nothing but reach every barrier.
void Renderer::tiles() {
  const size_t n = l_.sizes.size();
  const std::string row = "x" + std::to_string(n - 2), col = "x" + std::to_string(n - 1);
  const std::string side = std::to_string(kTile);
  for (size_t k = 0; k < tiled_.size(); ++k)
    if (tiled_[k])
      out_ << "  __shared__ " << storage_type(spec_.inputs[k].dtype) << " tile" << k << "[" << side << "][" << side
           << " + 1];\n";
  out_ << "  constexpr U kTileRows = (n" << n - 2 << " + " << side << " - 1) / " << side << ", kTileColumns = (n"
       << n - 1 << " + " << side << " - 1) / " << side << ";\n";
  out_ << "  constexpr U kTiles = " << launch_.work << ";\n";
  out_ << "  const unsigned tx = threadIdx.x % " << side << ", first = threadIdx.x / " << side << ", step = blockDim.x / "
       << side << ";\n";
  out_ << "  for (U tile = blockIdx.x; tile < kTiles; tile += gridDim.x) {\n";
  out_ << "    const I c0 = (I)(tile % kTileColumns) * " << side << ", r0 = (I)(tile / kTileColumns % kTileRows) * " << side
       << ";\n";
  std::vector<size_t> outer;
  for (size_t d = 0; d + 2 < n; ++d) outer.push_back(d);
  if (!outer.empty()) {
    out_ << "    const U outer = tile / (kTileColumns * kTileRows);\n";
    decompose("outer", outer, "    ");
  }
  // Staging: thread tx reads row r0 + tx, column c0 + r of each tiled input.
  out_ << "    for (unsigned r = first; r < " << side << "; r += step) {\n";
  out_ << "      const I " << row << " = r0 + (I)tx, " << col << " = c0 + (I)r;\n";
  out_ << "      if (" << row << " < (I)n" << n - 2 << " && " << col << " < (I)n" << n - 1 << ") {\n";
  for (size_t k = 0; k < tiled_.size(); ++k)
    if (tiled_[k]) out_ << "        tile" << k << "[r][tx] = in" << k << "[" << offset(k) << "];\n";
  out_ << "      }\n    }\n    __syncthreads();\n";
  // Compute: thread tx is column c0 + tx of row r0 + r.
  out_ << "    for (unsigned r = first; r < " << side << "; r += step) {\n";
  out_ << "      const I " << row << " = r0 + (I)r, " << col << " = c0 + (I)tx;\n";
  out_ << "      if (" << row << " < (I)n" << n - 2 << " && " << col << " < (I)n" << n - 1 << ") {\n";
  staged_ = true;
  for (size_t i = 0; i < spec_.body.size(); ++i)
    if (!is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), "        ");
  staged_ = false;
  for (size_t k = 0; k < spec_.outputs.size(); ++k)
    out_ << "        out" << k << "[" << dense_index() << "] = "
         << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value)) << ";\n";
  out_ << "      }\n    }\n    __syncthreads();  // the next tile overwrites the staged ones\n  }\n";
}

}  // namespace braze::cuda
