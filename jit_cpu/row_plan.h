// The shape a generated kernel runs over: rows of a collapsed domain.
#pragma once

#include <vector>

#include "fusion/kernel_spec.h"

namespace braze::jit {

// Note [Row kernels]
// The generator sees a spec's domain with size-1 axes dropped and adjacent
// axes merged wherever every input's strides allow, so a contiguous tensor
// of any rank is one axis. The last axis is the row: it is vectorised, and a
// reduction runs along it (softmax's rows). The axes before it are the rows'
// index, walked by an odometer with constant strides and split across
// threads.
//
// Note [Column reductions]
// A spec that reduces over axes before the row (after collapsing: [O..., R,
// O'..., C] reduced over R, as x.sum(axis=0)) is a column plan: the row is
// C, vectorised as always, and the kernel walks R inside, accumulating a
// vector of partial results per column in scratch memory, so every input
// is still read in contiguous rows. The kept axes O..., O'... are the
// units' index, in order, so the outputs are dense over them. Columns are
// cut into tiles of kColumnTile, which bounds the scratch a unit needs:
// `outer` is [O..., O'..., number of tiles] (and the parts of Note [Split
// columns], when there are few units). A
// value computed from the per-column results and used per element again
// (x - x.mean(0), batch normalisation) takes another pass down R: pass p
// feeds the reductions of stage-p values and stores the Full outputs of
// stage p, reading earlier totals from scratch. When the row is reduced as
// well (a sum over axes 0 and 2 of [A, B, C], batch norm statistics over N,
// H, W), `reduces` is also set: a unit is all C columns (one tile), and
// after each pass the per-column totals are reduced along the row into one
// value per unit, used like a row kernel's row constant. Reduced groups
// apart from each other ([R1, O, R2, C] summed over R1 and R2) make R a
// walk over several axes, outermost first (`reduce_extents`): the row
// pointers step along the innermost and carry into the outer ones, like an
// odometer.
inline constexpr int64_t kColumnTile = 8192;

// Note [Blocked sums] down a column: a block of kColumnBlock rows is summed
// apart, then added to the column's total.
inline constexpr int64_t kColumnBlock = 64;

// Note [Split columns]
// Threads share a column plan by its units, and a column sum of one wide
// matrix (x.sum(axis=0) of [4096, 4096]) has one unit. Cutting its columns
// into narrow tiles gave the threads work but made each read 8 KB pieces of
// rows 16 KB apart, which ran at half the speed of reading the rows whole
// (on our Zen 5 machines). So instead a plan with few units splits R:
// `outer` gets one more axis, the parts, each part of `part_rows` rows
// (the last one shorter), and a unit-part runs its rows into its own
// per-column totals, copies them to the launch's partials (per unit, per
// part) and counts itself done on the unit's counter (lock xadd). The part
// that finishes last combines the partials in part order, so the result
// does not depend on which thread was last, and computes the unit's
// results. Only plans of one pass (no reduction or Full output reads a
// total), one reduced group and float reductions (sum, prod, max, min)
// split; a part is a multiple of kColumnBlock rows.
inline constexpr int64_t kColumnParts = 8;
inline constexpr int64_t kMinPartRows = 256;

// Note [Row tiles]
// Threads split a launch by rows, so a kernel over one long row (a 1-D
// tensor of 16M elements: gelu_16M) ran on one thread. A plan that does
// not reduce cuts a row longer than kRowTile into tiles of kRowTile
// elements (the last one shorter), walked as one more outer axis, as
// column plans cut theirs: `outer` is [O..., number of tiles] and each
// input's stride along that axis is its row stride times the tile. A tile
// of 16K elements keeps the per-row work (pointers, the tail mask) under a
// thousandth of the row's, and is a multiple of every vector width, so
// streaming stores stay aligned.
inline constexpr int64_t kRowTile = 16384;

// Note [Tile pairs]
// x.T + x of [N, N] reads x twice, once down columns (Note [Tiled
// transposes] in gen_tiles.cpp) and once along rows, 3N^2 values moved
// for 2N^2 counted: too much for x's 64 MB to stay in the L3 between the
// two reads. But output block (I, J) reads blocks (J, I) and (I, J) of x,
// and output block (J, I) reads the same two. So an element-wise plan over
// a square domain whose input reads, transposed, a buffer that another
// input reads straight (KernelInput::same_buffer_as) walks pairs of
// kPairBlock x kPairBlock blocks: the units are (I, J), I <= J, in order,
// `outer` is [number of pairs], and a unit writes block (I, J) and then
// (J, I) from the two blocks of x still in L2. The accesses' outer strides
// still step one row of the domain. 128 x 128 blocks of float32 (two of
// 64 KB) read faster than 64 x 64 (pieces of 512 bytes per row, not 256)
// on our Zen 5 machines: 3.15 against 3.5 ms for the memory traffic alone,
// and 256 x 256 were slower again (also with Note [Tile chunks]: 4.2
// against 3.8 ms). transpose_add at 60 GB/s: 4.7 -> 3.4 ms; with each row
// prefetching a run of the next unit (gen_tiles.cpp) 3.1 ms, where the
// copy takes 2.1: docs/benchmarks.md.
inline constexpr int64_t kPairBlock = 128;

struct RowPlan {
  Shape outer;            // the rows' index space ([O..., tiles] for a column plan)
  int64_t row_length = 1;  // L (C for a column plan)
  bool reduces = false;    // the reduction runs along the row (too, for a column plan)
  bool columns = false;          // Note [Column reductions]
  int64_t reduce_length = 1;     // R, the product of reduce_extents
  std::vector<int64_t> reduce_extents;  // the reduced groups before the row, outermost first
  int64_t column_tile = 0;       // columns per tile; the last tile may be shorter
  int64_t row_tile = 0;          // Note [Row tiles]: elements per tile of the row, or 0 (not cut)
  int64_t column_parts = 1;      // Note [Split columns]: parts R is split into (an axis of `outer` when > 1)
  int64_t part_rows = 0;         // and rows of R per part; the last part may be shorter
  int64_t pair_blocks = 0;       // Note [Tile pairs]: blocks per side of the square domain, or 0
  // Per spec input, in plan axes: strides over `outer`, the stride along the
  // row (0 for Reduced inputs and broadcasts), and the offset.
  struct Access {
    std::vector<int64_t> outer_strides;
    int64_t inner_stride = 0;
    int64_t offset = 0;
    std::vector<int64_t> reduce_strides;  // along each of reduce_extents, for a column plan
  };
  std::vector<Access> inputs;
  // Column plans: per spec output, how a Full output (dense over the
  // domain) is walked, as if it were an input; default for Reduced ones.
  std::vector<Access> full_outputs;
  int64_t rows() const;
  // Elements an access moves to step from the last row of reduced group
  // l + 1 to the next row of group l (from one row to the next, for the
  // innermost group): its stride along l less group l + 1's whole walk.
  int64_t reduce_step(const Access& a, size_t l) const {
    int64_t s = a.reduce_strides[l];
    if (l + 1 < reduce_extents.size()) s -= a.reduce_strides[l + 1] * reduce_extents[l + 1];
    return s;
  }
  // Elements of the row a kernel walks per outer index: a tile, or the row.
  int64_t row_width() const { return row_tile > 0 ? row_tile : row_length; }
  // The length of the last row tile (the row's when it is not cut).
  int64_t last_row_width() const { return row_tile > 0 ? row_length - (outer.back() - 1) * row_tile : row_length; }
  // Elements of the domain a launch covers (work, for the thread split).
  int64_t elements() const;
  // Column plans: the units, the outer index without the parts axis.
  int64_t units() const { return rows() / column_parts; }
  // Column plans: the axis of `outer` that counts tiles.
  size_t tile_axis() const { return outer.size() - (column_parts > 1 ? 2 : 1); }
};

RowPlan plan_rows(const KernelSpec& spec);

// Note [Tile pairs]: for input k of a plan with one outer axis, read
// transposed, the input that reads the same 32-bit buffer straight (at the
// same offset), or -1.
int32_t straight_partner(const KernelSpec& spec, const RowPlan& plan, size_t k);

}  // namespace braze::jit
