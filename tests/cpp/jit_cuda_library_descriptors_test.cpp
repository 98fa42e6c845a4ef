// The cuBLASLt and cuDNN descriptors braze makes from its plans, read back
// through the real libraries: their descriptors need no GPU and no driver,
// so this runs wherever libcublasLt and libcudnn are installed (and skips
// where they are not). cuDNN's own output-size arithmetic checks the
// convolution parameters against braze's shapes.
#include <gtest/gtest.h>

#include "jit_cuda/cublaslt_matmul.h"
#include "jit_cuda/cudnn_conv.h"
#include "tests/cpp/jit_cuda_library.h"
#include "tests/cpp/random_tensor.h"

namespace braze::cuda {
namespace {

using testing::conv_plan;
using testing::matmul_plan;
using testing::random_tensor;

template <class T>
T desc_attr(const LtDescriptors& d, cublasLtMatmulDescAttributes_t a) {
  T v{};
  size_t written = 0;
  BRAZE_CUBLASLT(cublasLtMatmulDescGetAttribute, (d.matmul.get(), a, &v, sizeof v, &written), "test");
  EXPECT_EQ(written, sizeof v);
  return v;
}

template <class T>
T layout_attr(const LtLayout& l, cublasLtMatrixLayoutAttribute_t a) {
  T v{};
  size_t written = 0;
  BRAZE_CUBLASLT(cublasLtMatrixLayoutGetAttribute, (l.get(), a, &v, sizeof v, &written), "test");
  return v;
}

void expect_layout(const LtLayout& l, cudaDataType_t type, const LtMatrix& m, int32_t batch, const char* which) {
  EXPECT_EQ(layout_attr<uint32_t>(l, CUBLASLT_MATRIX_LAYOUT_TYPE), static_cast<uint32_t>(type)) << which;
  EXPECT_EQ(layout_attr<int32_t>(l, CUBLASLT_MATRIX_LAYOUT_ORDER), CUBLASLT_ORDER_COL) << which;
  EXPECT_EQ(layout_attr<uint64_t>(l, CUBLASLT_MATRIX_LAYOUT_ROWS), static_cast<uint64_t>(m.rows)) << which;
  EXPECT_EQ(layout_attr<uint64_t>(l, CUBLASLT_MATRIX_LAYOUT_COLS), static_cast<uint64_t>(m.cols)) << which;
  EXPECT_EQ(layout_attr<int64_t>(l, CUBLASLT_MATRIX_LAYOUT_LD), m.ld) << which;
  EXPECT_EQ(layout_attr<int32_t>(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT), batch) << which;
  EXPECT_EQ(layout_attr<int64_t>(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET), batch > 1 ? m.batch_stride : 0)
      << which;
}

TEST(CudaLibraryDescriptors, MatmulDescriptorsCarryThePlan) {
  if (!cublaslt_available()) GTEST_SKIP() << "no libcublasLt on this machine";
  // x.T-style left operand, a batch, a residual, a bias at an offset, relu.
  Tensor x = matrix_transpose(random_tensor({2, 7, 5}, 1));
  Tensor bias = index(random_tensor({5}, 3), std::vector<Index>{Slice{2, std::nullopt}});
  MatmulPlan p = matmul_plan(relu(matmul(x, random_tensor({2, 7, 3}, 2)) * 0.5 + random_tensor({2, 5, 3}, 4) + bias));
  ASSERT_TRUE(p.has_c);
  ASSERT_EQ(p.batch, 2);
  LtDescriptors d = make_descriptors(p, false);
  EXPECT_EQ(desc_attr<int32_t>(d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE), CUBLAS_COMPUTE_32F);
  EXPECT_EQ(desc_attr<int32_t>(d, CUBLASLT_MATMUL_DESC_SCALE_TYPE), CUDA_R_32F);
  EXPECT_EQ(desc_attr<int32_t>(d, CUBLASLT_MATMUL_DESC_TRANSA), CUBLAS_OP_N);
  EXPECT_EQ(desc_attr<int32_t>(d, CUBLASLT_MATMUL_DESC_TRANSB), CUBLAS_OP_T);
  EXPECT_EQ(desc_attr<uint32_t>(d, CUBLASLT_MATMUL_DESC_EPILOGUE), CUBLASLT_EPILOGUE_RELU_BIAS);
  EXPECT_EQ(desc_attr<int32_t>(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE), CUDA_R_32F);
  EXPECT_EQ(p.align_bias, 8);  // two floats in
  EXPECT_EQ(desc_attr<const void*>(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER), reinterpret_cast<const void*>(8));
  expect_layout(d.a, CUDA_R_32F, p.a, 2, "A");
  expect_layout(d.b, CUDA_R_32F, p.b, 2, "B");
  expect_layout(d.c, CUDA_R_32F, p.c, 2, "C");
  expect_layout(d.d, CUDA_R_32F, p.d, 2, "D");
  EXPECT_EQ(desc_attr<int32_t>(make_descriptors(p, true), CUBLASLT_MATMUL_DESC_COMPUTE_TYPE),
            CUBLAS_COMPUTE_32F_FAST_TF32);
}

TEST(CudaLibraryDescriptors, MatmulTypesPerDtype) {
  if (!cublaslt_available()) GTEST_SKIP() << "no libcublasLt on this machine";
  struct Case {
    DType dtype;
    cudaDataType_t data, scale;
    cublasComputeType_t compute;
  };
  for (Case c : {Case{DType::Float16, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
                 Case{DType::BFloat16, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F},
                 Case{DType::Float64, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F}}) {
    Tensor y = matmul(astype(random_tensor({4, 6}, 1), c.dtype), astype(random_tensor({6, 2}, 2), c.dtype));
    MatmulPlan p = matmul_plan(y);
    // TF32 concerns float32 only.
    LtDescriptors d = make_descriptors(p, true);
    EXPECT_EQ(desc_attr<int32_t>(d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE), c.compute) << name(c.dtype);
    EXPECT_EQ(desc_attr<int32_t>(d, CUBLASLT_MATMUL_DESC_SCALE_TYPE), c.scale) << name(c.dtype);
    expect_layout(d.a, c.data, p.a, 1, "A");
    expect_layout(d.d, c.data, p.d, 1, "D");
    EXPECT_EQ(desc_attr<uint32_t>(d, CUBLASLT_MATMUL_DESC_EPILOGUE), CUBLASLT_EPILOGUE_DEFAULT);
  }
}

struct Conv {
  int64_t n, c, h, w, k, r, s, stride, pad, dilation, groups;
};

TEST(CudaLibraryDescriptors, CudnnComputesBrazesConvolutionShapes) {
  if (!cudnn_available()) GTEST_SKIP() << "no libcudnn on this machine";
  std::vector<Conv> cases;
  for (int64_t stride : {1, 2, 3})
    for (int64_t pad : {0, 1, 2})
      for (int64_t dilation : {1, 2})
        for (int64_t groups : {1, 2, 4})
          for (int64_t r : {1, 3}) cases.push_back({2, 4, 9, 11, 8, r, r == 1 ? 1 : 2, stride, pad, dilation, groups});
  for (const Conv& c : cases) {
    Tensor x = random_tensor({c.n, c.c, c.h, c.w}, 1), w = random_tensor({c.k, c.c / c.groups, c.r, c.s}, 2);
    Tensor y = conv2d(x, w, std::nullopt, Conv2dOptions{{c.stride, c.stride}, {c.pad, c.pad}, {c.dilation, c.dilation},
                                                        c.groups});
    ConvPlan p = conv_plan(y);
    CudnnDescriptors d = make_descriptors(p, false);
    int dims[4];
    BRAZE_CUDNN(cudnnGetConvolution2dForwardOutputDim,
                (d.conv.get(), d.x.get(), d.w.get(), &dims[0], &dims[1], &dims[2], &dims[3]), "test");
    std::string what = "stride " + std::to_string(c.stride) + " pad " + std::to_string(c.pad) + " dilation " +
                       std::to_string(c.dilation) + " groups " + std::to_string(c.groups) + " kernel " +
                       std::to_string(c.r) + "x" + std::to_string(c.s);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(dims[i], y.shape()[i]) << what << " axis " << i;
    int pad_h, pad_w, u, v, dil_h, dil_w, groups;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    BRAZE_CUDNN(cudnnGetConvolution2dDescriptor,
                (d.conv.get(), &pad_h, &pad_w, &u, &v, &dil_h, &dil_w, &mode, &compute), "test");
    EXPECT_EQ(mode, CUDNN_CROSS_CORRELATION) << what;
    EXPECT_EQ(compute, CUDNN_DATA_FLOAT) << what;
    EXPECT_EQ(pad_w, c.pad) << what;
    EXPECT_EQ(v, c.stride) << what;
    EXPECT_EQ(dil_w, c.dilation) << what;
    BRAZE_CUDNN(cudnnGetConvolutionGroupCount, (d.conv.get(), &groups), "test");
    EXPECT_EQ(groups, c.groups) << what;
    cudnnMathType_t math;
    BRAZE_CUDNN(cudnnGetConvolutionMathType, (d.conv.get(), &math), "test");
    EXPECT_EQ(math, CUDNN_FMA_MATH) << what << ": float32 without TF32";
    cudnnDataType_t type;
    cudnnTensorFormat_t format;
    int k, cg, r, s;
    BRAZE_CUDNN(cudnnGetFilter4dDescriptor, (d.w.get(), &type, &format, &k, &cg, &r, &s), "test");
    EXPECT_EQ(format, CUDNN_TENSOR_NCHW);
    EXPECT_EQ(k, c.k);
    EXPECT_EQ(cg, c.c / c.groups);
    EXPECT_EQ(s, c.s);
  }
}

TEST(CudaLibraryDescriptors, CudnnReadsAStridedInputInPlace) {
  if (!cudnn_available()) GTEST_SKIP() << "no libcudnn on this machine";
  // An NHWC tensor seen as NCHW, and a channel slice of it that starts 16
  // bytes in (Note [cuDNN convolutions]: any other start is copied first).
  Tensor nhwc = random_tensor({2, 5, 6, 8}, 1);
  Tensor x = index(permute(nhwc, {0, 3, 1, 2}), std::vector<Index>{Slice{}, Slice{4, 8}});
  ConvPlan p = conv_plan(conv2d(x, random_tensor({3, 4, 3, 3}, 2)));
  EXPECT_EQ(p.x_offset, 4);
  CudnnDescriptors d = make_descriptors(p, false);
  cudnnDataType_t type;
  int n, c, h, w, ns, cs, hs, ws;
  BRAZE_CUDNN(cudnnGetTensor4dDescriptor, (d.x.get(), &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), "test");
  EXPECT_EQ(type, CUDNN_DATA_FLOAT);
  EXPECT_EQ((std::vector<int>{n, c, h, w}), (std::vector<int>{2, 4, 5, 6}));
  EXPECT_EQ((std::vector<int>{ns, cs, hs, ws}), (std::vector<int>{240, 1, 48, 8}));
  BRAZE_CUDNN(cudnnGetTensor4dDescriptor, (d.y.get(), &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), "test");
  EXPECT_EQ((std::vector<int>{ns, cs, hs, ws}), (std::vector<int>{36, 12, 4, 1}));
}

TEST(CudaLibraryDescriptors, CudnnTypesAndMathPerDtype) {
  if (!cudnn_available()) GTEST_SKIP() << "no libcudnn on this machine";
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64, DType::Float32}) {
    ConvPlan p = conv_plan(conv2d(astype(random_tensor({1, 2, 5, 5}, 1), t), astype(random_tensor({2, 2, 3, 3}, 2), t)));
    CudnnDescriptors d = make_descriptors(p, /*allow_tf32=*/true);
    cudnnMathType_t math;
    BRAZE_CUDNN(cudnnGetConvolutionMathType, (d.conv.get(), &math), "test");
    EXPECT_EQ(math, t == DType::Float16 || t == DType::BFloat16 ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH) << name(t);
    cudnnDataType_t type, compute;
    int n, c, h, w, ns, cs, hs, ws, pad_h, pad_w, u, v, dh, dw;
    cudnnConvolutionMode_t mode;
    BRAZE_CUDNN(cudnnGetTensor4dDescriptor, (d.x.get(), &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), "test");
    EXPECT_EQ(type, cudnn_data_type(t));
    BRAZE_CUDNN(cudnnGetConvolution2dDescriptor, (d.conv.get(), &pad_h, &pad_w, &u, &v, &dh, &dw, &mode, &compute),
                "test");
    EXPECT_EQ(compute, t == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT) << name(t);
  }
}

TEST(CudaLibraryDescriptors, ConvolutionOperandsCuDnnCannotReadAreCopiedDenseFirst) {
  Tensor x = random_tensor({1, 4, 6, 6}, 1);
  // A weight stored OHWI, seen as OIHW (the filter descriptor has no
  // strides), and an input broadcast over the batch (a zero stride).
  Tensor ohwi = permute(random_tensor({3, 3, 3, 4}, 2), {0, 3, 1, 2});
  Tensor broadcast = broadcast_to(random_tensor({1, 4, 6, 6}, 3), {2, 4, 6, 6});
  for (const Tensor& y : {conv2d(x, ohwi), conv2d(broadcast, random_tensor({3, 4, 3, 3}, 2))}) {
    Schedule s = testing::cuda_schedule(y);
    ASSERT_EQ(s.steps.size(), 2u) << explain(s);
    EXPECT_EQ(s.graph[s.steps[0].group.outputs[0]].op, Op::Copy);
    ConvPlan p = plan_conv(s.graph, testing::library_step(s).group);
    EXPECT_TRUE(p.x_base == s.steps[0].group.outputs[0] || p.w_base == s.steps[0].group.outputs[0]);
  }
  // With rules that read every layout the views stay, and planning says why not.
  const LibraryRules reads_all{"any", nullptr, nullptr};
  Schedule cpu = make_schedule(lower(std::vector<Tensor>{conv2d(x, ohwi)}).graph, reads_all);
  std::string m = testing::refusal([&] { plan_conv(cpu.graph, testing::library_step(cpu).group); });
  EXPECT_NE(m.find("cuDNN reads the weight dense (OIHW, row-major), but it is [3, 4, 3, 3] with strides [36, 1, 12, 4]"),
            std::string::npos)
      << m;
  // conv2d() casts to the promotion first (Note [Library operands share a
  // dtype]); a Conv2d node of two dtypes (a graph file, a bare record) is refused.
  std::string mixed = testing::refusal([&] {
    conv_plan(record(Op::Conv2d, {astype(x, DType::Float16), random_tensor({3, 4, 3, 3}, 2)},
                     Attr{{1, 1, 0, 0, 1, 1, 1}, {}}));
  });
  EXPECT_NE(mixed.find("cuDNN runs float32, float16, bfloat16 and float64 operands of the result's dtype, not "
                       "float16 and float32"),
            std::string::npos)
      << mixed;
}

}  // namespace
}  // namespace braze::cuda
