// A ConvPlan as cuDNN objects: its descriptors (made once per shape,
// without a GPU), the algorithm and workspace picked for them (once per
// shape, with a handle), and the call (Note [cuDNN convolutions] in
// conv_plan.h).
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "jit_cuda/conv_plan.h"
#include "jit_cuda/cudnn_api.h"
#include "jit_cuda/driver_objects.h"

namespace braze::cuda {

void release_cudnn_tensor(cudnnTensorDescriptor_t d) noexcept;
void release_cudnn_filter(cudnnFilterDescriptor_t d) noexcept;
void release_cudnn_conv(cudnnConvolutionDescriptor_t d) noexcept;
void release_cudnn_handle(cudnnHandle_t h) noexcept;
using CudnnTensor = Owned<cudnnTensorDescriptor_t, release_cudnn_tensor>;
using CudnnFilter = Owned<cudnnFilterDescriptor_t, release_cudnn_filter>;
using CudnnConvolution = Owned<cudnnConvolutionDescriptor_t, release_cudnn_conv>;

// A cuDNN handle (cudnnCreate: needs the device's context current), its
// work enqueued on `stream`.
class CudnnHandle : public Owned<cudnnHandle_t, release_cudnn_handle> {
 public:
  explicit CudnnHandle(CUstream stream);
  // Enqueues the handle's work on `stream` from now on.
  void bind(CUstream stream);
};

// The most workspace an algorithm may ask for (planned into the arena,
// Note [Step workspaces]); a faster one that needs more is passed over.
inline constexpr size_t kMaxConvWorkspace = size_t{256} << 20;

cudnnDataType_t cudnn_data_type(DType d);
// The math type the convolution runs with (Note [cuDNN convolutions]).
cudnnMathType_t math_type(DType d, bool allow_tf32);

struct CudnnDescriptors {
  CudnnTensor x;
  CudnnFilter w;
  CudnnConvolution conv;
  CudnnTensor y;
};
CudnnDescriptors make_descriptors(const ConvPlan& p, bool allow_tf32);

// A shape's descriptors, algorithm and workspace, shared by every program
// step of that shape.
class CudnnConv {
 public:
  // Ranks the algorithms (cudnnGetConvolutionForwardAlgorithm_v7) and
  // takes the first usable one; throws CudaError when there is none.
  CudnnConv(cudnnHandle_t handle, const ConvPlan& p, bool allow_tf32);

  size_t workspace_bytes() const { return workspace_; }
  cudnnConvolutionFwdAlgo_t algorithm() const { return algo_; }

  // Enqueues y = alpha * conv(x, w) on the handle's stream.
  void run(cudnnHandle_t handle, const ConvPlan& p, const std::byte* x, const std::byte* w, std::byte* y,
           double alpha, void* workspace) const;

 private:
  CudnnDescriptors desc_;
  cudnnConvolutionFwdAlgo_t algo_{};
  size_t workspace_ = 0;
  std::string key_;
};

}  // namespace braze::cuda
