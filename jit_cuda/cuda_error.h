// The two ways CUDA work fails in braze: a library that is not there
// (CudaUnavailable), and a call into one that returned an error (CudaError).
#pragma once

#include <stdexcept>
#include <string>

namespace braze::cuda {

// A CUDA library could not be loaded: what was looked for, every place that
// was tried and why each failed, and the variable that overrides the search.
// NotFound: no file of it anywhere braze looked (for libcuda, this machine
// has no NVIDIA driver: no GPU here); Unusable: found, but too old, newer
// than the driver, or lacking entry points (a broken setup).
class CudaUnavailable : public std::runtime_error {
 public:
  enum class Why { NotFound, Unusable };
  explicit CudaUnavailable(const std::string& what, Why why = Why::Unusable) : std::runtime_error(what), why_(why) {}
  Why why() const { return why_; }

 private:
  Why why_;
};

// A failing call into libcuda, libnvrtc, cuBLAS(Lt) or cuDNN. The message
// says where in braze it happened, the call, and the library's own name and
// text for the code: "braze: compiling kernel softmax_1a2b: nvrtcCompileProgram
// failed: NVRTC_ERROR_COMPILATION (compilation error)".
class CudaError : public std::runtime_error {
 public:
  CudaError(std::string library, std::string call, int code, std::string error_name, std::string error_text,
            std::string where);

  const std::string& library() const { return library_; }  // "libcuda", "libnvrtc", ...
  const std::string& call() const { return call_; }        // "cuModuleLoadData"
  int code() const { return code_; }
  const std::string& error_name() const { return error_name_; }  // "CUDA_ERROR_INVALID_IMAGE"
  const std::string& error_text() const { return error_text_; }
  const std::string& where() const { return where_; }  // what braze was doing

 private:
  std::string library_, call_;
  int code_;
  std::string error_name_, error_text_, where_;
};

}  // namespace braze::cuda
