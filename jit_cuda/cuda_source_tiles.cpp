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
// x.T + x of [N, N] reads x twice: output tile (I, J) reads tile (J, I) of
// x transposed and (I, J) straight, and output tile (J, I) the same two.
// Visited apart, each tile of x comes from DRAM twice, 3N^2 values moved
// for 2N^2 counted (0.42 of the copy's bandwidth on an H200). So where
// the last two axes are square and a staged input has a straight partner
// reading the same buffer (KernelInput::same_buffer_as; as on the CPU,
// Note [Tile pairs] in jit_cpu/row_plan.h), a block's unit of work is the
// pair {(I, J), (J, I)}, I <= J. It stages both tiles of each staged input
// (tile<k>_0 at (I, J), tile<k>_1 at (J, I)), then computes both output
// tiles from shared memory: the staged input of one is the other's tile
// read across, its straight partner the other's tile read along. Every
// value comes from DRAM once, and all of a thread's loads of both tiles
// are in flight together. Tiles are 64 a side where both fit the 48 KB of
// static shared memory, else 32, and move `width` elements per thread and
// access (16 bytes: float4 for float32) where the views align (as Note
// [CUDA vector access] decides it, along the staged inputs' contiguous
// axis too). On an H200, [8192, 8192] float32, as a share of the copy's
// bandwidth: 0.42 visited apart; 0.87 computing (I, J) and then (J, I),
// whose straight reads hit the L2 the first had filled; 0.89 staging both
// 32 a side one element at a time; 0.94 staging both 64 a side in float4.
// The T(T + 1) / 2 pairs of T tiles per side are numbered by rows of the
// triangle, J = the largest j with j(j + 1) / 2 <= p (a double square
// root, corrected by one either way: exact far past 2^31 units).
// Whether input m reads the buffer staged input k reads, at the same
// offset, straight: its strides are k's with the last two axes swapped.
bool Renderer::straight_partner(const KernelSpec& spec, const CudaLayout& l, size_t k, size_t m) {
  const size_t n = l.sizes.size();
  const std::vector<int64_t>& t = l.strides[k];
  const bool shared = spec.inputs[k].same_buffer_as == static_cast<int32_t>(m) ||
                      spec.inputs[m].same_buffer_as == static_cast<int32_t>(k);
  if (!shared || spec.inputs[m].kind != KernelInput::Kind::Buffer || l.offsets[m] != l.offsets[k]) return false;
  std::vector<int64_t> u = l.strides[m];
  std::swap(u[n - 2], u[n - 1]);
  return u == t && t[n - 1] != 1;
}

// Shared memory for both tiles of every staged input, `side` a side.
int64_t Renderer::pair_bytes(const KernelSpec& spec, const std::vector<bool>& tiled, int64_t side) {
  int64_t bytes = 0;
  for (size_t k = 0; k < tiled.size(); ++k)
    if (tiled[k]) bytes += 2 * side * (side + 1) * itemsize(spec.inputs[k].dtype);
  return bytes;
}

bool Renderer::pairs_tiles(const KernelSpec& spec, const CudaLayout& l, const std::vector<bool>& tiled) {
  const size_t n = l.sizes.size();
  if (tiled.empty() || l.sizes[n - 2] != l.sizes[n - 1] || pair_bytes(spec, tiled, kTile) > kStaticSharedBytes) return false;
  for (size_t k = 0; k < tiled.size(); ++k)
    for (size_t m = 0; m < tiled.size() && tiled[k]; ++m)
      if (straight_partner(spec, l, k, m)) return true;
  return false;
}

// The side of a pair's tiles, the elements a thread moves per access, and
// which straight inputs read a staged input's tiles (Note [Tile pairs on
// the GPU]).
void Renderer::plan_pairs() {
  const size_t n = l_.sizes.size();
  const int64_t length = l_.sizes[n - 1];
  if (length >= kWideTile && pair_bytes(spec_, tiled_, kWideTile) <= kStaticSharedBytes) side_ = kWideTile;
  int64_t widest = 1;
  for (size_t k = 0; k < tiled_.size(); ++k)
    if (tiled_[k]) widest = std::max<int64_t>(widest, itemsize(spec_.inputs[k].dtype));
  for (const KernelOutput& o : spec_.outputs) widest = std::max<int64_t>(widest, itemsize(o.dtype));
  // A pass covers kTileThreads / (side / width) rows: at most side.
  int64_t width = std::min<int64_t>(kVectorBytes / widest, side_ * side_ / kTileThreads);
  auto staged_aligned = [&](int64_t w) {
    if (length % w != 0) return false;
    for (size_t k = 0; k < tiled_.size(); ++k) {
      if (!tiled_[k]) continue;
      if (l_.offsets[k] % w != 0) return false;
      for (size_t d = 0; d < n; ++d)
        if (d != n - 2 && l_.strides[k][d] % w != 0) return false;
    }
    return true;
  };
  while (width > 1 && !staged_aligned(width)) width /= 2;
  // A masked input reads element by element (Note [Masked loads]).
  const std::vector<bool> masked = masked_inputs(spec_);
  partner_.assign(spec_.inputs.size(), -1);
  for (size_t k = 0; k < tiled_.size(); ++k)
    for (size_t m = 0; m < spec_.inputs.size() && tiled_[k]; ++m)
      if (partner_[m] < 0 && !tiled_[m] && !masked[m] && straight_partner(spec_, l_, k, m))
        partner_[m] = static_cast<int32_t>(k);
  vec_.width = static_cast<int>(width);
  vec_.inputs.assign(spec_.inputs.size(), Access::Gather);
  for (size_t k = 0; k < spec_.inputs.size(); ++k)
    if (spec_.inputs[k].kind == KernelInput::Kind::Buffer && !tiled_[k] && partner_[k] < 0 && !masked[k])
      vec_.inputs[k] = vector_access(l_, k, width);
}

int64_t Renderer::tile_units() const {
  const size_t n = l_.sizes.size();
  const int64_t rows = (l_.sizes[n - 2] + side_ - 1) / side_, columns = (l_.sizes[n - 1] + side_ - 1) / side_;
  int64_t units = paired_ ? rows * (rows + 1) / 2 : rows * columns;
  for (size_t d = 0; d + 2 < n; ++d) units *= l_.sizes[d];
  return units;
}

// A block per unit (grid-stride over units: a tile, or a pair of them,
// Note [Tile pairs on the GPU]), kTileThreads threads: thread t moves
// `width` elements from column tx = t % (side / width) * width of the tile,
// in rows t / (side / width) + i * kStep. The staging pass reads
// tile<k>_<h>[c][r] = input k at (row r, column c), r varying fastest
// across a warp (the input's contiguous axis); the compute pass gives
// thread tx columns tx... of rows r, so outputs and the inputs read
// straight coalesce, and reads tile<k>_<h>[tx][r]. Both passes are
// unrolled over a thread's rows, so each thread has that many loads in
// flight (Note [Bytes in flight]); the step is a constant, so the kernel
// needs all its threads (exact_threads). Threads outside the domain (the
// last tiles' edges) load and store nothing but reach every barrier.
void Renderer::tiles() {
  const size_t n = l_.sizes.size();
  const std::string side = std::to_string(side_), across = std::to_string(side_ / vec_.width);
  for (size_t k = 0; k < tiled_.size(); ++k)
    for (int h = 0; h < (paired_ ? 2 : 1) && tiled_[k]; ++h)
      out_ << "  __shared__ " << storage_type(spec_.inputs[k].dtype) << " tile" << k << "_" << h << "[" << side << "]["
           << side << " + 1];\n";
  out_ << "  constexpr U kTileRows = (n" << n - 2 << " + " << side << " - 1) / " << side << ", kTileColumns = (n"
       << n - 1 << " + " << side << " - 1) / " << side << ";\n";
  out_ << "  constexpr U kUnits = " << launch_.work << ";\n";
  out_ << "  constexpr unsigned kStep = " << kTileThreads << " / " << across << ";\n";
  out_ << "  const unsigned tx = threadIdx.x % " << across << " * " << vec_.width << ", first = threadIdx.x / " << across
       << ";\n";
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
    out_ << "    const I r0 = (I)ti * " << side << ", c0 = (I)tj * " << side << ";\n";
    // On the diagonal both halves are the one tile: staged twice, computed once.
    stage_pass(Stage::Load, 0, "r0", "c0", "    ");
    stage_pass(Stage::Load, 1, "c0", "r0", "    ");
    stage_pass(Stage::Store, 0, "r0", "c0", "    ");
    stage_pass(Stage::Store, 1, "c0", "r0", "    ");
    out_ << "    __syncthreads();\n";
    compute_pass(0, "r0", "c0", "    ");
    out_ << "    if (ti != tj) {\n";
    compute_pass(1, "c0", "r0", "      ");
    out_ << "    }\n";
  } else {
    out_ << "    const I c0 = (I)(unit % kTileColumns) * " << side << ", r0 = (I)(unit / kTileColumns % kTileRows) * "
         << side << ";\n";
    stage_pass(Stage::Direct, 0, "r0", "c0", "    ");
    out_ << "    __syncthreads();\n";
    compute_pass(0, "r0", "c0", "    ");
  }
  out_ << "    __syncthreads();  // the next unit overwrites the staged tiles\n";
  out_ << "  }\n";
  launch_.exact_threads = true;
}

// The rows of a thread in a pass over the tile at rows `r0`, columns `c0`:
// the loop head, x<n-2> and x<n-1> at its first element, and the bounds
// check, all left open.
void Renderer::open_tile_rows(const std::string& r0, const std::string& c0, bool across, const std::string& ind) {
  const size_t n = l_.sizes.size();
  const std::string row = "x" + std::to_string(n - 2), col = "x" + std::to_string(n - 1);
  out_ << ind << "#pragma unroll\n" << ind << "for (unsigned i = 0; i < " << side_ << " / kStep; ++i) {\n";
  out_ << ind << "  const unsigned r = first + i * kStep;\n";
  if (across) out_ << ind << "  const I " << row << " = " << r0 << " + (I)tx, " << col << " = " << c0 << " + (I)r;\n";
  else out_ << ind << "  const I " << row << " = " << r0 << " + (I)r, " << col << " = " << c0 << " + (I)tx;\n";
  out_ << ind << "  if (" << row << " < (I)n" << n - 2 << " && " << col << " < (I)n" << n - 1 << ") {\n";
}

// Staging: thread tx reads rows r0 + tx..., column c0 + r of each staged
// input (consecutive elements of its memory) into tile<k>_<half>[r][tx...].
// A single tile is staged load by load (Stage::Direct); a pair loads all
// of a thread's vectors of both halves into registers (Stage::Load, each
// half) before storing any (Stage::Store), so they are all in flight at
// once.
void Renderer::stage_pass(Stage stage, int half, const std::string& r0, const std::string& c0, const std::string& ind) {
  const std::string h = std::to_string(half), w = std::to_string(vec_.width), in2 = ind + "    ";
  auto vec_type = [&](size_t k) { return std::string("bz::Vec<") + storage_type(spec_.inputs[k].dtype) + ", " + w + ">"; };
  if (stage == Stage::Load)
    for (size_t k = 0; k < tiled_.size(); ++k)
      if (tiled_[k]) out_ << ind << vec_type(k) << " s" << k << "_" << h << "[" << side_ << " / kStep];\n";
  open_tile_rows(r0, c0, true, ind);
  for (size_t k = 0; k < tiled_.size(); ++k) {
    if (!tiled_[k]) continue;
    const std::string tile = "tile" + std::to_string(k) + "_" + h, in = "in" + std::to_string(k);
    const std::string held = "s" + std::to_string(k) + "_" + h + "[i]";
    switch (stage) {
      case Stage::Direct: out_ << in2 << tile << "[r][tx] = " << in << "[" << offset(k) << "];\n"; break;
      case Stage::Load:
        out_ << in2 << held << " = bz::load_vec<" << storage_type(spec_.inputs[k].dtype) << ", " << w << ">(" << in
             << " + (" << offset(k) << "));\n";
        break;
      case Stage::Store:
        out_ << in2 << "#pragma unroll\n"
             << in2 << "for (int e = 0; e < " << w << "; ++e) " << tile << "[r][tx + e] = " << held << ".v[e];\n";
        break;
    }
  }
  out_ << ind << "  }\n" << ind << "}\n";
}

// Compute: thread tx is columns c0 + tx... of row r0 + r. Staged inputs
// read tile<k>_<half> across, their straight partners the other half's
// tile along (Note [Tile pairs on the GPU]).
void Renderer::compute_pass(int half, const std::string& r0, const std::string& c0, const std::string& ind) {
  open_tile_rows(r0, c0, false, ind);
  const std::string in2 = ind + "    ", w = std::to_string(vec_.width);
  half_ = half;
  staged_ = true;
  if (vec_.width == 1) {
    for (size_t i = 0; i < spec_.body.size(); ++i)
      if (!is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), in2);
    for (size_t k = 0; k < spec_.outputs.size(); ++k)
      out_ << in2 << "out" << k << "[" << dense_index() << "] = "
           << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value)) << ";\n";
  } else {
    emit_vector_loads(std::vector<bool>(spec_.body.size(), true), in2);
    for (size_t k = 0; k < spec_.outputs.size(); ++k)
      out_ << in2 << "bz::Vec<" << storage_type(spec_.outputs[k].dtype) << ", " << w << "> o" << k << ";\n";
    out_ << in2 << "#pragma unroll\n" << in2 << "for (int e = 0; e < " << w << "; ++e) {\n";
    lane_ = "e";
    for (size_t i = 0; i < spec_.body.size(); ++i)
      if (!is_scalar(static_cast<int32_t>(i))) emit_value(static_cast<int32_t>(i), in2 + "  ");
    lane_.clear();
    for (size_t k = 0; k < spec_.outputs.size(); ++k)
      out_ << in2 << "  o" << k << ".v[e] = " << store_expr(spec_.outputs[k].dtype, value_name(spec_.outputs[k].value))
           << ";\n";
    out_ << in2 << "}\n";
    for (size_t k = 0; k < spec_.outputs.size(); ++k)
      out_ << in2 << "bz::store_vec(out" << k << " + (" << dense_index() << "), o" << k << ");\n";
  }
  staged_ = false;
  out_ << ind << "  }\n" << ind << "}\n";
}

// In a compute pass, a staged input or a partner of one, read from its tile.
std::string Renderer::tile_read(size_t k) const {
  const std::string column = lane_.empty() ? "tx" : "tx + " + lane_;
  if (tiled_[k]) return load_expr(spec_.inputs[k].dtype, "tile" + std::to_string(k) + "_" + std::to_string(half_) + "[" + column + "]", "r");
  const size_t s = static_cast<size_t>(partner_[k]);
  return load_expr(spec_.inputs[k].dtype, "tile" + std::to_string(s) + "_" + std::to_string(1 - half_) + "[r]", column);
}

}  // namespace braze::cuda
