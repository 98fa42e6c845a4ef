// The CPU JIT against the spec interpreter, on both ISAs: hand-picked
// kernels (tails, blocks, transposed and half inputs, NaN), a fuzzer over
// random graphs, and the error of the vector math over dense sweeps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <random>

#include "fusion/schedule.h"
#include "fusion/spec_interpreter.h"
#include "graph/half.h"
#include "graph/reference.h"
#include "jit_cpu/kernel_cache.h"
#include "runtime/braze.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "tests/cpp/jit_check.h"
#include "tests/cpp/random_graph.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

using testing::check;
using testing::run_single_kernel;
using testing::check_schedule;
using testing::Checked;
using testing::close;
using testing::isas;

using testing::random_tensor;

TEST(JitCpu, RowKernelsAtEveryTailAndBlockLength) {
  for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 100, 257, 1000, 4099}) {
    SCOPED_TRACE("row length " + std::to_string(n));
    Tensor x = random_tensor({3, n}, static_cast<uint32_t>(n));
    Checked c = check({softmax(x), log_softmax(x), layer_norm(x), rms_norm(x), sum(x, Axes{{-1}}),
                       max(x, Axes{{-1}}), min(x * 2.0, Axes{{-1}}), logsumexp(x, Axes{{-1}}), exp(x) + 1.0},
                      1e-5);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    EXPECT_GT(c.compiled, 0);
  }
}

// Note [Row tiles]: an element-wise row longer than a tile is cut into
// tiles (the last one shorter) that threads share.
TEST(JitCpu, ElementWiseRowsLongerThanATile) {
  for (int64_t n : {jit::kRowTile + 1, 3 * jit::kRowTile, int64_t{40000}}) {
    SCOPED_TRACE("row length " + std::to_string(n));
    Tensor x = random_tensor({n}, 30), y = random_tensor({2, n}, 31), b = random_tensor({n}, 32);
    Tensor every_other = index(random_tensor({2 * n}, 33), std::vector<Index>{Slice{std::nullopt, std::nullopt, -2}});
    Tensor columns = transpose(random_tensor({n, 2}, 34));
    Tensor count = arange(Scalar(int64_t{0}), Scalar(n), Scalar(int64_t{1}), DType::Int32);
    Checked c = check({tanh(x) * 2.0 + 1.0, y * b - 1.0, astype(y + b, DType::Float16), every_other + x, x > 0.5,
                       columns - y, astype(count, DType::Float32) * x, astype(x, DType::Float64) * 3.0});
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  }
}

TEST(JitCpu, TransposedSlicedAndBroadcastInputs) {
  Tensor a = random_tensor({37, 19}, 1), b = random_tensor({19}, 2);
  std::vector<Index> rev{Slice{std::nullopt, std::nullopt, -1}, Slice{1, std::nullopt, 2}};
  Tensor y = tanh(transpose(a) * reshape(b, {19, 1})) + sigmoid(transpose(a));
  Tensor z = index(a, rev) - 1.0;
  Checked c = check({y, z, softmax(transpose(a))});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, TiledTransposesAtEveryGroupAndBlockEdge) {
  // Note [Tiled transposes]: groups of 64 rows, 16-column blocks; rows past
  // the last full group and columns past the last full block take the
  // per-row path, and launch splits rows across threads off group bounds.
  // Note [Tile chunks]: one tiled input fills 128 columns at a time, two 64,
  // five 16; a row's last chunk is shorter.
  for (int64_t rows : {64, 65, 130, 200}) {
    for (int64_t cols : {3, 8, 16, 17, 40, 130, 300}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor a = random_tensor({cols, rows}, 5), b = random_tensor({cols, rows}, 6);
      Tensor x = random_tensor({rows, cols}, 7), s = random_tensor({rows, 1}, 8);
      Tensor t = transpose(a), u = transpose(b);
      Tensor more = transpose(random_tensor({cols, rows}, 12)) * transpose(random_tensor({cols, rows}, 13)) -
                    transpose(random_tensor({cols, rows}, 14));
      Checked c = check({t + x, t * s - u, astype(t, DType::Float16), maximum(t, 0.0) * x + s,
                         index(t, std::vector<Index>{Slice{std::nullopt, std::nullopt, -1}}) + 1.0,
                         t * u + more + s},
                        0);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
  Tensor p = random_tensor({3, 70, 21}, 9);
  Checked c = check({permute(p, {2, 0, 1}) * 2.0, permute(p, {0, 2, 1}) + permute(p, {0, 2, 1})}, 0);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, ColumnReductionsAtEveryTileAndBlockEdge) {
  // Note [Column reductions]: tiles of 1024 columns, sums blocked by 64 rows.
  for (int64_t rows : {0, 2, 63, 64, 65, 130}) {
    for (int64_t cols : {2, 7, 8, 17, 1023, 1025, 2049}) {
      if (rows * cols > 70000) continue;
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = random_tensor({rows, cols}, 10), b = random_tensor({cols}, 11);
      // (With no rows, b + the identity read b through a pointer that no
      // pass down the columns had set: fuzz seed 5483 crashed.)
      Checked c = rows == 0 ? check({sum(x, Axes{{0}}), prod(x, Axes{{0}}) + b})
                            : check({sum(x, Axes{{0}}), max(x * 2.0, Axes{{0}}), min(x, Axes{{0}}) + b,
                                     prod(x * 0.5 + 1.0, Axes{{0}}), mean(exp(x) * b, Axes{{0}}, true)},
                                    1e-5);
      if (rows > 0) check({astype(mean(x, Axes{{0}}), DType::Float16)}, 1e-3);  // a half ulp of rounding apart
      // float32 totals in a wide kernel: accumulated in float64, rounded once.
      Tensor b64 = astype(b, DType::Float64);
      // (Exactly: float64 sums of a few float32 values, in any order, round
      // to the same float32 but in cases a billion times rarer than these.)
      Checked w = rows == 0 ? check({sum(x, Axes{{0}}) + b64})
                            : check({sum(x, Axes{{0}}) + b64, prod(x * 0.5 + 1.0, Axes{{0}}) * b64, max(x, Axes{{0}}) - b64},
                                    0);
      EXPECT_EQ(w.interpreted, 0) << ::testing::PrintToString(w.why);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
  // The middle axis of three, a transposed input, a half input.
  Tensor y = random_tensor({3, 70, 21}, 12), t = random_tensor({40, 30}, 13);
  Checked c = check({sum(y, Axes{{1}}), max(transpose(t), Axes{{0}}), sum(astype(y, DType::BFloat16), Axes{{1}})}, 1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  // Reduced axes further out, with kept axes between them and the row (a
  // batch axis of NCHW-like data); a reduced group of two merged axes.
  Tensor z = random_tensor({9, 5, 4, 33}, 14);
  c = check({sum(z, Axes{{0}}), max(z, Axes{{1}}), mean(z * 2.0, Axes{{0, 1}}), min(transpose(z, {{0, 2, 1, 3}}), Axes{{0}}),
             sum(z, Axes{{0, 2}}, true)},
            1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  // Reduced groups apart from each other: R is walked over several axes
  // (a sum over axes 0 and 2 of [A, B, C, D]; three groups with the row).
  for (Shape shape : {Shape{3, 4, 5, 33}, Shape{7, 2, 65, 17}, Shape{2, 3, 4, 1}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    Tensor w = random_tensor(shape, 17);
    Tensor m = mean(w, Axes{{0, 2}}, true);
    c = check({sum(w, Axes{{0, 2}}), max(w * 2.0, Axes{{0, 2}}), w - m, sum(exp(w - m), Axes{{0, 2}}),
               mean(w, Axes{{0, 2, -1}}), min(transpose(w, {{2, 1, 0, 3}}), Axes{{0, 2}})},
              1e-5);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  }
  Tensor v = random_tensor({3, 2, 4, 5, 6}, 18);
  c = check({sum(v, Axes{{0, 2, 4}}), var(v, Axes{{0, 2, 4}}, 0, true), sum(v, Axes{{0, 3}})}, 1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  // Broadcast back down the columns and reduced again: a pass down the
  // columns per stage (batch normalisation over the batch axis).
  for (int64_t rows : {1, 65, 130}) {
    for (int64_t cols : {7, 2049}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = random_tensor({rows, cols}, 15), g = random_tensor({cols}, 16);
      Tensor m = mean(x, Axes{{0}}, true);
      Tensor normed = (x - m) * rsqrt(mean(square(x - m), Axes{{0}}, true) + 1e-5) * g;
      c = check({var(x, Axes{{0}}), x - m, normed, m}, 1e-4);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
      c = check({astype(normed, DType::Float16)}, 1e-3);  // an f16 ulp apart where float32 results differ slightly
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
  // Reduced along the row as well: batch norm statistics over N, H and W of
  // NCHW data, sums over axes 0 and 2; rows that end in a partial vector,
  // that span several sum blocks, and empty ones.
  for (Shape s : {Shape{4, 3, 5, 7}, Shape{3, 2, 1, 1030}, Shape{2, 3, 0, 9}, Shape{0, 3, 2, 9}, Shape{5, 2, 4, 1}}) {
    SCOPED_TRACE(::testing::PrintToString(s));
    Tensor x = random_tensor(s, 18);
    Axes nhw{{0, 2, 3}};
    Tensor m = mean(x, nhw, true);
    Tensor bn = (x - m) * rsqrt(mean(square(x - m), nhw, true) + 1e-5);
    c = numel(s) == 0 ? check({sum(x, nhw), x - m}) : check({bn, m, max(x, nhw), sum(x, Axes{{0, 3}})}, 1e-4);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  }
  Tensor n = random_tensor({6, 3, 5, 9}, 17);  // NCHW-like, statistics over N
  c = check({n - max(n, Axes{{0}}, true), exp(n - max(n, Axes{{0}}, true)) / sum(exp(n - max(n, Axes{{0}}, true)), Axes{{0}}, true)},
            1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

// The plan of the one kernel that computes `t`.
jit::RowPlan plan_of(const Tensor& t) {
  Schedule s = make_schedule(lower(std::vector<Tensor>{t}).graph);
  EXPECT_EQ(s.steps.size(), 1u);
  return jit::plan_rows(s.steps[0].spec);
}

// Note [Split columns]: few units and many rows split R into parts whose
// totals the last part to finish combines, at every part and tile edge,
// with a Full output beside, NaN rows, half outputs; the same bits however
// the threads finish.
TEST(JitCpu, ColumnReductionsSplitAcrossParts) {
  for (int64_t rows : {512, 513, 1000, 4103}) {
    for (int64_t cols : {7, 16, 1000, 9000}) {
      if (rows * cols > 5000000) continue;
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = random_tensor({rows, cols}, 40), b = random_tensor({cols}, 41);
      ASSERT_GT(plan_of(sum(x, Axes{{0}})).column_parts, 1);
      // float32 sums of R terms: their error grows like sqrt(R) (blocked).
      const double tol = 1e-5 * std::sqrt(static_cast<double>(rows) / 64);
      Checked c = check({sum(x, Axes{{0}}), max(x * 2.0, Axes{{0}}) + b, mean(exp(x), Axes{{0}}),
                         prod(x * 0.01 + 1.0, Axes{{0}}), min(x, Axes{{0}}), x * 3.0},
                        tol);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
      check({astype(sum(x, Axes{{0}}), DType::Float16)}, 1e-3);
    }
  }
  Tensor batched = random_tensor({3, 700, 20}, 42);
  ASSERT_GT(plan_of(sum(batched, Axes{{1}})).column_parts, 1);
  ASSERT_GT(plan_of(sum(astype(batched, DType::Float64), Axes{{1}})).column_parts, 1);
  std::vector<float> v(600 * 9, 1.0f);
  v[5 * 9 + 2] = std::nanf("");
  v[590 * 9 + 4] = INFINITY;
  Tensor special = from_vector<float>(v, {600, 9});
  Checked c = check({sum(batched, Axes{{1}}), max(transpose(batched, {{1, 0, 2}}), Axes{{0}}), sum(special, Axes{{0}}),
                     max(special, Axes{{0}}), min(special, Axes{{0}}), sum(astype(batched, DType::Float64), Axes{{1}}),
                     max(astype(special, DType::Float64) * 2.0, Axes{{0}}),
                     sum(batched, Axes{{1}}) * astype(sum(batched, Axes{{1}}), DType::Float64)},
                    1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  // Which thread finishes last varies from run to run; the bits do not.
  Tensor x = random_tensor({4096, 64}, 43);
  realize({x});
  for (jit::Isa isa : isas()) {
    std::vector<float> first = run_single_kernel<float>(sum(exp(x), Axes{{0}}), isa);
    for (int run = 0; run < 20; ++run)
      ASSERT_EQ(run_single_kernel<float>(sum(exp(x), Axes{{0}}), isa), first) << "run " << run;
  }
}

// A launch's work is the domain's elements, which fit int64: a column
// plan counted whole tiles, up to twice that (UBSan: signed overflow in
// RowPlan::elements() for this valid, never-allocated input).
TEST(JitCpu, AColumnPlansWorkIsItsElements) {
  const int64_t rows = (int64_t{3} << 48), cols = jit::kColumnTile + 1;
  jit::RowPlan p = plan_of(sum(broadcast_to(zeros({1, cols}, DType::Int8), {rows, cols}), Axes{{0}}));
  ASSERT_TRUE(p.columns);
  EXPECT_EQ(p.elements(), rows * cols);
  jit::RowPlan q = plan_of(sum(random_tensor({5, cols}, 8), Axes{{0}}));
  EXPECT_EQ(q.elements(), 5 * cols);
}

// Note [Tile pairs]: a square element-wise kernel that reads one buffer
// both transposed and straight walks pairs of 128 x 128 blocks, (I, J)
// then (J, I); every unit boundary a thread split can fall on, an odd
// number of blocks, other inputs beside, several outputs, int32, a wide
// kernel (gathers, no tiles), slices of a larger buffer. Reads of two
// buffers, or of one at another offset, walk rows as before.
// Note [Reductions in memory order]: a reduction over every axis of a
// transposed input walks it as its memory lies, one row, unless the
// domain's order matters (an argmax's index, a Full output).
TEST(JitCpu, ReductionsOverEveryAxisWalkMemoryInOrder) {
  Tensor x = random_tensor({48, 64}, 90), t = transpose(x);
  for (const Tensor& r : {sum(t), max(t * 2.0), min(exp(t))}) {
    jit::RowPlan p = plan_of(r);
    EXPECT_FALSE(p.columns);
    EXPECT_TRUE(p.reduces);
    EXPECT_EQ(p.row_length, 48 * 64);
    EXPECT_EQ(p.inputs[0].inner_stride, 1);
  }
  jit::RowPlan arg = plan_of(argmax(t));  // the index counts along t's rows
  EXPECT_TRUE(arg.columns);
  EXPECT_EQ(arg.row_length, 48);
  Tensor y = random_tensor({48, 64, 3}, 91);
  Checked c = check({sum(t), max(t * 2.0), min(exp(t)), prod(t * 0.01 + 1.0), sum(permute(y, {2, 0, 1})),
                     sum(index(y, std::vector<Index>{Slice{}, Slice{std::nullopt, std::nullopt, -2}})),
                     sum(astype(t > 0.5, DType::Int32)), argmax(t)},
                    1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, TilePairsOfOneBufferReadBothWays) {
  for (int64_t n : {256, 384, 1024}) {
    SCOPED_TRACE(n);
    Tensor x = random_tensor({n, n}, 50), y = random_tensor({n, n}, 51), s = random_tensor({n, 1}, 52);
    Tensor t = transpose(x);
    EXPECT_EQ(plan_of(t + x).pair_blocks, n / 128);
    EXPECT_EQ(plan_of(x * 2.0 - t).pair_blocks, n / 128);
    Tensor xi = astype(x * 100.0, DType::Int32);
    realize({xi});
    Checked c = check({t + x, x * 2.0 - t, maximum(t, x) * y + s, transpose(xi) + xi}, 0);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    c = check({t + x * 0.5, t - x}, 0);  // two outputs of one kernel
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    c = check({t + x + astype(s, DType::Float64)}, 0);  // float64 lanes
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    Tensor u = transpose(y);  // read transposed with no straight partner: it prefetches its own runs
    EXPECT_EQ(plan_of(t + x - u).pair_blocks, n / 128);
    c = check({t + x - u, u * x + t}, 0);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  }
  Tensor big = random_tensor({300, 300}, 53), a = random_tensor({256, 256}, 54), b = random_tensor({256, 256}, 55);
  std::vector<Index> first{Slice{0, 256}, Slice{0, 256}}, shifted{Slice{1, 257}, Slice{1, 257}};
  Tensor v = index(big, first), w = index(big, shifted);
  EXPECT_EQ(plan_of(transpose(v) + v).pair_blocks, 2);
  EXPECT_EQ(plan_of(transpose(v) + w).pair_blocks, 0);
  EXPECT_EQ(plan_of(transpose(a) + b).pair_blocks, 0);
  EXPECT_EQ(plan_of(transpose(random_tensor({200, 200}, 56)) * 2.0).pair_blocks, 0);
  Checked c = check({transpose(v) + v, transpose(v) + w, transpose(a) + b}, 0);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

// Note [Every other element]: stride-2 rows of 32-bit elements load two
// vectors and permute; the second load ends on the row's last element, so
// a row ending at the buffer's end is read to there and no further.
TEST(JitCpu, RowsReadEveryOtherElement) {
  const Index every_other = Slice{std::nullopt, std::nullopt, 2};
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000}) {
    SCOPED_TRACE("elements " + std::to_string(n));
    Tensor x = random_tensor({3, 2 * n - 1}, 60), flat = random_tensor({2 * n - 1}, 61);
    Tensor even = index(x, std::vector<Index>{Slice{}, every_other});
    Tensor odd = index(x, std::vector<Index>{Slice{}, Slice{1, std::nullopt, 2}});
    Tensor line = index(flat, std::vector<Index>{every_other});
    Tensor ints = astype(x * 1000.0, DType::Int32);
    realize({ints});
    Tensor even_ints = index(ints, std::vector<Index>{Slice{}, every_other});
    Checked c = check({even * 2.0 + 1.0, line - 1.0, even_ints + 3, sum(even, Axes{{-1}}), max(line),
                       argmax(even, -1), softmax(even)},
                      1e-5);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    if (n > 1) {  // odd lanes, beside a slice of the even ones
      c = check({odd * index(even, std::vector<Index>{Slice{}, Slice{0, n - 1}})}, 0);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
    // Wide kernels (Note [Wide kernels]): 64-bit elements, and 32-bit ones
    // beside them, widened after the permute.
    Tensor x64 = astype(x, DType::Float64), longs = astype(x * 1000.0, DType::Int64);
    realize({x64, longs});
    Tensor even64 = index(x64, std::vector<Index>{Slice{}, every_other});
    Tensor even_longs = index(longs, std::vector<Index>{Slice{}, every_other});
    c = check({even64 * 2.0 + 1.0, isnan(even64), even_longs + 3, sum(even64, Axes{{-1}}), even + even64,
               even_ints + even_longs, argmax(even64, -1)},
              1e-12);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  }
}

// Note [Narrow tiles]: transposed 8- and 16-bit inputs are widened into
// the tiles, the rest of their conversion done on the transposed rows, at
// the group and block edges of TiledTransposesAtEveryGroupAndBlockEdge.
TEST(JitCpu, NarrowInputsTiledAtEveryGroupAndBlockEdge) {
  for (int64_t rows : {64, 65, 130}) {
    for (int64_t cols : {3, 16, 17, 40, 130}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor base = random_tensor({cols, rows}, 15) * 100.0, x = random_tensor({rows, cols}, 16);
      for (DType d : {DType::Int8, DType::UInt8, DType::Float16, DType::BFloat16, DType::Bool}) {
        SCOPED_TRACE(name(d));
        Tensor a = d == DType::Bool ? base > 0.0 : astype(d == DType::UInt8 ? abs(base) : base, d);
        Tensor straight = astype(transpose(base), d);
        realize({a, straight});
        Tensor t = transpose(a);
        Checked c = check({astype(t, DType::Float32) + x, eq(t, straight), astype(t, DType::Int32),
                           where(astype(t, DType::Bool), x, 1.0)},
                          0);
        EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
      }
    }
  }
}

// Note [Narrow tiles]: in a wide kernel the tiles hold 64-bit lanes, each
// input widened as it is loaded, 4 elements of a column at a time.
TEST(JitCpu, WideKernelsTileEveryDtypeAtEveryGroupAndBlockEdge) {
  for (int64_t rows : {64, 65, 130}) {
    for (int64_t cols : {3, 16, 17, 40, 130}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor base = random_tensor({cols, rows}, 17) * 100.0;
      Tensor x = astype(random_tensor({rows, cols}, 18), DType::Float64);
      realize({x});
      for (DType d : {DType::Bool, DType::UInt8, DType::Int8, DType::UInt16, DType::Int16, DType::UInt32,
                      DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
        SCOPED_TRACE(name(d));
        Tensor a = d == DType::Bool ? base > 0.0 : astype(is_signed(d) || is_float(d) ? base : abs(base), d);
        Tensor straight = astype(transpose(base), d);
        realize({a, straight});
        Tensor t = transpose(a);
        Checked c = check({astype(t, DType::Float64) + x, astype(t, DType::Int64) * 3,
                           where(astype(t, DType::Bool), x, 1.0), eq(t, straight) && (x > 0.0)},
                          0);
        EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
      }
    }
  }
  Tensor u = astype(abs(random_tensor({256, 256}, 19)) * 1e9, DType::UInt32);  // a pair plan of 64-bit lanes
  realize({u});
  EXPECT_EQ(plan_of(transpose(u) + u).pair_blocks, 2);
  Checked c = check({transpose(u) + u, transpose(u) < u}, 0);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, HalfAndBoolInputsAndOutputs) {
  Tensor x = random_tensor({5, 33}, 3);
  for (DType t : {DType::Float16, DType::BFloat16}) {
    Tensor h = astype(x, t);
    realize({h});
    Checked c = check({h * 2.0 + 1.0, softmax(h), sum(h, Axes{{-1}}), astype(h, DType::Float32),
                       where(h > 0.0, h, -h)},
                      1e-2);
    EXPECT_EQ(c.interpreted, 0) << name(t) << ::testing::PrintToString(c.why);
  }
  Tensor m = x > 0.5;
  realize({m});
  Checked c = check({where(m, x, 0.0), logical_not(m) || (x < -1.0), astype(m, DType::Float32) + x});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

// Note [Arg reductions]: the first best, NaN first, across lanes and tails.
TEST(JitCpu, ArgMaxArgMinAlongTheRow) {
  float nan = std::nanf(""), inf = INFINITY;
  Tensor special = from_vector<float>({1, 3, 3, 2, nan, 5, nan, 0,                      // NaN wins, the first one
                                       -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,  // all equal: index 0
                                       -0.0f, 0.0f, 0.0f, -0.0f, 1, 1, 0, 0,             // signed zeros are equal
                                       4, 1, 4, 1, 4, 9, 9, -9},
                                      {4, 8});
  Checked c = check({argmax(special, -1), argmin(special, -1), argmax(special * 2.0, -1)});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  for (int64_t n : {1, 7, 8, 17, 1023}) {
    SCOPED_TRACE(n);
    Tensor x = random_tensor({5, n}, 20);
    Tensor t = random_tensor({n, 3}, 21);
    Tensor ties = floor(x);
    c = check({argmax(x, -1), argmin(exp(x), -1), argmax(transpose(t), -1), argmin(ties, -1), argmax(ties, -1)});
    // Over a length-1 row there is nothing to reduce: the int64 zeros are a
    // per-element int64 value, which has no lanes.
    if (n > 1) {
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
}

// Note [Arg reductions] down a column: the first best row, NaN first, per
// column, over every tile and vector edge; of integers, bools and float64.
TEST(JitCpu, ArgMaxArgMinDownAColumn) {
  float nan = std::nanf(""), inf = INFINITY;
  Tensor special = transpose(from_vector<float>({1, 3, 3, 2, nan, 5, nan, 0,                      // NaN wins, the first one
                                                 -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,  // all equal: row 0
                                                 -0.0f, 0.0f, 0.0f, -0.0f, 1, 1, 0, 0,             // signed zeros are equal
                                                 4, 1, 4, 1, 4, 9, 9, -9},
                                                {4, 8}));
  realize({special});
  Checked c = check({argmax(special, 0), argmin(special, 0), argmax(special * 2.0, 0)});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  for (int64_t rows : {1, 7, 65}) {
    for (int64_t cols : {1, 8, 17, 9000}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = random_tensor({rows, cols}, 50), t = random_tensor({cols, rows}, 51);
      Tensor ties = floor(x * 2.0);
      c = check({argmax(x, 0), argmin(exp(x), 0), argmax(transpose(t), 0), argmin(ties, 0), argmax(ties, 0),
                 argmax(astype(ties, DType::Int32), 0), argmin(x > 0.0, 0), argmax(astype(x, DType::Float64), 0),
                 argmax(x, 0) + 1});
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
  Tensor y = random_tensor({3, 40, 5}, 52);
  c = check({argmax(y, 1), argmin(y, 0)});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

// Note [Column reductions] of a value the same along the row (b[:, None]
// broadcast over the columns, summed down them): each column's total is
// the same, still kept and stored per column; beside a reduction of a
// value that varies, and with outputs that do not vary along the row.
TEST(JitCpu, ColumnReductionsOfValuesTheSameAlongTheRow) {
  for (int64_t rows : {1, 7, 300}) {
    for (int64_t cols : {1, 8, 17}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = random_tensor({rows, cols}, 80), b = random_tensor({rows, 1}, 81);
      Tensor across = broadcast_to(b, {rows, cols}), e = exp(across);
      Checked c = check({sum(across, Axes{{0}}), max(e, Axes{{0}}), argmax(across, 0), min(across * 2.0 + x, Axes{{0}}),
                         sum(e, Axes{{0}}) + sum(x, Axes{{0}}), mean(x, Axes{{0}}, true) + e,
                         e - mean(across, Axes{{0}}, true), prod(across > 0.0, Axes{{0}})},
                        1e-5);
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
}

// Note [Arg reductions] over the rows and columns at once (argmax of a
// transposed or sliced matrix: a column plan that reduces the row too).
// The answer is the first best in the domain's order, so a later column's
// best wins a tie when it lies in an earlier row; NaN first; a column that
// never beats the identity; integers, bools and float64; a consumer.
TEST(JitCpu, ArgMaxArgMinOverRowsAndColumns) {
  float nan = std::nanf(""), inf = INFINITY;
  // Transposed, row r of the domain is column r here: the first 9 in the
  // domain's order is at (1, 0), in the second column of the data.
  Tensor ties = transpose(from_vector<float>({1, 9, 9, 2, 9, 0, 0, 0, 0, 9, 3, 3}, {3, 4}));
  Tensor nans = transpose(from_vector<float>({1, 2, nan, 4, nan, 6, 7, 8, nan}, {3, 3}));
  Tensor lows = transpose(from_vector<float>({-inf, -inf, -inf, -inf, -inf, -inf}, {2, 3}));
  Tensor signed_zeros = transpose(from_vector<float>({-1, 0.0f, -0.0f, -2, -0.0f, 0.0f}, {2, 3}));
  Checked c = check({argmax(ties), argmin(ties), argmax(nans), argmin(nans), argmax(lows), argmin(lows),
                     argmax(signed_zeros), argmin(signed_zeros) * 2});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  for (int64_t rows : {2, 7, 65}) {
    for (int64_t cols : {2, 8, 17, 1023}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      Tensor x = random_tensor({cols, rows}, 60), y = random_tensor({rows, 2 * cols}, 61);
      Tensor floors = floor(transpose(x) * 2.0);  // many ties, in every column
      Tensor sliced = index(y, std::vector<Index>{Slice{}, Slice{std::nullopt, std::nullopt, 2}});
      c = check({argmax(transpose(x)), argmin(exp(transpose(x))), argmax(floors), argmin(floors),
                 argmax(sliced), argmin(floor(sliced)), argmax(astype(floors, DType::Int32)),
                 argmin(astype(floors, DType::Int64)), argmax(transpose(x) > 0.5), argmin(transpose(x) > 0.5),
                 argmax(astype(transpose(x), DType::Float64)), argmax(floors) + 1});
      EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    }
  }
  Tensor z = random_tensor({4, 5, 6}, 62);  // three axes, two of them merged
  c = check({argmax(permute(z, {2, 0, 1})), argmin(permute(z, {1, 2, 0}))});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, NaNAndInfinityPropagate) {
  float nan = std::nanf(""), inf = INFINITY;
  Tensor x = from_vector<float>({1, nan, 3, -inf, inf, 0, -0.0f, 2, 5, nan, 1, 1, 4, -2, 7, 8, 9}, {1, 17});
  Checked c = check({max(x, Axes{{-1}}), min(x, Axes{{-1}}), sum(x, Axes{{-1}}), maximum(x, 1.0), minimum(x, 1.0),
                     relu(x), sign(x), abs(x), exp(x), log(x), tanh(x), sigmoid(x), isnan(x), isinf(x), floor(x)});
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

TEST(JitCpu, ZeroSizeRowsAndScalars) {
  Tensor e = random_tensor({4, 0}, 4);
  Tensor s = from_vector<float>({2.5f}, {});
  check({sum(e, Axes{{-1}}), exp(e), s * s + 1.0, sum(s)});
}

// Note [Reductions over nothing]: a reduction whose reduced extent is 0
// gives its identity at every kept position, in the kernel itself, over
// all axes of [2, 0, 3] (a column plan of no columns wrote past its
// output: heap corruption) and along one axis, fused with element-wise
// ops before and after. record() is the reduction as the graph builder
// makes it; sum() and prod() would fold a zero-size input to a constant
// when recorded and never reach the kernel.
TEST(JitCpu, ReductionsOverNothingGiveTheIdentity) {
  auto reduce = [](Op op, const Tensor& x, std::vector<int64_t> axes) { return record(op, {x}, Attr{axes, {}}); };
  Tensor e = random_tensor({2, 0, 3}, 6), w = random_tensor({3}, 7);
  Tensor ei = astype(e, DType::Int32);
  std::vector<Tensor> all = {reduce(Op::Sum, e, {0, 1, 2}),          reduce(Op::Prod, e, {0, 1, 2}),
                             reduce(Op::Sum, exp(e), {0, 1}) + w,     reduce(Op::Sum, e, {1}),
                             reduce(Op::Prod, e * 2.0, {1}) - 1.0,    reduce(Op::Sum, e, {0, 1}),
                             reduce(Op::Prod, ei, {0, 1, 2}),         reduce(Op::Sum, ei, {1}),
                             reduce(Op::Max, e, {0}),                 reduce(Op::Sum, astype(e, DType::Float64), {0, 1, 2}),
                             reduce(Op::Sum, transpose(e, {{2, 1, 0}}), {0, 1, 2})};
  // The plan: kept axes as rows, one row of length 0 (it was a column plan
  // of no columns, whose stash of 0 floats the kernel wrote a whole vector
  // into; generated code is not instrumented, so only glibc noticed, at
  // some later free).
  for (size_t i : {0, 3, 5, 9, 10}) {
    jit::RowPlan p = plan_of(all[i]);
    EXPECT_FALSE(p.columns) << i;
    EXPECT_TRUE(p.reduces) << i;
    EXPECT_EQ(p.row_length, 0) << i;
    EXPECT_EQ(p.rows(), all[i].numel()) << i;
  }
  for (const Tensor& r : all) {
    Checked c = check({r});
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
    EXPECT_GT(c.compiled, 0);
  }
  // And through a realize, against the values themselves.
  EXPECT_EQ(all[0].to_vector<double>(), std::vector<double>{0.0});
  EXPECT_EQ(all[1].to_vector<double>(), std::vector<double>{1.0});
  EXPECT_EQ(all[2].to_vector<double>(), w.to_vector<double>());
  EXPECT_EQ(all[3].to_vector<double>(), std::vector<double>(6, 0.0));
  EXPECT_EQ(all[4].to_vector<double>(), std::vector<double>(6, 0.0));
  EXPECT_EQ(all[5].to_vector<double>(), std::vector<double>(3, 0.0));
  EXPECT_EQ(all[6].to_vector<int64_t>(), std::vector<int64_t>{1});
  EXPECT_EQ(all[7].to_vector<int64_t>(), std::vector<int64_t>(6, 0));
  EXPECT_EQ(all[8].numel(), 0);
  EXPECT_EQ(all[9].to_vector<double>(), std::vector<double>{0.0});
  EXPECT_EQ(all[10].to_vector<double>(), std::vector<double>{0.0});
  EXPECT_THROW(reduce(Op::Max, e, {1}), std::invalid_argument);  // no identity: as NumPy
}

// Note [Constants in memory]: a polynomial of 40 coefficients, each a
// scalar that holds a register for the whole pass, runs out of registers
// on AVX-512 (27 beside the scratch ones) as on AVX2 (11), so its kernels
// are generated with the row constants on the stack: along rows, reduced
// along them (a reduction's result is a row constant too), down columns,
// with per-row constants (b[:, None]), over one element, in float64, and
// through the tiles of a transposed input.
TEST(JitCpu, ManyRowConstantsLiveInMemory) {
  auto poly = [](const Tensor& x, const Tensor& b) {
    Tensor y = x * 0.5 + b;
    for (int i = 0; i < 40; ++i) y = y * x + (1.0 / (i + 3));
    return y;
  };
  for (int64_t n : {1, 7, 37}) {
    SCOPED_TRACE(n);
    Tensor x = random_tensor({5, n}, 70) * 0.5, b = random_tensor({5, 1}, 71);
    Tensor y = poly(x, b);
    Checked c = check({y, sum(y, Axes{{-1}}), y - max(y, Axes{{-1}}, /*keepdims=*/true) * 0.25, sum(poly(x, b * 2.0), Axes{{0}}),
                       poly(astype(x, DType::Float64), b), poly(transpose(x), transpose(b))},
                      1e-5);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  }
  Tensor one = random_tensor({1}, 72), square = random_tensor({70, 70}, 73) * 0.5;  // 70 rows: tiled transposes
  Checked c = check({poly(one, one), poly(one, one * 3.0) + sum(one), poly(transpose(square), square)}, 1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

// Note [Spilled values]: 40 per-element values (x times another input
// row), combined in one order and then again in the other, are all live
// at once: more than AVX-512's 27 registers beside the scratch ones, so
// the generator spills the farthest read to the stack: along rows, reduced
// along them, down columns, in float64, with a row tail, and through the
// tiles of a transposed input.
TEST(JitCpu, ManyLiveValuesSpill) {
  auto many = [](const Tensor& x, const Tensor& w) {
    std::vector<Tensor> v;
    for (int64_t i = 0; i < 40; ++i) v.push_back(x * index(w, std::vector<Index>{i}));
    Tensor down = v.back(), up = v.front();
    for (size_t i = 1; i < v.size(); ++i) {
      down = down * 0.5 + v[v.size() - 1 - i];
      up = up * 0.25 - v[i];
    }
    return down + up;
  };
  for (int64_t n : {1, 7, 37}) {
    SCOPED_TRACE(n);
    Tensor x = random_tensor({5, n}, 74), w = random_tensor({40, 5, n}, 75);
    Tensor y = many(x, w);
    Checked c = check({y, sum(y, Axes{{-1}}), sum(many(x, w * 2.0), Axes{{0}}),
                       many(astype(x, DType::Float64), astype(w, DType::Float64))},
                      1e-5);
    EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
  }
  Tensor square = random_tensor({70, 70}, 76), w = random_tensor({40, 70, 70}, 77);  // 70 rows: tiled transposes
  Checked c = check({many(transpose(square), w)}, 1e-5);
  EXPECT_EQ(c.interpreted, 0) << ::testing::PrintToString(c.why);
}

// The differential fuzzer: every kernel of a random graph generated for
// each ISA against the spec interpreter, then the whole graph as realize
// runs it against the reference interpreter.
TEST(JitCpu, RandomGraphsMatchTheReference) {
  int compiled = 0, interpreted = 0;
  std::map<std::string, int> why;
  std::map<DType, int> graphs_of;
  const uint32_t graphs = testing::fuzz_graphs(500);
  for (uint32_t seed = testing::fuzz_first(); seed < testing::fuzz_first() + graphs; ++seed) {
    std::vector<Array> inputs;
    testing::RandomGraph random(seed, {.well_conditioned = true, .float64_too = true, .int64_too = true, .square_too = true});
    Graph g = random.build(inputs);
    ++graphs_of[random.dtype()];
    SCOPED_TRACE("seed " + std::to_string(seed));
    Schedule s = make_schedule(g);
    for (jit::Isa isa : isas()) {
      Checked c = check_schedule(s, inputs, isa, 1e-4);
      compiled += c.compiled;
      interpreted += c.interpreted;
      for (const std::string& w : c.why) ++why[w];
    }
    std::vector<Array> got = execute(s, inputs, allocate_array);
    std::vector<Array> want = reference::evaluate(g, inputs, g.outputs);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(close(got[i], want[i], 1e-4)) << "output " << i << "\n" << explain(s);
    if (HasFailure()) break;
  }
  std::cout << graphs << " graphs (";
  for (auto [t, n] : graphs_of) std::cout << n << " " << name(t) << (t == graphs_of.rbegin()->first ? "" : ", ");
  std::cout << "): " << compiled << " kernels generated, " << interpreted << " interpreted\n";
  for (auto& [w, n] : why) std::cout << "  " << n << " x " << w << "\n";
  EXPECT_GT(compiled, 3 * interpreted) << compiled << " compiled, " << interpreted << " interpreted";
}

// Units in the last place between a float result and the exact value.
double ulps(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : INFINITY;
  constexpr double kMax = 3.4028234663852886e38;  // FLT_MAX
  if (std::isinf(exact)) return static_cast<double>(got) == exact ? 0 : INFINITY;
  if (std::abs(exact) >= kMax + std::ldexp(1.0, 103))  // rounds to inf in float32
    return std::isinf(got) && std::signbit(got) == std::signbit(exact) ? 0 : INFINITY;
  // Past FLT_MAX, measure in the ulp at FLT_MAX: inf is 1 ulp above it.
  double g = std::isinf(got) ? std::copysign(kMax + std::ldexp(1.0, 104), got) : got;
  float e = static_cast<float>(std::min(std::abs(exact), kMax));
  double ulp = std::nextafter(e, INFINITY) - static_cast<double>(e);
  if (e == static_cast<float>(kMax)) ulp = std::ldexp(1.0, 104);
  if (std::abs(exact) < 1.1754943508222875e-38) ulp = 1.401298464324817e-45;  // denormal spacing
  return std::abs(g - exact) / ulp;
}

// Dense sweep: every 97th float bit pattern (both signs), plus the edges:
// zeros, infinities, NaN, denormals, and the points where the functions in
// jit_cpu/vector_math.h change method (fast/slow paths, clamps, regions).
std::vector<float> sweep() {
  std::vector<float> v;
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 97) v.push_back(bits_float(static_cast<uint32_t>(bits)));
  for (float e : {0.0f, INFINITY, std::nanf(""), 1e-45f, 3e-45f, 1.17549435e-38f, 1.1754942e-38f, 3.4028235e38f, 1.0f,
                  0.99999994f, 1.0000001f, 88.72f, 88.7228f, 88.72284f, 88.7229f, 88.73f, 89.0f, 87.33f, 86.0f,
                  86.00001f, 103.97f, 104.0f, 104.5f, 125.0f, 125.00001f, 126.0f, 127.99999f, 128.0f, 129.0f,
                  149.0f, 149.5f, 150.0f, 151.0f, 17.9f, 18.0f, 18.1f, 9.0f, 9.1f, 9.2f, 0.625f, 3.92f, 3.9f,
                  0.99999994f, 2.5f, 0.5f, 2.0f, 1.5707964f, 3.1415927f, 4.712389f, 6.2831855f, 1e5f, 102943.7f,
                  0x1p24f, 0x1p40f, 0x1.000002p40f, 0x1p41f, 1e30f, 1e38f})
    for (float sign : {1.0f, -1.0f}) v.push_back(sign * e);
  return v;
}

TEST(JitCpu, VectorMathErrorBounds) {
  // The bounds each function documents in jit_cpu/vector_math.h. Those with
  // a slow path for a vector with any lane past a limit are swept a second
  // time with every 8th lane at 1e30, so the slow path meets every input.
  struct Case {
    Tensor (*f)(const Operand&);
    double (*exact)(double);
    double max_ulps;
    const char* name;
    bool slow_path = false;
  };
  const Case cases[] = {
      {exp, [](double x) { return std::exp(x); }, 1, "exp", true},
      {exp2, [](double x) { return std::exp2(x); }, 1, "exp2", true},
      {expm1, [](double x) { return std::expm1(x); }, 2, "expm1"},
      {log, [](double x) { return std::log(x); }, 2, "log"},
      {log2, [](double x) { return std::log2(x); }, 2, "log2"},
      {log1p, [](double x) { return std::log1p(x); }, 2, "log1p"},
      {tanh, [](double x) { return std::tanh(x); }, 3, "tanh"},
      {sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, 3, "sigmoid", true},
      {erf, [](double x) { return std::erf(x); }, 3, "erf"},
      {sin, [](double x) { return std::sin(x); }, 1, "sin", true},
      {cos, [](double x) { return std::cos(x); }, 1, "cos", true},
      {tan, [](double x) { return std::tan(x); }, 1, "tan", true},
  };
  std::vector<float> plain = sweep(), mixed = plain;
  for (size_t i = 0; i < mixed.size(); i += 8) mixed[i] = 1e30f;
  for (const std::vector<float>* xs : {&plain, &mixed}) {
    Tensor x = from_vector<float>(*xs, {static_cast<int64_t>(xs->size())});
    for (const Case& c : cases) {
      if (xs == &mixed && !c.slow_path) continue;
      for (jit::Isa isa : isas()) {
        std::vector<float> got = run_single_kernel<float>(c.f(x), isa);
        ASSERT_EQ(got.size(), xs->size());
        double worst = 0;
        float worst_x = 0;
        for (size_t i = 0; i < xs->size(); ++i) {
          double e = ulps(got[i], c.exact((*xs)[i]));
          if (!(e <= worst)) worst = e, worst_x = (*xs)[i];
        }
        EXPECT_LE(worst, c.max_ulps) << c.name << " on " << jit::name(isa) << (xs == &mixed ? " (slow path)" : "")
                                     << ": worst at x = " << worst_x;
      }
    }
  }
}

// Where the exact value rounds to +-1 or 0 the result is exactly that,
// not an ulp off (the sweep allows the bound): gelu and friends saturate
// through these.
TEST(JitCpu, VectorMathSaturatesExactly) {
  std::vector<float> far = {4.0f, 5.0f, 9.1f, 10.0f, 40.0f, 1e4f, INFINITY};
  std::vector<float> xs;
  for (float v : far) xs.insert(xs.end(), {v, -v});
  Tensor x = from_vector<float>(xs, {static_cast<int64_t>(xs.size())});
  for (jit::Isa isa : isas()) {
    std::vector<float> e = run_single_kernel<float>(erf(x), isa), t = run_single_kernel<float>(tanh(x), isa);
    for (size_t i = 0; i < xs.size(); ++i) {
      float one = std::copysign(1.0f, xs[i]);
      EXPECT_EQ(e[i], one) << "erf(" << xs[i] << ") on " << jit::name(isa);
      if (std::abs(xs[i]) >= 9.1f) {
        EXPECT_EQ(t[i], one) << "tanh(" << xs[i] << ") on " << jit::name(isa);
      }
    }
    std::vector<float> big = {40.0f, 1e4f, INFINITY, -104.0f, -1e4f, -INFINITY};
    Tensor b = from_vector<float>(big, {6});
    std::vector<float> sg = run_single_kernel<float>(sigmoid(b), isa), ex = run_single_kernel<float>(exp(b), isa);
    for (size_t i = 0; i < big.size(); ++i) {
      EXPECT_EQ(sg[i], big[i] > 0 ? 1.0f : 0.0f) << "sigmoid(" << big[i] << ") on " << jit::name(isa);
      if (big[i] < 0) {
        EXPECT_EQ(ex[i], 0.0f) << "exp(" << big[i] << ") on " << jit::name(isa);
      }
    }
  }
}

// The odd functions keep the sign of zero, as NumPy's (the ulp measure
// cannot see it): f(-0) = -0 and f(+0) = +0.
TEST(JitCpu, VectorMathKeepsTheSignOfZero) {
  Tensor x = from_vector<float>({-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f}, {9});
  for (jit::Isa isa : isas())
    for (auto [f, name] : {std::pair{&sin, "sin"}, {&tan, "tan"}, {&tanh, "tanh"}, {&erf, "erf"}, {&expm1, "expm1"}, {&log1p, "log1p"}}) {
      std::vector<float> got = run_single_kernel<float>(f(x), isa);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(got[i] == 0 && std::signbit(got[i]) == (i % 2 == 0))
            << name << "(" << (i % 2 ? "+0" : "-0") << ") = " << got[i] << " on " << jit::name(isa);
    }
}

// Note [Float64 scalars cast to float32] (codegen.cpp): an optimizer's
// float64 learning rate cast to float32 keeps the kernel in 32-bit lanes,
// and the cast is the reference's (rounded to nearest, to subnormals,
// infinities and NaN); a float64 scalar read as float64 still makes it wide.
TEST(JitCpu, Float64ScalarsCastToFloat32KeepKernelsNarrow) {
  Tensor x = random_tensor({5, 37}, 30), g = random_tensor({5, 37}, 31);
  realize({x, g});
  const std::vector<float> xs = x.to_vector<float>(), gs = g.to_vector<float>();
  // As a program schedules it: a 0-d input is a scalar input of the kernel.
  auto spec_of = [](const Tensor& t) {
    Schedule s = program_schedule(lower(std::vector<Tensor>{t}).graph);
    EXPECT_EQ(s.steps.size(), 1u);
    return s.steps[0].spec;
  };
  for (double lr : {0.1, 1e-3, 1.0 / 3.0, 1e-40, 1e-50, 3.5e38, -0.0, std::nan(""), double{INFINITY}}) {
    SCOPED_TRACE(lr);
    Tensor rate = from_vector<double>({lr}, {});  // a 0-d input: bz.optim's learning rate
    realize({rate});
    Tensor step = x - astype(rate, DType::Float32) * g;
    const KernelSpec spec = spec_of(step);
    ASSERT_TRUE(std::any_of(spec.inputs.begin(), spec.inputs.end(), [](const KernelInput& in) {
      return in.kind == KernelInput::Kind::Scalar && in.dtype == DType::Float64;
    })) << canonical_text(spec);
    for (jit::Isa isa : {jit::Isa::Avx512, jit::Isa::Avx2}) {
      std::string why;
      std::unique_ptr<jit::CompiledKernel> k = jit::compile(spec, isa, why);
      ASSERT_TRUE(k) << why;
      EXPECT_FALSE(k->wide()) << jit::name(isa);
    }
    // The reference's float32 ops, each rounded: the cast, the product, the difference.
    const std::vector<float> got = step.to_vector<float>();
    const float r = static_cast<float>(lr);
    for (size_t i = 0; i < got.size(); ++i) {
      const float want = xs[i] - r * gs[i];
      EXPECT_TRUE(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want) || (std::isnan(got[i]) && std::isnan(want)))
          << i << ": " << got[i] << " != " << want;
    }
  }
  Tensor rate = from_vector<double>({0.1}, {});
  realize({rate});
  Tensor wide = x - astype(rate * 3.0, DType::Float32) * g;  // float64 math on the scalar first
  std::string why;
  EXPECT_TRUE(jit::compile(spec_of(wide), jit::Isa::Avx2, why)->wide());
}

// Code generation needs no CPU support (only running it does), so the
// AVX-512 forms of the vector math are emitted on every host: an operand
// xbyak rejects there throws even where the sweep above cannot run them.
TEST(JitCpu, VectorMathEmitsForBothIsas) {
  Tensor x = random_tensor({3, 37}, 1);
  Tensor y = random_tensor({3, 37}, 2);
  for (const Tensor& t : {exp(x), exp2(x), expm1(x), log(x), log2(x), log1p(x), tanh(x), sigmoid(x), erf(x), sin(x),
                          cos(x), power(x, y)}) {
    Lowered l = lower(std::vector<Tensor>{t});
    Schedule s = make_schedule(l.graph);
    ASSERT_EQ(s.steps.size(), 1u);
    for (jit::Isa isa : {jit::Isa::Avx512, jit::Isa::Avx2}) {
      std::string why;
      EXPECT_TRUE(jit::compile(s.steps[0].spec, isa, why)) << jit::name(isa) << ": " << why;
    }
  }
}

// pow over a grid: bases (every 49999th bit pattern, the edges, and values
// next to 1) times exponents (zeros, integers odd and even, halves,
// infinities, NaN, and values spread from 1e-3 to 1e10). Against std::pow,
// which NumPy's float32 power follows for every special value.
TEST(JitCpu, PowErrorBoundOverAGrid) {
  std::vector<float> bases;
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 49999) bases.push_back(bits_float(static_cast<uint32_t>(bits)));
  for (float e : {0.0f, 1.0f, 2.0f, 0.5f, 3.0f, 10.0f, INFINITY, std::nanf(""), 1e-45f, 1.17549435e-38f, 3.4028235e38f,
                  0.999f, 1.001f})
    for (float sign : {1.0f, -1.0f}) bases.push_back(sign * e);
  for (int k = 1; k <= 40; ++k) {
    bases.push_back(1.0f + k * 0x1p-23f);
    bases.push_back(1.0f - k * 0x1p-24f);
  }
  std::vector<float> exps = {0.0f,  -0.0f, 1.0f,   -1.0f,   2.0f,  -2.0f,     3.0f,     -3.0f,     0.5f,
                             -0.5f, 2.5f,  -2.5f,  1 / 3.0f, 7.0f, -7.0f,     127.0f,   -126.0f,   -149.0f,
                             150.0f, -150.0f, 16777215.0f, 16777216.0f, -16777215.0f, 1e10f, -1e10f,
                             INFINITY, -INFINITY, std::nanf(""), 1e-10f, 0x1p-30f, 0.1f, 1e5f, -1e5f};
  for (float e = 1e-3f; e < 1e4f; e *= 1.71f) {
    exps.push_back(e);
    exps.push_back(-e);
  }
  const int64_t nb = static_cast<int64_t>(bases.size()), ne = static_cast<int64_t>(exps.size());
  Tensor b = from_vector<float>(bases, {nb, 1});
  Tensor e = from_vector<float>(exps, {1, ne});
  for (jit::Isa isa : isas()) {
    std::vector<float> got = run_single_kernel<float>(power(b, e), isa);
    ASSERT_EQ(got.size(), static_cast<size_t>(nb * ne));
    double worst = 0;
    float worst_b = 0, worst_e = 0;
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t j = 0; j < ne; ++j) {
        double u = ulps(got[i * ne + j], std::pow(static_cast<double>(bases[i]), static_cast<double>(exps[j])));
        if (!(u <= worst)) worst = u, worst_b = bases[i], worst_e = exps[j];
      }
    // The bound pow documents in jit_cpu/vector_math.h.
    EXPECT_LE(worst, 1) << "pow on " << jit::name(isa) << ": worst at " << worst_b << " ** " << worst_e;
  }
}

}  // namespace
}  // namespace braze
