// cuBLASLt, resolved at run time (Note [Loading CUDA libraries]).
#pragma once

#include <cublasLt.h>  // types and prototypes only: nothing is linked

#include <string>

namespace braze::cuda {

#define BRAZE_CUBLASLT_FUNCTIONS(X)                                                                              \
  X(cublasLtGetVersion) X(cublasLtGetStatusName) X(cublasLtGetStatusString) X(cublasLtCreate) X(cublasLtDestroy) \
  X(cublasLtMatmul) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)   \
  X(cublasLtMatmulDescGetAttribute) X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)                 \
  X(cublasLtMatrixLayoutSetAttribute) X(cublasLtMatrixLayoutGetAttribute) X(cublasLtMatmulPreferenceCreate)     \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic)

struct CublasLtApi {
#define BRAZE_DECLARE(name) decltype(&::name) name = nullptr;
  BRAZE_CUBLASLT_FUNCTIONS(BRAZE_DECLARE)
#undef BRAZE_DECLARE
  std::string path;    // the libcublasLt that was opened
  size_t version = 0;  // cublasLtGetVersion: 130100 is 13.1.0
};

// cuBLASLt, loaded on first use; throws CudaUnavailable when it is missing
// (BRAZE_LIBCUBLASLT overrides the search). Its descriptors need no GPU;
// a handle (cublasLtCreate) does. Thread-safe.
const CublasLtApi& cublaslt();

// Whether cublaslt() loads here.
bool cublaslt_available();

// Throws CudaError for a failed cuBLASLt call, with cuBLASLt's name and
// text for the status ("CUBLAS_STATUS_NOT_SUPPORTED").
void check_cublaslt(cublasStatus_t s, const char* call, const std::string& where);

}  // namespace braze::cuda

// BRAZE_CUBLASLT(cublasLtMatmul, (handle, ...), "running matmul ..."):
// calls the loaded entry point and throws CudaError naming the call.
#define BRAZE_CUBLASLT(fn, args, where) \
  ::braze::cuda::check_cublaslt(::braze::cuda::cublaslt().fn args, #fn, where)
