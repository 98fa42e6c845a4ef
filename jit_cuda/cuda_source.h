// KernelSpec -> CUDA C++ source (Note [CUDA kernel shapes]).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fusion/kernel_spec.h"

namespace braze::cuda {

// Bump when generated source changes for the same spec: part of every
// cache key (with the prelude's text, which is hashed separately).
inline constexpr int kCudaCodegenVersion = 7;  // 2: vector access, unsigned counters, split columns; 3: bytes in flight; 4: tiles; 5: rows in registers; 6: tile pairs, unrolled tiles; 7: pairs staged whole, in vectors

// Note [CUDA kernel shapes]
// Every spec becomes one kernel of one of five shapes, from its collapsed
// index space (Note [CUDA index space]):
// - Elements: no reduced axis. A grid-stride loop over the domain; each
//   thread computes the body for one index at a time, reading every input
//   through its own baked strides (broadcasts are stride 0), or for
//   `width` neighbouring indices at a time through 16-byte vector loads
//   and stores where the layout allows (Note [CUDA vector access]).
// - Tiles: no reduced axis, and an input read transposed: contiguous along
//   the second-to-last collapsed axis, not the last (x.T + x). Read one
//   element per thread, it would cost each warp 32 separate sectors.
//   Instead a block takes a kTile x kTile tile of the last two axes: the
//   threads first copy each such input's tile into shared memory with
//   neighbouring threads reading neighbouring elements of its memory
//   (down the tile's columns), then compute the tile with neighbouring
//   threads on neighbouring output elements (along its rows), reading the
//   staged input across (a row of kTile + 1 elements, so a warp's reads
//   fall in 32 different banks) and every other input from memory. Where
//   the staged input's buffer is also read straight (x.T + x), a block
//   takes the pair of tiles (I, J) and (J, I) (Note [Tile pairs on the
//   GPU], cuda_source_tiles.cpp).
// - BlockPerRow: the innermost axis is reduced (softmax, layer_norm, a sum
//   over the last axis). One block per row (grid-stride over rows); each
//   reduction is a pass in which the threads stride along the row and
//   combine with warp shuffles and shared memory, so every thread has the
//   row's value for the next pass; a last pass stores the Full outputs.
//   softmax is three passes over a row in one kernel: max, sum of exp, store.
// - ThreadPerRow: the innermost axis is kept (x.sum(axis=0), batch-norm
//   statistics): one thread per row walks the reduced axes sequentially;
//   neighbouring threads read neighbouring columns, so loads coalesce.
// - SplitColumns: as ThreadPerRow, for few long columns (fewer than
//   kSplitColumnsBelow, at least kMinSplitLength long): a block takes up
//   to 32 neighbouring columns and splits their reduced axes across its
//   512 threads (Note [Bytes in flight]); the partial values combine in shared memory in a fixed
//   tree (bz::column_reduce), so results are deterministic.
// A reduction with too few rows or columns to fill the device (x.sum(),
// X.sum(axis=0) of 8192 columns) never reaches these shapes as it is: the
// schedule splits it into two reductions first (Note [Split reductions],
// fusion/passes.h; the CUDA target's ReductionSplit in library_epilogue.cpp).
// Values are recomputed in each pass that needs them rather than kept:
// registers are the scarce thing on a GPU. The inputs such a value reads
// are kept in registers where a thread's share of the row is a few
// vectors (Note [Rows held in registers], cuda_source_rows.cpp).
// Generated code calls the op table's functors (graph/scalar_math.h) on
// each op's compute type, converting and rounding as the reference does
// after every op (jit_cuda/device/prelude.cuh).
enum class KernelShape { Elements, Tiles, BlockPerRow, ThreadPerRow, SplitColumns };
const char* name(KernelShape s);

// How to launch: `threads` per block (a multiple of 32, also the kernel's
// __launch_bounds__; unless `exact_threads`, any multiple of 32 up to it
// runs the kernel right, as host emulation does with fewer; a kernel whose
// threads hold a fixed share of a row, Note [Rows held in registers],
// needs all of them); blocks: one per `threads` work items
// (Elements: elements or vectors of them; ThreadPerRow: rows) or one per
// work item (BlockPerRow: rows; SplitColumns: groups of columns; Tiles:
// tiles), capped by
// the launcher and by kMaxGridThreads (the loops are grid-stride). Nothing
// to launch when work == 0.
struct CudaLaunch {
  KernelShape shape = KernelShape::Elements;
  int threads = 256;
  int64_t work = 0;  // elements, vectors, rows or column groups
  bool exact_threads = false;
  int64_t blocks(int64_t max_blocks) const;
  // Threads a block where a launcher wants at most `most` (host emulation).
  int threads_up_to(int most) const { return exact_threads ? threads : std::min(threads, most); }
};

// Parameters, in order: per spec input a `const T*` (Buffer), its value
// (Scalar: double for float dtypes, long long otherwise), or start and step
// (Arange, the same types); then per spec output a `T*`, dense over the
// domain (Full) or over the rows (Reduced).
struct CudaKernelSource {
  std::string name;    // readable and unique per key: bz_row_max_sub_exp_0123456789ab
  std::string source;  // includes "graph/scalar_math.h" and "braze/prelude.cuh"
  CudaLaunch launch;
  std::vector<std::string> param_types;  // C++ type of each parameter, in order
};

// Deterministic: the same spec gives the same bytes.
CudaKernelSource render_cuda(const KernelSpec& spec);

}  // namespace braze::cuda
