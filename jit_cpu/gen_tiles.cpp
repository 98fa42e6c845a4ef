// Transposed inputs read through stack tiles, G rows at a time (Note [Tiled
// transposes]).
#include <algorithm>
#include <iterator>
#include <string>

#include "fusion/lower_windows.h"
#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

// Note [Tiled transposes]
// An input read across the row with a large stride (x.T) but contiguous
// along the last outer axis costs a gather per vector, one cache line per
// element. When such inputs exist, the kernel takes G = 64 consecutive
// rows of that axis together: for each W = 16 column block (a line of
// float32) it loads W rows of the input, G floats (four lines) each,
// transposes them in registers, 4 x 4 at a time, and parks the result in
// a stack tile from which each of the G rows then reads its vectors (a
// chunk of blocks at a time: Note [Tile chunks]). Every
// line is used up by the access that fetched it, on the input (W rows of
// whole lines) and on the output (one line per row, written in one go,
// which streaming stores need to combine): with 8 x 8 blocks on AVX2 each
// half line was fetched or written apart, and strides of a power of two
// thrash the cache sets in between. Rows that do not fill a group, and
// each group's last partial column block, take the per-row path
// (gathers). Note [Tile pairs] (row_plan.h) walks the same groups in
// another order.
template <class Vmm>
void RowKernelGen<Vmm>::decide_tiling() {
  tile_of_.assign(s_.inputs.size(), -1);
  pair_prefetch_.assign(s_.inputs.size(), false);
  decide_tiles();
  if (p_.pair_blocks == 0) return;
  // Note [Tile pairs]: the 32-bit inputs contiguous along rows or columns,
  // but those read transposed whose lines the straight read of the same
  // buffer prefetches (in the other block of the pair).
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    const RowPlan::Access& a = p_.inputs[k];
    pair_prefetch_[k] = s_.inputs[k].kind == KernelInput::Kind::Buffer && itemsize(s_.inputs[k].dtype) == 4 &&
                        a.outer_strides[0] != 0 &&
                        (a.inner_stride == 1 || (a.outer_strides[0] == 1 && straight_partner(s_, p_, k) < 0)) &&
                        fits_int32(a.outer_strides[0] * 4 * kPairBlock) && fits_int32(a.inner_stride * 4 * kPairBlock);
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::decide_tiles() {
  tiles_ = 0;
  if (p_.reduces || p_.row_tile > 0 || p_.outer.empty() || p_.row_length < V) return;
  if (p_.pair_blocks == 0 && p_.outer.back() < G) return;  // rows of the last axis (a pair plan's are N)
  for (const KernelOutput& o : s_.outputs)
    if (!fits_int32(p_.row_length * G * itemsize_of(o.dtype))) return;
  std::vector<int> tile_of(s_.inputs.size(), -1);  // kept only if every input fits
  const std::vector<bool> masked = masked_inputs(s_);  // loaded lane by lane at the window's edges, never staged
  int tiles = 0;
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    const KernelInput& in = s_.inputs[k];
    const RowPlan::Access& a = p_.inputs[k];
    if (in.kind == KernelInput::Kind::Scalar || masked[k]) continue;
    if (!fits_int32(a.outer_strides.back() * G * itemsize_of(in.dtype))) return;
    if (in.kind == KernelInput::Kind::Buffer && !fits_int32(a.inner_stride * W * itemsize_of(in.dtype))) return;
    if (in.kind == KernelInput::Kind::Buffer && a.inner_stride != 0 && a.inner_stride != 1 &&
        a.outer_strides.back() == 1)
      tile_of[k] = tiles++;
  }
  tile_of_ = std::move(tile_of);
  tiles_ = tiles;
  // Note [Tile chunks]: as wide as the stack allows, up to a pair's block.
  const int64_t full = p_.row_length - p_.row_length % W;
  tile_width_ = W;
  while (tile_width_ < kPairBlock && tile_width_ < full && tiles * G * tile_width_ * 2 * eb_ <= kTileBytes)
    tile_width_ *= 2;
}

// Note [Tile pairs] (row_plan.h): units [rsi, rdx) of pairs (I, J), each
// block (I, J) and then, unless I = J, block (J, I), a block as B / G
// groups of G rows over B columns. The pair, the block being written and
// its group live in the frame; the body of a group uses every register.
template <class Vmm>
void RowKernelGen<Vmm>::pair_loop() {
  static_assert(kPairBlock % G == 0 && kPairBlock % W == 0);  // and a tile's width, a power of two up to B, divides B
  const int64_t n = p_.pair_blocks, B = kPairBlock;
  auto slot = [&](int i) { return pair_word(i); };
  const auto I = slot(0), J = slot(1), row_block = slot(2), column_block = slot(3), group = slot(4),
             column_end = slot(5);
  // The first unit's (I, J): rows I of the triangle hold n - I units each.
  Xbyak::Label find, found, unit, block, rows, columns, next_unit, same_row, done;
  mov(rax, rsi);
  xor_(r9, r9);
  mov(r10, n);
  L(find);
  cmp(rax, r10);
  jl(found, T_NEAR);
  sub(rax, r10);
  inc(r9);
  dec(r10);
  jmp(find, T_NEAR);
  L(found);
  add(rax, r9);
  mov(I, r9);
  mov(J, rax);
  L(unit);
  cmp(rsi, rdx);
  jge(done, T_NEAR);
  mov(rax, I);
  mov(row_block, rax);
  mov(rax, J);
  mov(column_block, rax);
  pair_ahead(false);
  L(block);
  mov(group, 0);
  L(rows);
  mov(rax, row_block);
  imul(rax, rax, static_cast<int>(B));
  add(rax, group);
  mov(qword[rsp + kIndex], rax);  // the group's first row
  row_pointers();
  prefetch_pointers(group);
  mov(r8, column_block);
  imul(r8, r8, static_cast<int>(B));
  lea(rax, ptr[r8 + B]);
  mov(column_end, rax);
  L(columns);
  lea(rax, ptr[r8 + tile_width_]);
  mov(chunk_word(1), rax);
  tile_chunk();
  cmp(r8, column_end);
  jl(columns, T_NEAR);
  add(group, G);
  cmp(group, static_cast<int>(B));
  jl(rows, T_NEAR);
  mov(rax, row_block);  // block (I, J) done: (J, I) next, unless I = J or it was (J, I)
  cmp(rax, J);
  je(next_unit, T_NEAR);
  mov(rax, J);
  mov(row_block, rax);
  mov(rax, I);
  mov(column_block, rax);
  pair_ahead(true);
  jmp(block, T_NEAR);
  L(next_unit);  // (I, J + 1), or (I + 1, I + 1) past the end of row I
  inc(J);
  cmp(J, static_cast<int>(n));
  jl(same_row, T_NEAR);
  inc(I);
  mov(rax, I);
  mov(J, rax);
  L(same_row);
  inc(rsi);
  jmp(unit, T_NEAR);
  L(done);
}

// Note [Tile pairs]: prefetching. A unit's blocks read its two blocks of
// x, 128 KB, from memory, in 512-byte pieces: the hardware prefetchers do
// not follow such a walk. Prefetching a group's 1024 lines in a burst at
// its start fetched little in time (transpose_add at 61 GB/s: 3.8 ms, and
// 4.1 without the burst; most of it seems dropped). Each row of a block now
// prefetches, into L2, one contiguous piece of the next unit's data, the
// memory run of its matching block with the row's index: while block
// (I, J) runs, the runs of the next unit's (I', J'); while (J, I) runs,
// of (J', I'). An access reads element (r, c) at r so + c si; its run R
// of block (rb, cb) starts at rb B so + cb B si + R t (t = so if si = 1,
// else si) and is B elements long, cut like the rows into chunks. So the
// whole next unit is in flight, a piece per row, while this one works:
// 2.6 ms. (A diagonal unit (I, I) leaves (J', I') of the next unit to be
// read from memory.)
//
// Per block, each prefetching access's word kPairSlots + k: in bytes,
// ((rb' - rb) B so + cb' B si - cb B) 4, with (rb', cb') its target.
template <class Vmm>
void RowKernelGen<Vmm>::pair_ahead(bool second_block) {
  const int B = static_cast<int>(kPairBlock);
  const auto I = pair_word(0), J = pair_word(1), row_block = pair_word(2), column_block = pair_word(3);
  Xbyak::Label same_row;  // r9, r10 = the next unit's (I', J'): (I, J + 1), or (I + 1, I + 1)
  mov(r9, I);
  mov(r10, J);
  inc(r10);
  cmp(r10, static_cast<int>(p_.pair_blocks));
  jl(same_row);
  inc(r9);
  mov(r10, r9);
  L(same_row);
  if (second_block) xchg(r9, r10);
  sub(r9, row_block);
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    if (!pair_prefetch_[k]) continue;
    const RowPlan::Access& a = p_.inputs[k];
    imul(rax, r9, static_cast<int>(a.outer_strides[0] * 4 * B));
    imul(r11, r10, static_cast<int>(a.inner_stride * 4 * B));
    add(rax, r11);
    mov(r11, column_block);
    imul(r11, r11, 4 * B);
    sub(rax, r11);
    mov(pair_word(kPairSlots + static_cast<int>(k)), rax);
  }
}

// Per group (its first row `group` rows into the block), each prefetching
// access's word kPairSlots + inputs + k: where run R = group + a of
// pair_ahead starts, less a t and r8 elements: the input's pointer for
// the group's row, plus the block's word, plus group (t - so) 4 bytes.
template <class Vmm>
void RowKernelGen<Vmm>::prefetch_pointers(const Xbyak::Address& group) {
  const int inputs = static_cast<int>(s_.inputs.size());
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    if (!pair_prefetch_[k]) continue;
    const RowPlan::Access& a = p_.inputs[k];
    const int64_t t = run_step(k), so = a.outer_strides[0];
    mov(rax, qword[rsp + in_slot_ + 8 * static_cast<int>(k)]);
    add(rax, pair_word(kPairSlots + static_cast<int>(k)));
    if (t != so) {
      mov(r9, group);
      imul(r9, r9, static_cast<int>((t - so) * 4));
      add(rax, r9);
    }
    mov(pair_word(kPairSlots + inputs + static_cast<int>(k)), rax);
  }
}

// Into L2, as row `a` of the group starts along the chunk at r8: in a
// pair plan, the row's share of its run of the next unit (above); else
// each straight input's next chunk of the row, which the hardware
// prefetchers, facing G rows read 512 bytes at a time, do not fetch in
// time (x.T + y of [4096, 4096]: 5.6 -> 5.0 ms).
template <class Vmm>
void RowKernelGen<Vmm>::row_prefetch(int a) {
  const int inputs = static_cast<int>(s_.inputs.size());
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    const int size = static_cast<int>(itemsize(s_.inputs[k].dtype));
    if (p_.pair_blocks > 0) {
      if (!pair_prefetch_[k]) continue;
      mov(rax, pair_word(kPairSlots + inputs + static_cast<int>(k)));
      add(rax, static_cast<int>(a * run_step(k) * 4));
    } else {
      const RowPlan::Access& in = p_.inputs[k];  // (a row broadcast down the rows stays in L1)
      if (s_.inputs[k].kind != KernelInput::Kind::Buffer || in.inner_stride != 1 || in.outer_strides.back() == 0)
        continue;
      input_base(static_cast<int32_t>(k));
      add(rax, tile_width_ * size);
    }
    for (int line = 0; line < tile_width_ * size / 64; ++line) prefetcht1(ptr[rax + r8 * size + 64 * line]);
  }
}

// Note [Tile chunks]
// A group reads its tiled inputs' columns a chunk at a time: the fills
// park tile_width_ columns (up to kPairBlock, as many as kTileBytes of
// stack allow) of every tiled input, W at a time, in tiles of G rows of
// tile_width_ floats; then each of the G rows runs along the chunk in a
// loop, one line of W columns per step. A row of the output (and of every
// straight input) is then written (read) as 512 contiguous bytes, where one
// line per row per W columns made a 64-line stripe down a power-of-two
// stride, every line in the same L1 set: lines the prefetchers fetched
// were evicted before their use (transpose_add, one thread, [1024, 1024]
// in L3: 0.44 ns an element, [1040, 1040] 0.22). The row constants are
// computed once a chunk, not once a line. A tile row is read like a row of
// a straight input, at r8: chunk_word(2) is the tiles' base less a lane's
// bytes (4, or 8 in a wide kernel) per column before the chunk.
template <class Vmm>
void RowKernelGen<Vmm>::group_body() {
  const int64_t L = p_.row_length, full = L - L % W;
  if (full > 0) {
    Xbyak::Label chunk;
    xor_(r8, r8);
    L_(chunk);
    lea(rax, ptr[r8 + tile_width_]);
    mov(r9, full);
    cmp(rax, r9);
    cmovg(rax, r9);
    mov(chunk_word(1), rax);
    tile_chunk();
    cmp(r8, static_cast<int>(full));
    jl(chunk, T_NEAR);
  }
  if (L % W != 0) {  // the rest of each row, per row
    mov(r8, full);
    for (int a = 0; a < G; ++a) tail_row(a);
  }
}

// Note [Tile chunks]: columns [r8, chunk_word(1)) of the group, a multiple
// of W; leaves r8 at their end.
template <class Vmm>
void RowKernelGen<Vmm>::tile_chunk() {
  mov(chunk_word(0), r8);
  lea(rax, ptr[rsp + tile_slot_]);
  lea(r9, ptr[r8 * eb_]);
  sub(rax, r9);
  mov(chunk_word(2), rax);
  Xbyak::Label fill;
  L_(fill);
  fill_tiles();
  add(r8, W);
  cmp(r8, chunk_word(1));
  jl(fill, T_NEAR);
  for (int a = 0; a < G; ++a) tile_row(a);
}

// Row `a` of the group along the chunk, reading the tiles.
template <class Vmm>
void RowKernelGen<Vmm>::tile_row(int a) {
  from_tile_ = true;
  row_of_group(a);
  Xbyak::Label line;
  mov(r8, chunk_word(0));
  row_prefetch(a);
  L_(line);
  for (int h = 0; h < W / V; ++h) {
    pass_body(passes_plan_[0], false);
    add(r8, V);
  }
  cmp(r8, chunk_word(1));
  jl(line, T_NEAR);
  std::fill(std::begin(used_), std::end(used_), false);
  group_row_ = 0;
  from_tile_ = false;
}

// Row `a` of the group from column r8 to its end (under W columns), per
// element: the vector that passes the end is a tail.
template <class Vmm>
void RowKernelGen<Vmm>::tail_row(int a) {
  row_of_group(a);
  const int64_t rest = p_.row_length % W;
  const int vectors = static_cast<int>((rest + V - 1) / V);
  for (int h = 0; h < vectors; ++h) {
    if (h > 0) add(r8, V);
    pass_body(passes_plan_[0], (h + 1) * V > rest);
  }
  if (vectors > 1) sub(r8, (vectors - 1) * V);
  std::fill(std::begin(used_), std::end(used_), false);
  group_row_ = 0;
}

// Row `a` of the group: its row constants.
template <class Vmm>
void RowKernelGen<Vmm>::row_of_group(int a) {
  group_row_ = a;
  const_reg_.assign(s_.body.size(), -1);
  std::fill(std::begin(used_), std::end(used_), false);
  plan_passes();
  row_constants(0);
}

// Note [Narrow tiles]
// A tile holds the kernel's lanes whatever its input's dtype: 32-bit lanes
// in a 32-bit kernel, where an 8- or 16-bit
// input (int8, uint8, int16, uint16, bool, float16, bfloat16) is widened as its 4
// elements of a column are loaded (vpmovsxbd, vcvtph2ps, ...), so the
// transpose below is the float32 one and a tile row is read as the lanes
// load_element would have made. What is left of the conversion (bfloat16's
// shift, bool's mask) is done on the transposed rows. Before, such an
// input took the per-element path, one bounce per lane with a line fetched
// for each: int8 `x.T + 1` of [4096, 4096] took 128 ms, now 6.6 (NumPy,
// which writes the result in x's memory order, 1.3). In a wide kernel (Note
// [Wide kernels]) a tile holds 64-bit lanes, every input widened as
// load_wide_at widens it, 4 elements of a column at a time (fill_wide_tile):
// before, wide kernels gathered, and float64 `x.T < y.T` of [2048, 2048]
// took 30.7 ms against NumPy's 2.8.
//
// 4 elements of dtype t at `at` into the 32-bit lanes of x.
template <class Vmm>
void RowKernelGen<Vmm>::tile_load(DType t, const Xbyak::Xmm& x, const Xbyak::Address& at) {
  switch (t) {
    case DType::Float32:
    case DType::Int32: vmovups(x, at); return;
    case DType::Int8: vpmovsxbd(x, at); return;
    case DType::UInt8:
    case DType::Bool: vpmovzxbd(x, at); return;
    case DType::Float16: vcvtph2ps(x, at); return;
    case DType::Int16: vpmovsxwd(x, at); return;
    case DType::UInt16:
    case DType::BFloat16: vpmovzxwd(x, at); return;
    default: throw Unsupported("tiles of " + std::string(name(t)));
  }
}

// The rest of tile_load's conversion, on a whole transposed row.
template <class Vmm>
void RowKernelGen<Vmm>::tile_finish(DType t, const Vmm& v) {
  if (t == DType::BFloat16) vpslld(v, v, 16);
  if (t == DType::Bool) int_to_mask(v);
}

// The G x W block at rows 0..G-1 of the group, columns r8..r8+W-1, of
// each tiled input, transposed into its stack tile (row a at a *
// tile_width_ floats from the chunk's start), V columns at a time. In
// sets of 4 rows g: register j collects, in its 128-bit lane q, the 4
// values of column 4q + j (Note [Narrow tiles]); a 4 x 4 transpose inside
// every lane then leaves row 4g + j in register j. Nothing else is live
// here: v0..v7 are free.
template <class Vmm>
void RowKernelGen<Vmm>::fill_tiles() {
  for (size_t k = 0; k < s_.inputs.size(); ++k) {
    if (tile_of_[k] < 0) continue;
    const DType t = s_.inputs[k].dtype;
    const int size = static_cast<int>(itemsize(t));
    const int stride = static_cast<int>(p_.inputs[k].inner_stride * size);
    const int tile = tile_of_[k] * G * tile_width_ * eb_;
    mov(rax, qword[rsp + in_slot_ + 8 * static_cast<int>(k)]);
    imul(r9, r8, stride);
    add(rax, r9);
    mov(r10, chunk_word(2));  // Note [Tile chunks]
    lea(r10, ptr[r10 + r8 * eb_]);
    // The block kTileAhead blocks on: W input rows, G floats each. The
    // hardware prefetchers do not follow a 64-float-wide column stripe
    // down the rows. Into L2 (t1): rows a power of two apart share L1's
    // sets, and lines fetched blocks ahead into L1 were evicted before use
    // (transpose_add on the Zen 5 machines: 4.9 -> 4.7 ms).
    // (A pair plan prefetches the next unit instead: Note [Tile pairs].)
    if (p_.pair_blocks == 0 && fits_int32(static_cast<int64_t>(stride) * W * (kTileAhead + 1)))
      for (int row = 0; row < W; ++row)
        for (int line = 0; line < std::max(G * size / 64, 1); ++line)
          prefetcht1(ptr[rax + (W * kTileAhead + row) * stride + 64 * line]);
    if (wide_) {
      fill_wide_tile(t, stride, tile);
      continue;
    }
    for (int h = 0; h < W / V; ++h) {
      for (int g = 0; g < G / 4; ++g) {
        for (int j = 0; j < 4; ++j) {
          for (int q = 0; q < V / 4; ++q) {
            Xbyak::Address at = ptr[rax + (h * V + j + 4 * q) * stride + 4 * size * g];
            if (q == 0) tile_load(t, Xbyak::Xmm(j), at);
            else if (size == 4 && kZmm) vinsertf32x4(Xbyak::Zmm(j), Xbyak::Zmm(j), at, q);
            else if (size == 4) vinsertf128(Xbyak::Ymm(j), Xbyak::Ymm(j), at, q);
            else {  // widened in v4 (free until the transpose), then inserted
              tile_load(t, Xbyak::Xmm(4), at);
              if constexpr (kZmm) vinsertf32x4(Xbyak::Zmm(j), Xbyak::Zmm(j), Xbyak::Xmm(4), q);
              else vinsertf128(Xbyak::Ymm(j), Xbyak::Ymm(j), Xbyak::Xmm(4), q);
            }
          }
        }
        const Vmm r0(0), r1(1), r2(2), r3(3), t0(4), t1(5), t2(6), t3(7);
        vunpcklps(t0, r0, r1);
        vunpckhps(t1, r0, r1);
        vunpcklps(t2, r2, r3);
        vunpckhps(t3, r2, r3);
        vshufps(r0, t0, t2, 0x44);
        vshufps(r1, t0, t2, 0xee);
        vshufps(r2, t1, t3, 0x44);
        vshufps(r3, t1, t3, 0xee);
        for (int j = 0; j < 4; ++j) {
          tile_finish(t, Vmm(j));
          vmovups(ptr[r10 + tile + ((4 * g + j) * tile_width_ + h * V) * 4], Vmm(j));
        }
      }
    }
  }
}

// fill_tiles in a wide kernel (Note [Narrow tiles]): ymm registers of 4
// 64-bit lanes, whatever the kernel's vectors. Register j collects the 4
// values of column 4h + j in rows 4g..4g+3, widened; a 4 x 4 transpose of
// 64-bit lanes then leaves row 4g + j in register j.
template <class Vmm>
void RowKernelGen<Vmm>::fill_wide_tile(DType t, int stride, int tile) {
  const int size = static_cast<int>(itemsize(t));
  const Xbyak::Ymm r0(0), r1(1), r2(2), r3(3), t0(4), t1(5), t2(6), t3(7);
  for (int h = 0; h < W / 4; ++h) {
    for (int g = 0; g < G / 4; ++g) {
      for (int j = 0; j < 4; ++j) wide_tile_load(t, Xbyak::Ymm(j), ptr[rax + (4 * h + j) * stride + 4 * size * g]);
      vunpcklpd(t0, r0, r1);  // rows 0 and 2 of columns 0 and 1
      vunpckhpd(t1, r0, r1);  // rows 1 and 3
      vunpcklpd(t2, r2, r3);
      vunpckhpd(t3, r2, r3);
      vperm2f128(r0, t0, t2, 0x20);
      vperm2f128(r1, t1, t3, 0x20);
      vperm2f128(r2, t0, t2, 0x31);
      vperm2f128(r3, t1, t3, 0x31);
      for (int j = 0; j < 4; ++j) {
        if (t == DType::Bool) {  // 0 or 1 -> 0 or all ones
          vpxor(t0, t0, t0);
          vpsubq(Xbyak::Ymm(j), t0, Xbyak::Ymm(j));
        }
        vmovupd(ptr[r10 + tile + ((4 * g + j) * tile_width_ + 4 * h) * 8], Xbyak::Ymm(j));
      }
    }
  }
}

// 4 elements of dtype t at `at` into the 64-bit lanes of y, as
// load_wide_at widens a vector (bool's mask is made on the transposed row).
template <class Vmm>
void RowKernelGen<Vmm>::wide_tile_load(DType t, const Xbyak::Ymm& y, const Xbyak::Address& at) {
  const Xbyak::Xmm x(y.getIdx());
  switch (t) {
    case DType::Float64:
    case DType::Int64: vmovupd(y, at); return;
    case DType::Float32: vcvtps2pd(y, at); return;
    case DType::Int32: vpmovsxdq(y, at); return;
    case DType::UInt32: vpmovzxdq(y, at); return;
    case DType::Int16: vpmovsxwq(y, at); return;
    case DType::UInt16: vpmovzxwq(y, at); return;
    case DType::Int8: vpmovsxbq(y, at); return;
    case DType::UInt8:
    case DType::Bool: vpmovzxbq(y, at); return;
    case DType::Float16:  // exact in float32, then in float64
      vcvtph2ps(x, at);
      vcvtps2pd(y, x);
      return;
    case DType::BFloat16:  // the high half of a float32
      vpmovzxwd(x, at);
      vpslld(x, x, 16);
      vcvtps2pd(y, x);
      return;
  }
  throw Unsupported("wide tiles of " + std::string(name(t)));
}

// rax = input k's pointer (bytes; elements for an arange) for the current
// row of the group.
template <class Vmm>
void RowKernelGen<Vmm>::input_base(int32_t k) {
  mov(rax, qword[rsp + in_slot_ + 8 * k]);
  const KernelInput& in = s_.inputs[k];
  int64_t step = p_.outer.empty() ? 0 : p_.inputs[k].outer_strides.back();
  if (in.kind == KernelInput::Kind::Buffer) step *= itemsize_of(in.dtype);
  if (group_row_ > 0 && step != 0) add(rax, static_cast<int>(group_row_ * step));
}

template <class Vmm>
void RowKernelGen<Vmm>::output_base(size_t k) {
  mov(rax, qword[rsp + out_slot_ + 8 * static_cast<int>(k)]);
  if (group_row_ > 0) add(rax, static_cast<int>(group_row_ * p_.row_length * itemsize_of(s_.outputs[k].dtype)));
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
