// Note [Row-major matmul on cuBLASLt]: each mapping of braze's row-major
// operands onto cuBLASLt's column-major matrices, transposes, batches and
// epilogues, with exact expectations (pure logic: no library, no GPU).
#include <gtest/gtest.h>

#include "tests/cpp/jit_cuda_library.h"
#include "tests/cpp/random_tensor.h"

namespace braze::cuda {
namespace {

using testing::matmul_plan;
using testing::random_tensor;
using testing::refusal;

void expect_matrix(const LtMatrix& m, int64_t rows, int64_t cols, int64_t ld, int64_t stride, const char* which) {
  EXPECT_EQ(m.rows, rows) << which;
  EXPECT_EQ(m.cols, cols) << which;
  EXPECT_EQ(m.ld, ld) << which;
  EXPECT_EQ(m.batch_stride, stride) << which;
}

Tensor stored_transposed(Shape s, uint32_t seed) {  // a [.., r, c] view of a [.., c, r] tensor
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return matrix_transpose(random_tensor(s, seed));
}

TEST(CudaMatmulPlan, RowMajorOperandsAreReadAsTheirTransposes) {
  MatmulPlan p = matmul_plan(matmul(random_tensor({5, 7}, 1), random_tensor({7, 3}, 2)));
  EXPECT_EQ(p.m, 3);  // cuBLASLt's D = R^T is N x M
  EXPECT_EQ(p.n, 5);
  EXPECT_EQ(p.k, 7);
  EXPECT_FALSE(p.trans_a);
  EXPECT_FALSE(p.trans_b);
  expect_matrix(p.a, 3, 7, 3, 0, "A (the right operand)");
  expect_matrix(p.b, 7, 5, 7, 0, "B (the left operand)");
  expect_matrix(p.d, 3, 5, 3, 0, "D");
  EXPECT_EQ(p.batch, 1);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].a, 0);
  EXPECT_EQ(p.calls[0].d, 0);
  EXPECT_EQ(p.epilogue, LtEpilogue::Default);
  EXPECT_FALSE(p.has_c);
  EXPECT_FALSE(p.zero_fill);
  EXPECT_EQ(p.align_a, 256);
  EXPECT_EQ(key_text(p, false),
            "float32 opNN m3 n5 k7 batch1 A3x7 ld3 stride0 align256 B7x5 ld7 stride0 align256 D3x5 ld3 stride0 "
            "align256 default");
  EXPECT_EQ(key_text(p, true).rfind("float32 tf32 opNN", 0), 0u);
}

TEST(CudaMatmulPlan, TransposedOperandsAreFlagsNotCopies) {
  MatmulPlan p = matmul_plan(matmul(stored_transposed({5, 7}, 1), stored_transposed({7, 3}, 2)));
  EXPECT_TRUE(p.trans_a);
  EXPECT_TRUE(p.trans_b);
  expect_matrix(p.a, 7, 3, 7, 0, "A: w.T is column-major [K x N] already");
  expect_matrix(p.b, 5, 7, 5, 0, "B: x.T is column-major [M x K]");
  MatmulPlan q = matmul_plan(matmul(random_tensor({5, 7}, 1), stored_transposed({7, 3}, 2)));
  EXPECT_TRUE(q.trans_a);
  EXPECT_FALSE(q.trans_b);
}

TEST(CudaMatmulPlan, BatchesAreOneStridedCall) {
  MatmulPlan p = matmul_plan(matmul(random_tensor({4, 5, 7}, 1), random_tensor({4, 7, 3}, 2)));
  EXPECT_EQ(p.batch, 4);
  EXPECT_EQ(p.calls.size(), 1u);
  expect_matrix(p.a, 3, 7, 3, 21, "A");
  expect_matrix(p.b, 7, 5, 7, 35, "B");
  expect_matrix(p.d, 3, 5, 3, 15, "D");
}

TEST(CudaMatmulPlan, ASharedWeightTakesTheBatchIntoItsRows) {
  MatmulPlan p = matmul_plan(matmul(random_tensor({4, 5, 7}, 1), random_tensor({7, 3}, 2)));
  EXPECT_EQ(p.n, 20);
  EXPECT_EQ(p.batch, 1);
  expect_matrix(p.b, 7, 20, 7, 0, "B: 20 rows of x");
  expect_matrix(p.d, 3, 20, 3, 0, "D");
  // One row per batch: the batch stride becomes the leading dimension.
  MatmulPlan v = matmul_plan(matmul(random_tensor({6, 1, 7}, 1), random_tensor({7, 3}, 2)));
  EXPECT_EQ(v.n, 6);
  expect_matrix(v.b, 7, 6, 7, 0, "B");
  // A transposed left operand keeps its batch (its rows are not one matrix).
  MatmulPlan t = matmul_plan(matmul(stored_transposed({4, 5, 7}, 1), random_tensor({7, 3}, 2)));
  EXPECT_TRUE(t.trans_b);
  EXPECT_EQ(t.n, 5);
  EXPECT_EQ(t.batch, 4);
  expect_matrix(t.a, 3, 7, 3, 0, "A: broadcast, stride 0");
  expect_matrix(t.b, 5, 7, 5, 35, "B");
}

TEST(CudaMatmulPlan, BroadcastBatchAxesFoldBatchOrLoop) {
  // w broadcast over the inner batch axis: that axis joins n, the outer one is the batch.
  MatmulPlan p = matmul_plan(matmul(random_tensor({2, 3, 5, 7}, 1), random_tensor({2, 1, 7, 3}, 2)));
  EXPECT_EQ(p.n, 15);
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.calls.size(), 1u);
  expect_matrix(p.a, 3, 7, 3, 21, "A");
  expect_matrix(p.b, 7, 15, 7, 105, "B");
  expect_matrix(p.d, 3, 15, 3, 45, "D");
  // w broadcast over the outer axis only: the inner one is the batch, the outer a loop of calls.
  MatmulPlan q = matmul_plan(matmul(random_tensor({2, 3, 5, 7}, 1), random_tensor({3, 7, 3}, 2)));
  EXPECT_EQ(q.n, 5);
  EXPECT_EQ(q.batch, 3);
  expect_matrix(q.a, 3, 7, 3, 21, "A");
  expect_matrix(q.b, 7, 5, 7, 35, "B");
  ASSERT_EQ(q.calls.size(), 2u);
  EXPECT_EQ(q.calls[1].a, 0);
  EXPECT_EQ(q.calls[1].b, 105);
  EXPECT_EQ(q.calls[1].d, 45);
  // Size-1 batch axes are dropped; x broadcast against a batched w.
  MatmulPlan r = matmul_plan(matmul(random_tensor({1, 5, 7}, 1), random_tensor({1, 4, 7, 3}, 2)));
  EXPECT_EQ(r.batch, 4);
  expect_matrix(r.b, 7, 5, 7, 0, "B: broadcast");
  expect_matrix(r.a, 3, 7, 3, 21, "A");
}

TEST(CudaMatmulPlan, ViewOffsetsSetTheAlignment) {
  Tensor x = index(random_tensor({6, 8}, 1), std::vector<Index>{Slice{1, std::nullopt}, Slice{}});  // offset 8 floats
  Tensor w = index(random_tensor({8, 4}, 2), std::vector<Index>{Slice{}, Slice{1, std::nullopt}});  // offset 1 float
  MatmulPlan p = matmul_plan(matmul(x, w));
  EXPECT_EQ(p.align_b, 32);
  EXPECT_EQ(p.align_a, 4);
  EXPECT_EQ(p.align_d, 256);
  EXPECT_EQ(p.calls[0].b, 8);
  EXPECT_EQ(p.calls[0].a, 1);
  expect_matrix(p.a, 3, 8, 4, 0, "A: 3 of 4 columns, ld 4");
  EXPECT_EQ(alignment_of(0, 2), 256);
  EXPECT_EQ(alignment_of(3, 2), 2);
  EXPECT_EQ(alignment_of(1000, 4), 32);
}

TEST(CudaMatmulPlan, EpiloguesFromThePostOps) {
  Tensor x = random_tensor({5, 7}, 1), w = random_tensor({7, 3}, 2), b = random_tensor({3}, 3);
  Tensor r = random_tensor({5, 3}, 4);
  Tensor y = matmul(x, w);
  EXPECT_EQ(matmul_plan(y + b).epilogue, LtEpilogue::Bias);
  EXPECT_EQ(matmul_plan(relu(y)).epilogue, LtEpilogue::Relu);
  EXPECT_EQ(matmul_plan(relu(y + b)).epilogue, LtEpilogue::ReluBias);
  EXPECT_EQ(matmul_plan(gelu(y, "tanh")).epilogue, LtEpilogue::Gelu);
  EXPECT_EQ(matmul_plan(gelu(y + b, "tanh")).epilogue, LtEpilogue::GeluBias);
  MatmulPlan c = matmul_plan(y + r);
  EXPECT_TRUE(c.has_c);
  EXPECT_EQ(c.beta, 1);
  expect_matrix(c.c, 3, 5, 3, 0, "C");
  EXPECT_EQ(matmul_plan(y - r).beta, -1);
  MatmulPlan all = matmul_plan(relu(y * 0.5 + r + b));
  EXPECT_EQ(all.scale.alpha, 0.5);
  EXPECT_TRUE(all.has_c);
  EXPECT_EQ(all.epilogue, LtEpilogue::ReluBias);
  MatmulPlan first_bias = matmul_plan(y + b + r);  // bias then residual: the same call
  EXPECT_TRUE(first_bias.has_c);
  EXPECT_EQ(first_bias.epilogue, LtEpilogue::Bias);
  // A batched bias is broadcast over the batch; a residual has its own batch stride.
  MatmulPlan batched = matmul_plan(relu(matmul(random_tensor({2, 5, 7}, 5), stored_transposed({2, 7, 3}, 6)) +
                                        random_tensor({2, 5, 3}, 7) + b));
  EXPECT_EQ(batched.batch, 2);
  expect_matrix(batched.c, 3, 5, 3, 15, "C");
  EXPECT_EQ(batched.epilogue, LtEpilogue::ReluBias);
}

TEST(CudaMatmulPlan, ScalarParametersScaleAlpha) {
  Tensor y = matmul(random_tensor({5, 7}, 1), random_tensor({7, 3}, 2));
  MatmulPlan p = matmul_plan(y * 0.125, /*parameters=*/true);
  EXPECT_EQ(p.scale.alpha, 1);
  ASSERT_EQ(p.scale.operands.size(), 1u);
  EXPECT_FALSE(p.scale.operands[0].divides);
  MatmulPlan q = matmul_plan(y / 8.0, /*parameters=*/true);
  ASSERT_EQ(q.scale.operands.size(), 1u);
  EXPECT_TRUE(q.scale.operands[0].divides);
}

TEST(CudaMatmulPlan, EmptyProductsMakeNoCall) {
  MatmulPlan k0 = matmul_plan(matmul(random_tensor({3, 0}, 1), random_tensor({0, 2}, 2)));
  EXPECT_TRUE(k0.zero_fill);
  EXPECT_TRUE(k0.calls.empty());
  MatmulPlan m0 = matmul_plan(matmul(random_tensor({0, 4}, 1), random_tensor({4, 2}, 2)));
  EXPECT_FALSE(m0.zero_fill);
  EXPECT_TRUE(m0.calls.empty());
}

TEST(CudaMatmulPlan, OtherDtypesAreRefusedClearly) {
  Tensor w = random_tensor({7, 3}, 2);
  // int8 values cast to int32: an accumulating product of the 8-bit
  // values (Note [Integer matmul]), which cuBLASLt is not asked for yet.
  // Other integer matmuls are sums of products (Note [Integer matmul as a sum]).
  std::string dtype = refusal([&] {
    matmul_plan(matmul(astype(astype(random_tensor({5, 7}, 1), DType::Int8), DType::Int32),
                       astype(astype(w, DType::Int8), DType::Int32)));
  });
  EXPECT_NE(dtype.find("matmul on cuda: cuBLASLt runs float32, float16, bfloat16 and float64"), std::string::npos)
      << dtype;
  EXPECT_NE(dtype.find("int8 @ int8 -> int32"), std::string::npos) << dtype;
  Schedule sum = testing::cuda_schedule(matmul(astype(random_tensor({5, 7}, 1), DType::Int32), astype(w, DType::Int32)));
  for (const Step& step : sum.steps) EXPECT_NE(step.group.kind, FusedGroup::Kind::Library) << explain(sum);
  // matmul() casts to the promotion first (Note [Library operands share a
  // dtype]); a MatMul node of two dtypes (a graph file, a bare record) is refused.
  Tensor half = astype(random_tensor({5, 7}, 1), DType::Float16);
  EXPECT_EQ(refusal([&] { matmul_plan(matmul(half, w)); }), "");
  std::string mixed = refusal([&] { matmul_plan(record(Op::MatMul, {half, w})); });
  EXPECT_NE(mixed.find("float16 @ float32 -> float32"), std::string::npos) << mixed;
  EXPECT_EQ(refusal([&] { matmul_plan(matmul(random_tensor({5, 7}, 1), w)); }), "");
}

// Note [Library capabilities]: what cuBLASLt cannot read is copied dense by
// a kernel first; what it reads (transposes, offsets) is not.
TEST(CudaMatmulPlan, UnreadableOperandsAreCopiedDenseFirst) {
  Tensor w = random_tensor({7, 3}, 2);
  Tensor stepped = index(random_tensor({5, 14}, 1), std::vector<Index>{Slice{}, Slice{std::nullopt, std::nullopt, 2}});
  Tensor ones = broadcast_to(random_tensor({1, 7}, 1), {5, 7});
  for (const Tensor& x : {stepped, ones}) {
    Schedule s = testing::cuda_schedule(matmul(x, w));
    ASSERT_EQ(s.steps.size(), 2u) << explain(s);
    const Step& copy = s.steps[0];
    ASSERT_EQ(copy.group.kind, FusedGroup::Kind::Kernel);
    EXPECT_EQ(s.graph[copy.group.outputs[0]].op, Op::Copy);
    MatmulPlan p = plan_matmul(s.graph, testing::library_step(s).group);
    EXPECT_EQ(p.b_base, copy.group.outputs[0]);
    EXPECT_FALSE(p.trans_b);
    expect_matrix(p.b, 7, 5, 7, 0, "B: the dense copy");
  }
  EXPECT_EQ(testing::cuda_schedule(matmul(stored_transposed({5, 7}, 1), w)).steps.size(), 1u) << "read as it is";
  // A schedule made with rules that read every layout keeps the view: planning it says why not.
  const LibraryRules reads_all{"any", nullptr, nullptr};
  Schedule cpu = make_schedule(lower(std::vector<Tensor>{matmul(stepped, w)}).graph, reads_all);
  std::string step = refusal([&] { plan_matmul(cpu.graph, testing::library_step(cpu).group); });
  EXPECT_NE(step.find("the left operand is [5, 7] with strides [14, 2]"), std::string::npos) << step;
}

TEST(CudaMatmulPlan, ColumnMajorReadsOfEveryLayout) {
  // Row-major [4, 6] with row stride 8 (a column slice): CUBLAS_OP_N, ld 8.
  std::optional<ColumnMajor> r = transposed_view(4, 6, 8, 1, true);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->transposed);
  expect_matrix(r->matrix, 6, 4, 8, 0, "row-major");
  // Column-major [4, 6] (a transposed view): CUBLAS_OP_T, ld 4.
  std::optional<ColumnMajor> c = transposed_view(4, 6, 1, 4, true);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->transposed);
  expect_matrix(c->matrix, 4, 6, 4, 0, "column-major");
  EXPECT_FALSE(transposed_view(4, 6, 1, 4, false)) << "C has no transpose";
  // One row or one column: any stride along it; the leading dimension stays valid.
  expect_matrix(transposed_view(1, 6, 0, 1, false)->matrix, 6, 1, 6, 0, "one row");
  expect_matrix(transposed_view(4, 1, 3, 0, false)->matrix, 1, 4, 3, 0, "one column");
  EXPECT_FALSE(transposed_view(4, 6, 12, 2, true)) << "a step slice of the inner axis";
  EXPECT_FALSE(transposed_view(4, 6, 0, 1, true)) << "a broadcast row";
  EXPECT_FALSE(transposed_view(4, 6, -6, 1, true)) << "a negative stride";
  EXPECT_FALSE(transposed_view(4, 6, 3, 1, true)) << "overlapping rows";
}

}  // namespace
}  // namespace braze::cuda
