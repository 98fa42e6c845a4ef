// A conv2d group as a cuDNN call: its descriptors' dimensions, strides
// and convolution parameters. Pure logic: no library is loaded
// (cudnn_conv.h makes the descriptors from it).
#pragma once

#include <array>
#include <string>

#include "fusion/partition.h"
#include "jit_cuda/library_epilogue.h"

namespace braze::cuda {

// Note [cuDNN convolutions]
// conv2d(x, w) is cudnnConvolutionForward in CROSS_CORRELATION mode
// (braze's conv2d, like PyTorch's, does not flip the kernel), through the
// legacy API that cuDNN 9 still ships in libcudnn_cnn. x is a 4-d tensor
// descriptor with its view's strides, so a sliced or permuted NCHW input
// is read in place; the weight is a filter descriptor, which has no
// strides: it must be dense OIHW (a parameter as created; any other layout,
// or an input with a zero stride, is copied dense by a kernel first:
// reads_operand, Note [Library capabilities]); y is written dense NCHW. Groups go to
// cudnnSetConvolutionGroupCount, padding, stride and dilation to the
// convolution descriptor. Compute in float for float32, float16 and
// bfloat16 (double for float64). Math type: FMA for float32 unless TF32
// is allowed (cuDNN's default math lets float32 use TF32 tensor cores on
// sm_80 and later, which rounds the inputs to 10 mantissa bits), tensor
// ops for float16 and bfloat16. The algorithm is the first of
// cudnnGetConvolutionForwardAlgorithm_v7's ranking that cuDNN supports,
// with an allowed math type and at most kMaxConvWorkspace bytes of
// workspace; chosen once per shape (cudnn_conv.h), without the operands'
// addresses, which _v7 never sees: an algorithm whose kernels load 16
// bytes at a time may be picked for a view that starts 4 bytes into its
// buffer, and fault on it. So cuDNN is only ever handed operands that start
// kCudnnOperandAlignment bytes into a 256-byte aligned buffer (device
// buffers and arena places are): reads_operand refuses any other offset,
// and the schedule copies that operand dense with a kernel first. cuDNN
// takes ints: a dimension or stride past 2^31 - 1 is refused.
struct ConvPlan {
  DType dtype = DType::Float32;
  std::array<int, 4> x_dims{}, x_strides{};  // N, C, H, W
  std::array<int, 4> w_dims{};               // K (output channels), C / groups, R, S
  std::array<int, 4> y_dims{};               // N, K, P, Q; dense
  std::array<int, 2> padding{}, stride{}, dilation{};
  int groups = 1;
  NodeId x_base = 0, w_base = 0;
  int64_t x_offset = 0, w_offset = 0;  // elements
  Scale scale;                         // alpha
  bool empty = false;                  // nothing to write: no call
  bool zero_fill = false;              // nothing to sum: the result is zeros
};

// Throws std::invalid_argument for a conv2d cuDNN cannot take here: its
// dtypes, or (in a schedule made without the CUDA rules) an operand it
// cannot read.
ConvPlan plan_conv(const Graph& g, const FusedGroup& group);

// What the descriptors and the algorithm depend on: the cache key.
std::string key_text(const ConvPlan& p, bool allow_tf32);

}  // namespace braze::cuda
