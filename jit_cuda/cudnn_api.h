// cuDNN, resolved at run time (Note [Loading CUDA libraries]).
#pragma once

#include <cudnn.h>  // types and prototypes only: nothing is linked

#include <string>

namespace braze::cuda {

// The legacy convolution API (cudnn_cnn.h): deprecated since cuDNN 9 in
// favour of the graph API but still in libcudnn_cnn, and it is the one
// that takes a strided NCHW input, groups and dilation in a few calls
// (Note [cuDNN convolutions] in cudnn_conv.h).
#define BRAZE_CUDNN_FUNCTIONS(X)                                                                                    \
  X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate) X(cudnnDestroy)               \
  X(cudnnSetStream) X(cudnnCreateTensorDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnSetTensor4dDescriptorEx)  \
  X(cudnnGetTensor4dDescriptor) X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor)                      \
  X(cudnnSetFilter4dDescriptor) X(cudnnGetFilter4dDescriptor) X(cudnnCreateConvolutionDescriptor)                   \
  X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor) X(cudnnGetConvolution2dDescriptor)        \
  X(cudnnSetConvolutionGroupCount) X(cudnnGetConvolutionGroupCount) X(cudnnSetConvolutionMathType)                  \
  X(cudnnGetConvolutionMathType) X(cudnnGetConvolution2dForwardOutputDim) X(cudnnGetConvolutionForwardAlgorithm_v7) \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)

struct CudnnApi {
#define BRAZE_DECLARE(name) decltype(&::name) name = nullptr;
  BRAZE_CUDNN_FUNCTIONS(BRAZE_DECLARE)
#undef BRAZE_DECLARE
  std::string path;    // the libcudnn that was opened
  size_t version = 0;  // cudnnGetVersion: 91900 is 9.19.0
};

// cuDNN, loaded on first use; throws CudaUnavailable when it is missing
// (BRAZE_LIBCUDNN overrides the search). Its descriptors need no GPU; a
// handle (cudnnCreate) does. Thread-safe.
const CudnnApi& cudnn();

// Whether cudnn() loads here.
bool cudnn_available();

// Throws CudaError for a failed cuDNN call, with cuDNN's name for the
// status and its last error message.
void check_cudnn(cudnnStatus_t s, const char* call, const std::string& where);

}  // namespace braze::cuda

// BRAZE_CUDNN(cudnnConvolutionForward, (handle, ...), "running conv2d ..."):
// calls the loaded entry point and throws CudaError naming the call.
#define BRAZE_CUDNN(fn, args, where) ::braze::cuda::check_cudnn(::braze::cuda::cudnn().fn args, #fn, where)
