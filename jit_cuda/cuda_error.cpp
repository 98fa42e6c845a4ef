#include "jit_cuda/cuda_error.h"

namespace braze::cuda {

namespace {

std::string describe(const std::string& call, const std::string& name, const std::string& text,
                     const std::string& where) {
  std::string msg = "braze: " + where + ": " + call + " failed: " + name;
  if (!text.empty() && text != name) msg += " (" + text + ")";
  return msg;
}

}  // namespace

CudaError::CudaError(std::string library, std::string call, int code, std::string error_name,
                     std::string error_text, std::string where)
    : std::runtime_error(describe(call, error_name, error_text, where)),
      library_(std::move(library)),
      call_(std::move(call)),
      code_(code),
      error_name_(std::move(error_name)),
      error_text_(std::move(error_text)),
      where_(std::move(where)) {}

}  // namespace braze::cuda
