// The rendering decisions of jit_cuda/cuda_source*.cpp, each checked by the
// text it renders, by NVRTC compiling it for sm_80 and sm_90 (where NVRTC
// is installed) and by its emulated results against the spec interpreter:
// 32-bit index math up to its bound (Note [CUDA index space]), vector loads
// and stores (Note [CUDA vector access]) and split column reductions
// (Note [CUDA kernel shapes]).
#include <gtest/gtest.h>

#include "fusion/schedule.h"
#include "jit_cuda/cuda_error.h"
#include "jit_cuda/cuda_layout.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/cuda_source_renderer.h"
#include "jit_cuda/emulated_kernels.h"
#include "jit_cuda/nvrtc_api.h"
#include "jit_cuda/nvrtc_compile.h"
#include "runtime/braze.h"
#include "runtime/lower.h"
#include "tests/cpp/jit_cuda_emulate.h"
#include "tests/cpp/random_tensor.h"

namespace braze::cuda {
namespace {

using testing::random_tensor;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The one kernel of a graph.
KernelSpec only_spec(const Graph& g) {
  std::vector<KernelSpec> specs;
  for (const Step& s : make_schedule(g).steps)
    if (s.group.kind == FusedGroup::Kind::Kernel) specs.push_back(s.spec);
  EXPECT_EQ(specs.size(), 1u);
  return specs.at(0);
}
KernelSpec only_spec(const std::vector<Tensor>& roots) { return only_spec(lower(roots).graph); }

// Kernels with distinct names (different cases may lower to one spec).
void keep_unique(std::vector<KernelSpec>& specs, std::vector<CudaKernelSource>& kernels) {
  std::vector<KernelSpec> s;
  std::vector<CudaKernelSource> k;
  for (size_t i = 0; i < kernels.size(); ++i) {
    bool seen = false;
    for (const CudaKernelSource& x : k) seen = seen || x.name == kernels[i].name;
    if (!seen) s.push_back(specs[i]), k.push_back(kernels[i]);
  }
  specs = std::move(s), kernels = std::move(k);
}

// Compiles all of them into one program for sm_80 and sm_90.
void expect_nvrtc_compiles(const std::vector<CudaKernelSource>& kernels) {
  if (!nvrtc_available()) return;
  std::string source;
  for (const CudaKernelSource& k : kernels) source += k.source + "\n";
  for (int arch : {80, 90}) {
    try {
      compile_cuda(source, "codegen_test", arch, CudaImage::Cubin);
    } catch (const CudaError& e) {
      ADD_FAILURE() << "sm_" << arch << ": " << e.what() << "\n" << e.error_text();
    }
  }
}

// x[start : start + 8] * 2 + 1 of a float32 vector of start + 8 elements:
// the kernel reads element offsets start .. start + 7.
KernelSpec sliced_at(int64_t start) {
  Graph g;
  NodeId x = g.apply(Op::Slice, {g.input(DType::Float32, {start + 8})}, Attr{{start, 1, 8}, {}});
  g.outputs.push_back(g.apply(Op::Add, {g.apply(Op::Mul, {x, g.constant(DType::Float32, 2.0)}), g.constant(DType::Float32, 1.0)}));
  return only_spec(g);
}

TEST(JitCudaIndex32, OffsetsUpTo2To31Minus1AreIntAndBeyondAre64Bit) {
  // Reaches kMaxIndex32 = 2^31 - 1 exactly, then 4 elements past it.
  KernelSpec fits = sliced_at(kMaxIndex32 - 7), beyond = sliced_at(kMaxIndex32 - 3);
  EXPECT_TRUE(make_layout(fits).index32);
  EXPECT_FALSE(make_layout(beyond).index32);
  std::vector<CudaKernelSource> k{render_cuda(fits), render_cuda(beyond)};
  EXPECT_TRUE(has(k[0].source, "typedef int I;\n  typedef unsigned U;")) << k[0].source;
  EXPECT_TRUE(has(k[1].source, "typedef long long I;\n  typedef unsigned long long U;")) << k[1].source;
  expect_nvrtc_compiles(k);
  // Emulated on buffers of 2^31 floats (8 GB mapped, 4 KB touched): an
  // offset wrapped to 32 bits would read elsewhere or fault.
  EmulatedKernels so(k);
  testing::check_emulated(fits, k[0], so, 1);
  testing::check_emulated(beyond, k[1], so, 2);
}

TEST(JitCudaIndex32, DomainsOf2To31ElementsAre64Bit) {
  auto render_numel = [](int64_t n) {
    Graph g;
    g.outputs.push_back(g.apply(Op::Neg, {g.input(DType::Int8, {n})}));
    return render_cuda(only_spec(g)).source;
  };
  EXPECT_TRUE(has(render_numel(kMaxIndex32), "typedef int I;"));
  EXPECT_TRUE(has(render_numel(kMaxIndex32 + 1), "typedef long long I;"));
}

TEST(JitCudaIndex32, GridStrideNeverPassesTheUnsignedRange) {
  // The last index below 2^31 plus one grid of threads stays below 2^32.
  for (int threads : {32, 128, 256, 512}) {
    CudaLaunch l{KernelShape::Elements, threads, kMaxIndex32};
    EXPECT_LE(l.blocks(int64_t{1} << 40) * threads, kMaxGridThreads) << threads;
    EXPECT_EQ(l.blocks(2), 2);
  }
}

// `x` of `t`, realized: a leaf that kernels read in that dtype.
Tensor stored_as(const Tensor& x, DType t) {
  Tensor y = astype(x, t);
  y.data();
  return y;
}

// x[:, start:]
Tensor columns_from(const Tensor& x, int64_t start) {
  std::vector<Index> items{Slice{}, Slice{start, std::nullopt, 1}};
  return index(x, items);
}

// x[:, :stop]
Tensor columns_to(const Tensor& x, int64_t stop) {
  std::vector<Index> items{Slice{}, Slice{std::nullopt, stop, 1}};
  return index(x, items);
}

struct VectorCase {
  const char* what;
  std::vector<Tensor> roots;
  int width;
  std::vector<std::string> expected;  // parts of the source
  std::vector<std::string> absent;
};

std::vector<VectorCase> vector_cases() {
  Tensor x = random_tensor({64, 256}, 1), y = random_tensor({256}, 2);
  Tensor h = stored_as(x, DType::Float16), b = stored_as(x, DType::BFloat16);
  return {
      {"float32 and a row broadcast along the columns", {exp(x) * y + 1.0}, 4,
       {"bz::load_vec<float, 4>(in0", "bz::load_vec<float, 4>(in1", "bz::store_vec(out0 + i, o0)"}, {"kN * "}},
      {"float16", {h * h + 1.0}, 8, {"bz::load_vec<bz::f16_bits, 8>(in0", "bz::Vec<bz::f16_bits, 8> o0"}, {}},
      {"bfloat16", {exp(b)}, 8, {"bz::load_vec<bz::bf16_bits, 8>(in0", "bz::Vec<bz::bf16_bits, 8> o0"}, {}},
      {"int8", {stored_as(x, DType::Int8) + stored_as(x * 3.0, DType::Int8)}, 16, {"bz::load_vec<signed char, 16>(in0"}, {}},
      {"float16 to float32: the widest dtype sets the width", {astype(h, DType::Float32) * 2.0}, 4,
       {"bz::load_vec<bz::f16_bits, 4>(in0", "bz::Vec<float, 4> o0"}, {}},
      {"float64", {stored_as(x, DType::Float64) * 3.0}, 2, {"bz::load_vec<double, 2>(in0"}, {}},
      {"a comparison stores bools", {x > y}, 4, {"bz::Vec<unsigned char, 4> o0"}, {}},
      {"a column broadcast along the rows: one scalar per thread", {x - random_tensor({64, 1}, 3)}, 4,
       {"bz::load_vec<float, 4>(in0", "const float b1 = in1["}, {}},
      {"a view at an element offset that divides the width", {columns_from(random_tensor({64, 260}, 4), 4) + 1.0},
       4, {"bz::load_vec<float, 4>(in0 + (4 + x0 * 260 + x1))"}, {}},
      {"a view at an odd offset: gathered, the output still stored whole",
       {columns_from(random_tensor({64, 257}, 5), 1) + 1.0}, 4,
       {"in0[1 + x0 * 257 + (x1 + e)]", "bz::store_vec(out0"}, {"load_vec"}},
      {"transposed, narrower than a tile (Tiles): gathered", {transpose(random_tensor({16, 64}, 6)) + random_tensor({64, 16}, 10)}, 4,
       {"in0[0 + x0 + (x1 + e) * 64]", "bz::load_vec<float, 4>(in1"}, {}},
      {"one axis not divisible by the width: a scalar tail", {random_tensor({1003}, 7) * 2.0}, 4,
       {"constexpr U kVectors = 250;", "for (U i = kVectors * 4 + "}, {}},
      {"several axes, the inner one not divisible: scalar", {random_tensor({7, 5}, 8) + random_tensor({5}, 9)}, 1, {},
       {"load_vec", "store_vec"}},
  };
}

void check_vector_cases(const std::vector<VectorCase>& cases) {
  std::vector<KernelSpec> specs;
  std::vector<CudaKernelSource> kernels;
  for (const VectorCase& c : cases) {
    specs.push_back(only_spec(c.roots));
    kernels.push_back(render_cuda(specs.back()));
    const std::string& s = kernels.back().source;
    EXPECT_EQ(plan_vectors(specs.back(), make_layout(specs.back())).width, c.width) << c.what << "\n" << s;
    for (const std::string& part : c.expected) EXPECT_TRUE(has(s, part)) << c.what << ": no " << part << "\n" << s;
    for (const std::string& part : c.absent) EXPECT_FALSE(has(s, part)) << c.what << ": has " << part << "\n" << s;
  }
  expect_nvrtc_compiles(kernels);
  EmulatedKernels so(kernels);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(cases[i].what);
    testing::check_emulated(specs[i], kernels[i], so, static_cast<uint32_t>(i));
  }
}

TEST(JitCudaVectors, ElementwiseKernelsMove16BytesWhereTheLayoutAllows) { check_vector_cases(vector_cases()); }

TEST(JitCudaVectors, RowReductionsReadWholeVectorsWhereTheRowsAllow) {
  Tensor x = random_tensor({8, 300}, 11), w = random_tensor({256}, 12);
  Tensor h = stored_as(random_tensor({8, 256}, 13), DType::Float16);
  check_vector_cases({
      // Note [Rows held in registers]: each thread's one vector of the row,
      // loaded once for the three passes.
      {"softmax, float32 rows of 300", {softmax(x)}, 4,
       {"constexpr int kPer = 1;", "c0[it] = bz::load_vec<float, 4>(in0", "const bz::Vec<float, 4>& r0 = c0[it];",
        "bz::store_vec(out0 + (x0 * 300 + x1), o0)"}, {}},
      {"softmax, rows too long to hold: read in each pass", {softmax(random_tensor({2, 40000}, 16))}, 4,
       {"for (U j = threadIdx.x * 4; j < kL; j += blockDim.x * 4)", "bz::load_vec<float, 4>(in0"}, {"kPer"}},
      {"layer_norm, float16 with a float32 weight", {layer_norm(h, w, w)}, 4,
       {"bz::load_vec<bz::f16_bits, 4>(in0", "bz::load_vec<float, 4>(in"}, {}},
      {"argmax along rows: positions j + e; one pass, nothing held", {argmax(x, 1)}, 4, {"(long long)(j + e)"}, {"kPer"}},
      {"rows at an odd offset are not gathered", {softmax(columns_from(random_tensor({8, 301}, 14), 1))}, 1, {},
       {"load_vec"}},
      {"rows of 30 do not divide by 4", {logsumexp(random_tensor({8, 30}, 15), Axes{{-1}})}, 1, {}, {"load_vec"}},
  });
}

// Column reductions of [rows, columns] over the rows: split across a
// block's threads once the columns are long enough (Note [CUDA kernel
// shapes]); every reduction, with and without NaN, against the interpreter.
TEST(JitCudaSplitColumns, ColumnReductionsMatchTheInterpreter) {
  struct Case {
    int64_t rows;
    std::vector<Tensor> roots;
  };
  std::vector<Case> cases;
  for (int64_t rows : {1, 7, 1023, 100000})
    for (int64_t columns : {1, 7, 40}) {
      Tensor x = random_tensor({rows, columns}, static_cast<uint32_t>(rows + columns));
      for (std::vector<Tensor> roots : std::vector<std::vector<Tensor>>{
               {sum(x, Axes{{0}})}, {max(x, Axes{{0}})}, {min(x, Axes{{0}})}, {mean(x, Axes{{0}})},
               {var(x, Axes{{0}})}, {argmax(x, 0)}, {x - mean(x, Axes{{0}})}})
        cases.push_back({rows, roots});
    }
  std::vector<KernelSpec> specs;
  std::vector<CudaKernelSource> kernels;
  int split = 0;
  for (const Case& c : cases) {
    specs.push_back(only_spec(c.roots));
    kernels.push_back(render_cuda(specs.back()));
    const CudaKernelSource& k = kernels.back();
    if (k.launch.shape == KernelShape::SplitColumns) {
      ++split;
      EXPECT_TRUE(has(k.source, "bz::column_reduce(")) << k.source;
    }
  }
  EXPECT_EQ(split, 2 * 2 * 7);  // 1023 and 100000 rows of 7 and 40 columns
  keep_unique(specs, kernels);
  expect_nvrtc_compiles(kernels);
  EmulatedKernels so(kernels);
  for (size_t i = 0; i < specs.size(); ++i) {
    const int64_t rows = specs[i].domain[0];
    SCOPED_TRACE(kernels[i].name + " over " + std::to_string(rows) + " rows");
    // Float32 sums of n values in another order differ by about eps x
    // sqrt(n) x the partial sums' size (~sqrt(n) here): n x eps, and the
    // scalar argument (0.75 for every scalar, not n) leaves a mean a sum.
    testing::EmulationOptions o{.tolerance_scale = std::max(1.0, static_cast<double>(rows) / 500)};
    testing::check_emulated(specs[i], kernels[i], so, static_cast<uint32_t>(i), o);
    o.nan_chance = 1.0 / static_cast<double>(rows);  // most columns see a NaN
    testing::check_emulated(specs[i], kernels[i], so, static_cast<uint32_t>(i + 1000), o);
  }
}

// Tiles (Note [CUDA kernel shapes]): inputs read transposed are staged
// through shared memory, over whole tiles and ragged edges, beside inputs
// read straight and broadcast, in every storage width, and the results
// are the spec interpreter's bit for bit.
TEST(JitCudaTiles, TransposedInputsAreStagedAndMatchTheInterpreter) {
  std::vector<KernelSpec> specs;
  std::vector<CudaKernelSource> kernels;
  for (auto [rows, columns] : {std::pair<int64_t, int64_t>{32, 32}, {33, 70}, {100, 64}, {31, 64}})
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Int64, DType::Bool, DType::Float64}) {
      Tensor x = astype(random_tensor({rows, columns}, static_cast<uint32_t>(rows * columns)), t);
      Tensor y = astype(random_tensor({columns, rows}, static_cast<uint32_t>(rows + columns)), t);
      Tensor b = astype(random_tensor({rows}, 3), t);
      Tensor cube = astype(random_tensor({3, rows, columns}, 4), t);
      for (Tensor root : {transpose(x) + y, transpose(x) * b, where(transpose(x) > y, y, transpose(x)),
                          maximum(permute(cube, {0, 2, 1}), transpose(x))}) {
        specs.push_back(only_spec({root}));
        kernels.push_back(render_cuda(specs.back()));
        const bool tiles = rows >= 32 && columns >= 32;  // both tiled axes a tile long (kTile)
        EXPECT_EQ(kernels.back().launch.shape == KernelShape::Tiles, tiles) << kernels.back().source;
        if (tiles) {
          EXPECT_TRUE(has(kernels.back().source, "__syncthreads()")) << kernels.back().source;
        }
      }
    }
  keep_unique(specs, kernels);
  expect_nvrtc_compiles(kernels);
  EmulatedKernels so(kernels);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(kernels[i].name);
    testing::check_emulated(specs[i], kernels[i], so, static_cast<uint32_t>(i), {});
  }
}

// Note [Tile pairs on the GPU]: where the staged input's buffer is also
// read straight over a square domain, a block's unit is a pair of tiles
// {(I, J), (J, I)}, I <= J: T(T + 1) / 2 units of T tiles a side, per
// index of the outer axes. Ragged edges, batches, and the cases that are
// not pairs: another buffer, the same one at another offset, a rectangle.
TEST(JitCudaTiles, TransposesOfTheSameBufferAreComputedInPairsOfTiles) {
  struct Case {
    const char* what;
    Tensor root;
    int64_t units;  // 0: not paired
    int width = 0;  // elements per thread and access (0: not checked)
  };
  std::vector<Case> cases;
  for (int64_t side : {32, 33, 100, 130}) {
    const int64_t tile = side >= kWideTile ? kWideTile : kTile, t = (side + tile - 1) / tile;
    Tensor x = random_tensor({side, side}, static_cast<uint32_t>(side));
    Tensor y = random_tensor({side, side}, static_cast<uint32_t>(side + 1));
    Tensor cube = random_tensor({3, side, side}, static_cast<uint32_t>(side + 2));
    cases.push_back({"x.T + x", transpose(x) + x, t * (t + 1) / 2});
    cases.push_back({"x.T * x - x", transpose(x) * x - x, t * (t + 1) / 2});
    cases.push_back({"a batch of squares", permute(cube, {0, 2, 1}) + cube, 3 * t * (t + 1) / 2});
    cases.push_back({"float16", astype(transpose(x), DType::Float16) * astype(x, DType::Float16), t * (t + 1) / 2});
    cases.push_back({"another buffer", transpose(x) + y, 0});
  }
  // Elements per thread (Note [Tile pairs on the GPU]): 16 bytes where the
  // views align, fewer where they do not, and inputs beside the pair read
  // in vectors, broadcast or element by element.
  struct Width {
    const char* what;
    Tensor root;
    int width;
    int64_t side;
  };
  Tensor square = random_tensor({128, 128}, 11), odd = random_tensor({66, 66}, 12);
  Tensor half = testing::random_tensor({128, 128}, 17, 2.0f, DType::Float16);
  Tensor bytes = testing::random_tensor({128, 128}, 18, 8.0f, DType::Int8);
  Tensor doubles = testing::random_tensor({128, 128}, 19, 2.0f, DType::Float64);
  Tensor framed = random_tensor({129, 130}, 13), other = random_tensor({128, 128}, 14);
  Tensor inner = index(framed, std::vector<Index>{Slice{1, std::nullopt, 1}, Slice{2, std::nullopt, 1}});  // offset 132
  Tensor shifted = index(framed, std::vector<Index>{Slice{1, std::nullopt, 1}, Slice{1, 129, 1}});  // offset 131
  std::vector<Width> widths{
      {"float32: 4", transpose(square) + square, 4, 64},
      {"float16: 8", transpose(half) - half, 8, 64},
      {"int8: 16", transpose(bytes) + bytes, 16, 64},
      {"float64: 2, 32 a side", transpose(doubles) * doubles, 2, 32},
      {"float16 read, float32 written: 4", transpose(half) * astype(half, DType::Float32), 4, 64},
      {"a side of 66: 2", transpose(odd) + odd, 2, 64},
      {"rows of 130 at offset 132: 2", transpose(inner) + inner, 2, 64},
      {"an odd offset: 1", transpose(shifted) + shifted, 1, 64},
      {"beside a straight input, a row and a column", transpose(square) + square * other + random_tensor({128}, 15) -
                                                          random_tensor({128, 1}, 16), 4, 64},
      {"beside a transposed input of another buffer: 32 a side", transpose(square) + square + transpose(other), 4, 32},
      {"two float64 inputs staged: 32 a side", transpose(doubles) + doubles + transpose(doubles * 2.0), 2, 32},
  };
  for (const Width& c : widths) {
    const int64_t t = (c.root.shape()[0] + c.side - 1) / c.side;
    cases.push_back({c.what, c.root, t * (t + 1) / 2, c.width});
  }
  Tensor wide = random_tensor({64, 65}, 7);
  cases.push_back({"the same buffer at another offset", transpose(columns_from(wide, 1)) + columns_to(wide, 64), 0});
  std::vector<KernelSpec> specs;
  std::vector<CudaKernelSource> kernels;
  for (const Case& c : cases) {
    specs.push_back(only_spec({c.root}));
    kernels.push_back(render_cuda(specs.back()));
    const CudaKernelSource& k = kernels.back();
    EXPECT_EQ(k.launch.shape, KernelShape::Tiles) << c.what << "\n" << k.source;
    EXPECT_EQ(has(k.source, "if (ti != tj)"), c.units > 0) << c.what << "\n" << k.source;
    if (c.units > 0) {
      EXPECT_EQ(k.launch.work, c.units) << c.what << "\n" << k.source;
    }
    if (c.width > 0) {
      const std::string per_thread = std::to_string(c.width) + " elements per thread";
      EXPECT_EQ(has(k.source, per_thread), c.width > 1) << c.what << "\n" << k.source;
      EXPECT_EQ(has(k.source, "elements per thread"), c.width > 1) << c.what << "\n" << k.source;
    }
    EXPECT_TRUE(k.launch.exact_threads) << c.what;  // the unrolled passes need all kTileThreads
  }
  expect_nvrtc_compiles(kernels);
  EmulatedKernels so(kernels);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(std::string(cases[i].what) + " " + kernels[i].name);
    testing::check_emulated(specs[i], kernels[i], so, static_cast<uint32_t>(i), {});
  }
}

}  // namespace
}  // namespace braze::cuda
