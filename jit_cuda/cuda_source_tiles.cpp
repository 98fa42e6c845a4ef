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

// Note [Tile pairs on the GPU]
// x.T + x of [N, N] reads x twice: output tile (I, J) stages tile (J, I)
// of x and reads (I, J) straight, and output tile (J, I) reads the same
// two. Visited apart, each tile of x comes from DRAM twice, 3N^2 values
// moved for 2N^2 counted (roofline 0.42 on an H200). So where the last two
// axes are square and a staged input has a straight partner reading the
// same buffer (KernelInput::same_buffer_as; as on the CPU, Note [Tile
// pairs] in jit_cpu/row_plan.h), a block's unit of work is the pair
// {(I, J), (J, I)}, I <= J: it computes (I, J) and then (J, I), whose
// reads hit the L2 the first one just filled. On an H200, [8192, 8192]:
// 0.312 -> 0.149 ms, 0.87 of the copy's bandwidth (torch.compile 0.64,
// JAX 0.61). Staging both tiles before computing either (all of a
// thread's loads from DRAM in flight at once, twice the shared memory)
// was slower: 0.173 ms. The T(T + 1) / 2 pairs of T
// tiles per side are numbered by rows of the triangle, J = the largest j
// with j(j + 1) / 2 <= p (a double square root, corrected by one either
// way: exact far past 2^31 units).
int32_t Renderer::straight_partner(const KernelSpec& spec, const CudaLayout& l, size_t k) {
  const size_t n = l.sizes.size();
  const std::vector<int64_t>& t = l.strides[k];
  for (size_t m = 0; m < spec.inputs.size(); ++m) {
    const bool shared = spec.inputs[k].same_buffer_as == static_cast<int32_t>(m) ||
                        spec.inputs[m].same_buffer_as == static_cast<int32_t>(k);
    if (!shared || spec.inputs[m].kind != KernelInput::Kind::Buffer || l.offsets[m] != l.offsets[k]) continue;
    std::vector<int64_t> u = l.strides[m];
    std::swap(u[n - 2], u[n - 1]);
    if (u == t && t[n - 1] != 1) return static_cast<int32_t>(m);
  }
  return -1;
}

bool Renderer::pairs_tiles(const KernelSpec& spec, const CudaLayout& l, const std::vector<bool>& tiled) {
  const size_t n = l.sizes.size();
  if (tiled.empty() || l.sizes[n - 2] != l.sizes[n - 1]) return false;
  for (size_t k = 0; k < tiled.size(); ++k)
    if (tiled[k] && straight_partner(spec, l, k) >= 0) return true;
  return false;
}

int64_t Renderer::tile_units() const {
  const size_t n = l_.sizes.size();
  const int64_t rows = (l_.sizes[n - 2] + kTile - 1) / kTile, columns = (l_.sizes[n - 1] + kTile - 1) / kTile;
  int64_t units = paired_ ? rows * (rows + 1) / 2 : rows * columns;
  for (size_t d = 0; d + 2 < n; ++d) units *= l_.sizes[d];
  return units;
}

// A block per unit (grid-stride over units: a tile, or a pair of them,
// Note [Tile pairs on the GPU]), kTileThreads threads: thread t is column
// tx = t % kTile of the tile and rows t / kTile + i * kTileStep. The
// staging pass reads tile<k>[c][r] = input k at (row r, column c), r
// varying fastest across a warp (the input's contiguous axis); the compute
// pass gives thread tx column tx of rows r, so outputs and the inputs read
// straight coalesce, and reads tile<k>[tx][r]. Both passes are unrolled
// over a thread's kTile / kTileStep rows, so each thread has that many
// loads in flight (Note [Bytes in flight]); the step is a constant, so the
// kernel needs all its threads (exact_threads). Threads outside the domain
// (the last tiles' edges) load and store nothing but reach every barrier.
void Renderer::tiles() {
  const size_t n = l_.sizes.size();
  const std::string side = std::to_string(kTile);
  for (size_t k = 0; k < tiled_.size(); ++k)
    if (tiled_[k])
      out_ << "  __shared__ " << storage_type(spec_.inputs[k].dtype) << " tile" << k << "[" << side << "][" << side
           << " + 1];\n";
  out_ << "  constexpr U kTileRows = (n" << n - 2 << " + " << side << " - 1) / " << side << ", kTileColumns = (n"
       << n - 1 << " + " << side << " - 1) / " << side << ";\n";
  out_ << "  constexpr U kUnits = " << launch_.work << ";\n";
  out_ << "  constexpr unsigned kStep = " << kTileThreads / kTile << ";\n";
  out_ << "  const unsigned tx = threadIdx.x % " << side << ", first = threadIdx.x / " << side << ";\n";
  out_ << "  for (U unit = blockIdx.x; unit < kUnits; unit += gridDim.x) {\n";
  const std::string per_outer = paired_ ? "(kTileRows * (kTileRows + 1) / 2)" : "(kTileColumns * kTileRows)";
  std::vector<size_t> outer;
  for (size_t d = 0; d + 2 < n; ++d) outer.push_back(d);
  if (!outer.empty()) {
    out_ << "    const U outer = unit / " << per_outer << ";\n";
    decompose("outer", outer, "    ");
  }
  if (paired_) {
    out_ << "    const U pair = unit % " << per_outer << ";\n";
    out_ << "    U tj = (U)((sqrt(8.0 * (double)pair + 1.0) - 1.0) / 2.0);\n";
    out_ << "    if ((tj + 1) * (tj + 2) / 2 <= pair) ++tj;\n";
    out_ << "    if (tj * (tj + 1) / 2 > pair) --tj;\n";
    out_ << "    const U ti = pair - tj * (tj + 1) / 2;\n";
    out_ << "    for (unsigned half = 0; half < (ti == tj ? 1u : 2u); ++half) {\n";
    out_ << "      const I r0 = (I)(half ? tj : ti) * " << side << ", c0 = (I)(half ? ti : tj) * " << side << ";\n";
    tile_passes("      ");
    out_ << "    }\n";
  } else {
    out_ << "    const I c0 = (I)(unit % kTileColumns) * " << side << ", r0 = (I)(unit / kTileColumns % kTileRows) * "
         << side << ";\n";
    tile_passes("    ");
  }
  out_ << "  }\n";
  launch_.exact_threads = true;
}

// The staging and compute passes of the tile at rows r0, columns c0.
void Renderer::tile_passes(const std::string& ind) {
  const size_t n = l_.sizes.size();
  const std::string row = "x" + std::to_string(n - 2), col = "x" + std::to_string(n - 1);
  const std::string side = std::to_string(kTile);
  const std::string in = ind + "  ", in2 = ind + "    ";
  // Staging: thread tx reads row r0 + tx, column c0 + r of each tiled input.
  out_ << ind << "#pragma unroll\n" << ind << "for (unsigned i = 0; i < " << side << " / kStep; ++i) {\n";
  out_ << in << "const unsigned r = first + i * kStep;\n";
  out_ << in << "const I " << row << " = r0 + (I)tx, " << col << " = c0 + (I)r;\n";
  out_ << in << "if (" << row << " < (I)n" << n - 2 << " && " << col << " < (I)n" << n - 1 << ") {\n";
  for (size_t k = 0; k < tiled_.size(); ++k)
    if (tiled_[k]) out_ << in2 << "tile" << k << "[r][tx] = in" << k << "[" << offset(k) << "];\n";
  out_ << in << "}\n" << ind << "}\n" << ind << "__syncthreads();\n";
  // Compute: thread tx is column c0 + tx of row r0 + r.
  out_ << ind << "#pragma unroll\n" << ind << "for (unsigned i = 0; i < " << side << " / kStep; ++i) {\n";
  out_ << in << "const unsigned r = first + i * kStep;\n";
  out_ << in << "const I " << row << " = r0 + (I)r, " << col << " = c0 + (I)tx;\n";
  out_ << in << "if (" << row << " < (I)n" << n - 2 << " && " << col << " < (I)n" << n - 1 << ") {\n";
  staged_ = true;
  for (size_t i = 0; i < spec_.body.size(); ++i)
    if (!is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), in2);
  staged_ = false;
  for (size_t k = 0; k < spec_.outputs.size(); ++k)
    out_ << in2 << "out" << k << "[" << dense_index() << "] = "
         << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value)) << ";\n";
  out_ << in << "}\n" << ind << "}\n" << ind << "__syncthreads();  // the next tile overwrites the staged ones\n";
}

}  // namespace braze::cuda
