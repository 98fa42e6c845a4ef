// The renderer behind render_cuda (cuda_source.h), shared by the files
// that emit each kernel shape: cuda_source.cpp (the kernel's frame, values
// and index math), cuda_source_elements.cpp (element-wise, scalar and
// vector) and cuda_source_rows.cpp (row and column reductions). Internal to
// jit_cuda.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "fusion/kernel_spec.h"
#include "jit_cuda/cuda_layout.h"
#include "jit_cuda/cuda_source.h"

namespace braze::cuda {

// Splitting a column reduction (Note [CUDA kernel shapes], SplitColumns):
// below kSplitColumnsBelow columns one thread per column leaves the device
// idle (an H100 wants ~2048 threads on each of its 132 SMs; 16384 is
// already few), and columns shorter than kMinSplitLength are cheap enough
// walked by one thread. kSplitThreads per block, a power of two, so the
// tree of partial values halves evenly.
//
// Note [Bytes in flight]
// A GPU reads at full bandwidth only with about bandwidth x latency bytes
// requested and not yet arrived: 4.8 TB/s x ~0.7 us, some 3 MB on an
// H200. A column sum of [8192, 8192] as 256 blocks of 256 threads, each
// with one 4-byte load outstanding, had 256 KB in flight and ran at 0.17
// of the copy's bandwidth (torch.compile: 0.84). With 512 threads per
// block (16 rows of a block's 32 columns at once) and the walk down the
// columns unrolled 4 times, the same sum has 2 MB in flight.
inline constexpr int64_t kSplitColumnsBelow = 16384;
inline constexpr int64_t kMinSplitLength = 64;
inline constexpr int kSplitThreads = 512;

// Note [Rows held in registers] (cuda_source_rows.cpp): the most 32-bit
// registers a thread spends on the row vectors it keeps.
inline constexpr int64_t kCachedRegisters = 32;

// Tiles (Note [CUDA kernel shapes]): the side of a tile, one warp wide;
// kTileThreads per block (kTile columns of kTileThreads / kTile rows at a
// time); at most kMaxTiledInputs inputs staged (kTile x (kTile + 1)
// elements of shared memory each); both tiled axes at least kTile long.
inline constexpr int64_t kTile = 32;
inline constexpr int kTileThreads = 256;
inline constexpr size_t kMaxTiledInputs = 4;
// Pairs of tiles (Note [Tile pairs on the GPU]): their side where both
// tiles of every staged input fit the static shared memory a block has.
inline constexpr int64_t kWideTile = 64;
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;

// The variable holding body value i in generated code.
inline std::string value_name(int32_t i) { return "v" + std::to_string(i); }

class Renderer {
 public:
  explicit Renderer(const KernelSpec& spec);
  CudaKernelSource run();

 private:
  static int row_threads(int64_t length);
  std::string kernel_name() const;
  std::string params(std::vector<std::string>& types) const;

  bool is_scalar(int32_t i) const;
  bool per_element(int32_t i) const;
  std::string offset(size_t k) const;
  void decompose(const std::string& var, const std::vector<size_t>& axes, const std::string& ind);
  std::vector<size_t> axes(bool reduced) const;
  std::string dense_index() const;
  void emit_value(int32_t i, const std::string& ind);
  std::string value_expr(const KernelOp& op, const std::string& r) const;
  std::vector<bool> closure(const std::vector<int32_t>& targets) const;
  void emit_closure(const std::vector<int32_t>& targets, const std::string& ind);

  // cuda_source_elements.cpp
  void elements();
  // cuda_source_tiles.cpp
  static std::vector<bool> tiled_inputs(const KernelSpec& spec, const CudaLayout& l);
  static bool straight_partner(const KernelSpec& spec, const CudaLayout& l, size_t k, size_t m);
  static int64_t pair_bytes(const KernelSpec& spec, const std::vector<bool>& tiled, int64_t side);
  static bool pairs_tiles(const KernelSpec& spec, const CudaLayout& l, const std::vector<bool>& tiled);
  void plan_pairs();
  int64_t tile_units() const;
  void tiles();
  void open_tile_rows(const std::string& r0, const std::string& c0, bool across, const std::string& ind);
  enum class Stage { Direct, Load, Store };
  void stage_pass(Stage stage, int half, const std::string& r0, const std::string& c0, const std::string& ind);
  void compute_pass(int half, const std::string& r0, const std::string& c0, const std::string& ind);
  std::string tile_read(size_t k) const;
  void scalar_elements(const std::string& first);
  void vector_elements();
  void emit_vector_loads(const std::vector<bool>& need, const std::string& ind);
  // cuda_source_rows.cpp
  void rows();
  void reduction_pass(int32_t i, const std::string& loop);
  int plan_row_cache();
  void load_row_cache(const std::string& loop);

  const KernelSpec& spec_;
  CudaLayout l_;
  VectorPlan vec_;
  CudaLaunch launch_;
  int split_columns_ = 0;  // SplitColumns: columns per block
  std::vector<bool> tiled_;  // Tiles: per spec input, whether it is staged in shared memory
  bool paired_ = false;      // Tiles: units are pairs of tiles (Note [Tile pairs on the GPU])
  int64_t side_ = kTile;     // Tiles: the side of a tile
  std::vector<int32_t> partner_;  // paired Tiles: per spec input, the staged input whose tiles it reads, or -1
  int half_ = 0;             // inside a compute pass: which of a pair's tiles it computes
  std::vector<bool> cached_;  // BlockPerRow: per spec input, whether held in registers (empty: none)
  bool staged_ = false;      // inside a tile's compute pass: staged inputs read from the tile
  std::string lane_;       // inside a vector kernel's lane loop: its variable
  std::ostringstream out_;
};

}  // namespace braze::cuda
