// The CUDA Driver API, resolved at run time (Note [Loading CUDA libraries]).
#pragma once

#include <cuda.h>  // types and prototypes only: nothing is linked

#include <string>

#include "jit_cuda/library_loader.h"

namespace braze::cuda {

// Every driver entry point braze calls. Each member is named as the call
// (cuda.h's macros turn cuMemAlloc into cuMemAlloc_v2 in both the member's
// name and its type, consistently) and is resolved by cuGetProcAddress for
// the API version of the cuda.h braze was built with, so a newer driver
// hands out the ABI braze expects.
#define BRAZE_DRIVER_FUNCTIONS(X)                                                                            \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)    \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                  \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuModuleLoadData) X(cuModuleUnload)   \
  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD)   \
  X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate)  \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)

struct DriverApi {
#define BRAZE_DECLARE(name) decltype(&::name) name = nullptr;
  BRAZE_DRIVER_FUNCTIONS(BRAZE_DECLARE)
#undef BRAZE_DECLARE
  std::string path;    // the libcuda that was opened
  int version = 0;     // cuDriverGetVersion: 13000 is CUDA 13.0
};

// The driver, loaded and cuInit-ed on first use; throws CudaUnavailable
// when there is no libcuda, and CudaError when cuInit fails (a driver with
// no device answers CUDA_ERROR_NO_DEVICE). Thread-safe; later calls rethrow
// the first failure's error.
const DriverApi& driver();

// "CUDA_ERROR_INVALID_VALUE" and its text, or the number when the driver
// cannot say.
std::string driver_error_name(CUresult r);
std::string driver_error_text(CUresult r);

// Throws CudaError for a failed driver call; `where` is what braze was doing.
void check_driver(CUresult r, const char* call, const std::string& where);

}  // namespace braze::cuda

// BRAZE_CU(cuMemAlloc, (&ptr, bytes), "allocating 4096 bytes"): calls the
// loaded entry point and throws CudaError naming the call on failure.
#define BRAZE_CU(fn, args, where) \
  ::braze::cuda::check_driver(::braze::cuda::driver().fn args, #fn, where)
