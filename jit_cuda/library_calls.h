// A device's library calls (Note [CUDA library calls] in executor.h): its
// cuBLASLt and cuDNN handles, made on first use and bound to its stream,
// and the calls' descriptors and algorithms, cached by shape.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "jit_cuda/cublaslt_matmul.h"
#include "jit_cuda/cudnn_conv.h"
#include "jit_cuda/executor.h"

namespace braze::cuda {

// Plans a library group without any library: throws std::invalid_argument
// for a call cuBLASLt or cuDNN cannot take (what host emulation checks).
void check_library_call(const Graph& g, const FusedGroup& group);

// The value of alpha at this run: the constant factors times (or over)
// the 0-d operands, read from host or device memory.
double alpha_now(const Scale& s, const std::function<const Array&(NodeId)>& buffer);

class LibraryCalls {
 public:
  // Work goes to `stream`. The device's context must be current on the
  // calling thread for every call (the driver executor makes it so).
  explicit LibraryCalls(CUstream stream) : stream_(stream) {}

  PreparedLibraryCall prepare(const Graph& g, const FusedGroup& group, const LibraryOptions& o);
  // Enqueues the call on `stream` (the device's, or the one a graph is
  // captured on: Note [Programs as CUDA graphs]).
  void run(const DeviceLibraryCall& call, const std::function<const Array&(NodeId)>& buffer, Array& out,
           void* workspace, CUstream stream);

 private:
  cublasLtHandle_t lt_handle();
  cudnnHandle_t dnn_handle();

  CUstream stream_;
  std::mutex mutex_;  // handles are used one call at a time (a cuDNN handle must be)
  std::unique_ptr<LtHandle> lt_;
  std::unique_ptr<CudnnHandle> dnn_;
  std::unordered_map<std::string, std::shared_ptr<const LtMatmul>> matmuls_;  // by key_text
  std::unordered_map<std::string, std::shared_ptr<const CudnnConv>> convs_;
};

}  // namespace braze::cuda
