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
  X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) \
  X(cuMemsetD8Async) X(cuMemPoolCreate) X(cuMemPoolSetAttribute) X(cuMemPoolTrimTo) X(cuMemAllocFromPoolAsync) \
  X(cuMemFreeAsync) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate)              \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuStreamBeginCapture)        \
  X(cuStreamEndCapture) X(cuStreamGetCaptureInfo) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch)                       \
  X(cuGraphExecKernelNodeSetParams) X(cuGraphDestroy) X(cuGraphExecDestroy)

// Note [Entry points at an older version]
// cuGetProcAddress hands out the newest version of a call up to the API
// version asked for, and a few calls changed their signature in a version
// whose cuda.h still declares the old one under the plain name: asked for at
// 13000, cuCtxSynchronize is cuCtxSynchronize_v2(CUcontext)
// (cudaTypedefs.h's PFN_cuCtxSynchronize_v13000), and called as cuda.h's
// cuCtxSynchronize(void) on the first H100 run it failed every time with
// CUDA_ERROR_CONTEXT_IS_DESTROYED (a context read from a stray register).
// Such calls are listed here with the API version whose signature cuda.h
// declares for them, asked for at that version; driver_api.cpp
// static_asserts that each has it. A call cuda.h renames is asked for by
// its new name: cuda.h's cuGraphInstantiate is cuGraphInstantiateWithFlags
// (exec, graph, flags), but "cuGraphInstantiate" asked for at 13000 is
// cuGraphInstantiate_v2(exec, graph, error node, log, log size), which the
// first H200 run of a graph called with three arguments and crashed in.
#define BRAZE_DRIVER_FUNCTIONS_AT(X) X(cuCtxSynchronize, 12000)

struct DriverApi {
#define BRAZE_DECLARE(name) decltype(&::name) name = nullptr;
#define BRAZE_DECLARE_AT(name, version) decltype(&::name) name = nullptr;
  BRAZE_DRIVER_FUNCTIONS(BRAZE_DECLARE)
  BRAZE_DRIVER_FUNCTIONS_AT(BRAZE_DECLARE_AT)
#undef BRAZE_DECLARE
#undef BRAZE_DECLARE_AT
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
