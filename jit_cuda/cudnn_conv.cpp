#include "jit_cuda/cudnn_conv.h"

#include <vector>

#include "graph/check.h"

namespace braze::cuda {

void release_cudnn_tensor(cudnnTensorDescriptor_t d) noexcept { cudnn().cudnnDestroyTensorDescriptor(d); }
void release_cudnn_filter(cudnnFilterDescriptor_t d) noexcept { cudnn().cudnnDestroyFilterDescriptor(d); }
void release_cudnn_conv(cudnnConvolutionDescriptor_t d) noexcept { cudnn().cudnnDestroyConvolutionDescriptor(d); }
void release_cudnn_handle(cudnnHandle_t h) noexcept { cudnn().cudnnDestroy(h); }

CudnnHandle::CudnnHandle(CUstream stream) {
  BRAZE_CUDNN(cudnnCreate, (&handle_), "creating a cuDNN handle");
  bind(stream);
}

void CudnnHandle::bind(CUstream stream) {
  BRAZE_CUDNN(cudnnSetStream, (handle_, stream), "binding the cuDNN handle to a stream of the device");
}

cudnnDataType_t cudnn_data_type(DType d) {
  switch (d) {
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    default: BRAZE_ASSERT(false, "no cuDNN data type for ", name(d));
  }
  return CUDNN_DATA_FLOAT;
}

cudnnMathType_t math_type(DType d, bool allow_tf32) {
  if (d == DType::Float16 || d == DType::BFloat16) return CUDNN_TENSOR_OP_MATH;
  if (d == DType::Float32 && !allow_tf32) return CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

CudnnDescriptors make_descriptors(const ConvPlan& p, bool allow_tf32) {
  const std::string where = "describing conv2d " + key_text(p, allow_tf32);
  const cudnnDataType_t type = cudnn_data_type(p.dtype);
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  BRAZE_CUDNN(cudnnCreateTensorDescriptor, (&x), where);
  CudnnTensor x_owned(x);
  BRAZE_CUDNN(cudnnCreateFilterDescriptor, (&w), where);
  CudnnFilter w_owned(w);
  BRAZE_CUDNN(cudnnCreateConvolutionDescriptor, (&conv), where);
  CudnnConvolution conv_owned(conv);
  BRAZE_CUDNN(cudnnCreateTensorDescriptor, (&y), where);
  CudnnTensor y_owned(y);
  const auto& xd = p.x_dims;
  const auto& xs = p.x_strides;
  BRAZE_CUDNN(cudnnSetTensor4dDescriptorEx, (x, type, xd[0], xd[1], xd[2], xd[3], xs[0], xs[1], xs[2], xs[3]), where);
  const auto& wd = p.w_dims;
  BRAZE_CUDNN(cudnnSetFilter4dDescriptor, (w, type, CUDNN_TENSOR_NCHW, wd[0], wd[1], wd[2], wd[3]), where);
  const auto& yd = p.y_dims;
  BRAZE_CUDNN(cudnnSetTensor4dDescriptorEx,
              (y, type, yd[0], yd[1], yd[2], yd[3], yd[1] * yd[2] * yd[3], yd[2] * yd[3], yd[3], 1), where);
  const cudnnDataType_t compute = p.dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  BRAZE_CUDNN(cudnnSetConvolution2dDescriptor,
              (conv, p.padding[0], p.padding[1], p.stride[0], p.stride[1], p.dilation[0], p.dilation[1],
               CUDNN_CROSS_CORRELATION, compute),
              where);
  BRAZE_CUDNN(cudnnSetConvolutionGroupCount, (conv, p.groups), where);
  BRAZE_CUDNN(cudnnSetConvolutionMathType, (conv, math_type(p.dtype, allow_tf32)), where);
  return {std::move(x_owned), std::move(w_owned), std::move(conv_owned), std::move(y_owned)};
}

CudnnConv::CudnnConv(cudnnHandle_t handle, const ConvPlan& p, bool allow_tf32)
    : desc_(make_descriptors(p, allow_tf32)), key_(key_text(p, allow_tf32)) {
  const std::string where = "choosing an algorithm for conv2d " + key_;
  std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  int returned = 0;
  BRAZE_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7,
              (handle, desc_.x.get(), desc_.w.get(), desc_.conv.get(), desc_.y.get(), static_cast<int>(ranked.size()),
               &returned, ranked.data()),
              where);
  const bool fma_only = math_type(p.dtype, allow_tf32) == CUDNN_FMA_MATH;
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& r = ranked[i];
    // Without TF32, float32 passes over tensor-op algorithms (they would
    // round the inputs: Note [cuDNN convolutions]) and keeps FMA math on
    // the descriptor, which is what forbids them when it runs.
    bool tensor_op = r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > kMaxConvWorkspace || (fma_only && tensor_op)) continue;
    algo_ = r.algo;
    if (!fma_only) BRAZE_CUDNN(cudnnSetConvolutionMathType, (desc_.conv.get(), r.mathType), where);
    BRAZE_CUDNN(cudnnGetConvolutionForwardWorkspaceSize,
                (handle, desc_.x.get(), desc_.w.get(), desc_.conv.get(), desc_.y.get(), algo_, &workspace_), where);
    return;
  }
  check_cudnn(CUDNN_STATUS_NOT_SUPPORTED, "cudnnGetConvolutionForwardAlgorithm_v7",
              where + " (of " + std::to_string(returned) + " ranked, none is supported within " +
                  std::to_string(kMaxConvWorkspace >> 20) + " MiB of workspace with the math type asked for)");
}

void CudnnConv::run(cudnnHandle_t handle, const ConvPlan& p, const std::byte* x, const std::byte* w, std::byte* y,
                    double alpha, void* workspace) const {
  // alpha and beta are double for float64, float otherwise.
  const double beta = 0;
  const float alpha32 = static_cast<float>(alpha), beta32 = 0;
  const bool f64 = p.dtype == DType::Float64;
  BRAZE_CUDNN(cudnnConvolutionForward,
              (handle, f64 ? static_cast<const void*>(&alpha) : &alpha32, desc_.x.get(), x, desc_.w.get(), w,
               desc_.conv.get(), algo_, workspace, workspace_, f64 ? static_cast<const void*>(&beta) : &beta32,
               desc_.y.get(), y),
              "running conv2d " + key_);
}

}  // namespace braze::cuda
