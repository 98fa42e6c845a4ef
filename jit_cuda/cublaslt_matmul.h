// A MatmulPlan as cuBLASLt objects: its descriptors (made once per shape,
// without a GPU), the algorithm cuBLASLt's heuristic picks for them (once
// per shape, with a handle), and the calls (Note [Row-major matmul on
// cuBLASLt] in matmul_plan.h).
#pragma once

#include <cstddef>
#include <mutex>

#include "jit_cuda/cublaslt_api.h"
#include "jit_cuda/driver_objects.h"
#include "jit_cuda/matmul_plan.h"

namespace braze::cuda {

void release_lt_matmul_desc(cublasLtMatmulDesc_t d) noexcept;
void release_lt_layout(cublasLtMatrixLayout_t l) noexcept;
void release_lt_preference(cublasLtMatmulPreference_t p) noexcept;
void release_lt_handle(cublasLtHandle_t h) noexcept;
using LtMatmulDesc = Owned<cublasLtMatmulDesc_t, release_lt_matmul_desc>;
using LtLayout = Owned<cublasLtMatrixLayout_t, release_lt_layout>;
using LtPreference = Owned<cublasLtMatmulPreference_t, release_lt_preference>;

// A cuBLASLt handle (cublasLtCreate: needs the device's context current).
class LtHandle : public Owned<cublasLtHandle_t, release_lt_handle> {
 public:
  LtHandle();
};

// Past this, an algorithm's workspace is not worth it: the heuristic picks
// one that needs less. 32 MiB is what cuBLAS suggests for Hopper; the
// workspace is planned into the program's arena (Note [Step workspaces]),
// shared with buffers dead at the step.
inline constexpr size_t kMaxMatmulWorkspace = size_t{32} << 20;

cudaDataType_t cuda_data_type(DType d);
// float32: CUBLAS_COMPUTE_32F, or _FAST_TF32 when allowed; float16 and
// bfloat16 accumulate in float32 too; float64 in float64.
cublasComputeType_t compute_type(DType d, bool allow_tf32);

// The descriptors of a plan. The bias pointer is set to a stand-in with
// the bias's alignment (the heuristic reads alignment from it); each run
// sets the real one.
struct LtDescriptors {
  LtMatmulDesc matmul;
  LtLayout a, b, c, d;  // c: only with a residual (else D's stands for C)
};
LtDescriptors make_descriptors(const MatmulPlan& p, bool allow_tf32);

// Device addresses of the bases a plan reads and writes.
struct LtOperands {
  const std::byte* a = nullptr;
  const std::byte* b = nullptr;
  const std::byte* c = nullptr;
  const std::byte* bias = nullptr;
  std::byte* d = nullptr;
};

// A shape's descriptors and algorithm, shared by every program step of
// that shape (cublaslt_calls.h caches them by key_text).
class LtMatmul {
 public:
  // Runs cublasLtMatmulAlgoGetHeuristic; throws CudaError when cuBLASLt
  // offers no algorithm.
  LtMatmul(cublasLtHandle_t handle, const MatmulPlan& p, bool allow_tf32);

  size_t workspace_bytes() const { return workspace_; }

  // Enqueues the plan's calls on `stream`; `alpha` is the plan's scale with
  // its 0-d operands applied; `workspace` holds workspace_bytes().
  void run(cublasLtHandle_t handle, const MatmulPlan& p, const LtOperands& in, double alpha, void* workspace,
           CUstream stream) const;

 private:
  LtDescriptors desc_;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_ = 0;
  std::string key_;
  mutable std::mutex mutex_;  // the bias pointer is an attribute of the shared descriptor
};

}  // namespace braze::cuda
