#include "jit_cuda/cublaslt_matmul.h"

#include <cstdint>

#include "graph/check.h"

namespace braze::cuda {

namespace {

template <class T>
void set_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const T& v, const std::string& where) {
  BRAZE_CUBLASLT(cublasLtMatrixLayoutSetAttribute, (l, attr, &v, sizeof v), where);
}

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v, const std::string& where) {
  BRAZE_CUBLASLT(cublasLtMatmulDescSetAttribute, (d, attr, &v, sizeof v), where);
}

template <class T>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const T& v,
              const std::string& where) {
  BRAZE_CUBLASLT(cublasLtMatmulPreferenceSetAttribute, (p, attr, &v, sizeof v), where);
}

LtLayout layout(const LtMatrix& x, cudaDataType_t type, int32_t batch, const std::string& where) {
  cublasLtMatrixLayout_t l = nullptr;
  BRAZE_CUBLASLT(cublasLtMatrixLayoutCreate,
                 (&l, type, static_cast<uint64_t>(x.rows), static_cast<uint64_t>(x.cols), x.ld), where);
  LtLayout owned(l);
  if (batch > 1) {
    set_layout(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch, where);
    set_layout(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, x.batch_stride, where);
  }
  return owned;
}

cublasLtEpilogue_t epilogue(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::Default: return CUBLASLT_EPILOGUE_DEFAULT;
    case LtEpilogue::Bias: return CUBLASLT_EPILOGUE_BIAS;
    case LtEpilogue::Relu: return CUBLASLT_EPILOGUE_RELU;
    case LtEpilogue::ReluBias: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case LtEpilogue::Gelu: return CUBLASLT_EPILOGUE_GELU;
    case LtEpilogue::GeluBias: return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

const std::byte* at(const std::byte* base, int64_t elements, size_t item) {
  return base + elements * static_cast<int64_t>(item);
}

}  // namespace

void release_lt_matmul_desc(cublasLtMatmulDesc_t d) noexcept { cublaslt().cublasLtMatmulDescDestroy(d); }
void release_lt_layout(cublasLtMatrixLayout_t l) noexcept { cublaslt().cublasLtMatrixLayoutDestroy(l); }
void release_lt_preference(cublasLtMatmulPreference_t p) noexcept { cublaslt().cublasLtMatmulPreferenceDestroy(p); }
void release_lt_handle(cublasLtHandle_t h) noexcept { cublaslt().cublasLtDestroy(h); }

LtHandle::LtHandle() { BRAZE_CUBLASLT(cublasLtCreate, (&handle_), "creating a cuBLASLt handle"); }

cudaDataType_t cuda_data_type(DType d) {
  switch (d) {
    case DType::Float32: return CUDA_R_32F;
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    case DType::Float64: return CUDA_R_64F;
    default: BRAZE_ASSERT(false, "no CUDA data type for ", name(d));
  }
  return CUDA_R_32F;
}

cublasComputeType_t compute_type(DType d, bool allow_tf32) {
  if (d == DType::Float64) return CUBLAS_COMPUTE_64F;
  return d == DType::Float32 && allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

LtDescriptors make_descriptors(const MatmulPlan& p, bool allow_tf32) {
  const std::string where = "describing matmul " + key_text(p, allow_tf32);
  const cudaDataType_t type = cuda_data_type(p.dtype);
  cublasLtMatmulDesc_t d = nullptr;
  BRAZE_CUBLASLT(cublasLtMatmulDescCreate,
                 (&d, compute_type(p.dtype, allow_tf32), p.dtype == DType::Float64 ? CUDA_R_64F : CUDA_R_32F), where);
  LtDescriptors out{LtMatmulDesc(d), layout(p.a, type, p.batch, where), layout(p.b, type, p.batch, where),
                    p.has_c ? layout(p.c, type, p.batch, where) : LtLayout(), layout(p.d, type, p.batch, where)};
  set_desc(d, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N), where);
  set_desc(d, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N), where);
  set_desc(d, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(epilogue(p.epilogue)), where);
  if (has_bias(p.epilogue)) {
    set_desc(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<int32_t>(type), where);
    // A stand-in address with the bias's alignment: what the heuristic reads.
    const void* stand_in = reinterpret_cast<const void*>(static_cast<uintptr_t>(p.align_bias));
    set_desc(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, stand_in, where);
  }
  return out;
}

LtMatmul::LtMatmul(cublasLtHandle_t handle, const MatmulPlan& p, bool allow_tf32)
    : desc_(make_descriptors(p, allow_tf32)), key_(key_text(p, allow_tf32)) {
  const std::string where = "choosing an algorithm for matmul " + key_;
  cublasLtMatmulPreference_t raw = nullptr;
  BRAZE_CUBLASLT(cublasLtMatmulPreferenceCreate, (&raw), where);
  LtPreference pref(raw);
  set_pref(raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<uint64_t>(kMaxMatmulWorkspace), where);
  set_pref(raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, static_cast<uint32_t>(p.align_a), where);
  set_pref(raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, static_cast<uint32_t>(p.align_b), where);
  set_pref(raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, static_cast<uint32_t>(p.align_c), where);
  set_pref(raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, static_cast<uint32_t>(p.align_d), where);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasLtMatrixLayout_t c = p.has_c ? desc_.c.get() : desc_.d.get();
  BRAZE_CUBLASLT(cublasLtMatmulAlgoGetHeuristic,
                 (handle, desc_.matmul.get(), desc_.a.get(), desc_.b.get(), c, desc_.d.get(), pref.get(), 1, &result,
                  &found),
                 where);
  // The heuristic's best (its first); none is cuBLASLt saying it cannot.
  if (found == 0) check_cublaslt(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmulAlgoGetHeuristic", where);
  algo_ = result.algo;
  workspace_ = result.workspaceSize;
}

void LtMatmul::run(cublasLtHandle_t handle, const MatmulPlan& p, const LtOperands& in, double alpha,
                   void* workspace, CUstream stream) const {
  const size_t item = itemsize(p.dtype);
  const std::string where = "running matmul " + key_;
  // Operands as the heuristic was told (Note [Row-major matmul on cuBLASLt]).
  auto aligned = [](const void* ptr, int bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; };
  // Scale type: double for float64, float otherwise.
  const float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(p.beta);
  const bool f64 = p.dtype == DType::Float64;
  const void* alpha_ptr = f64 ? static_cast<const void*>(&alpha) : &alpha32;
  const void* beta_ptr = f64 ? static_cast<const void*>(&p.beta) : &beta32;
  cublasLtMatrixLayout_t c_desc = p.has_c ? desc_.c.get() : desc_.d.get();
  std::lock_guard lock(mutex_);
  if (has_bias(p.epilogue)) {
    const std::byte* bias = at(in.bias, p.bias_offset, item);
    BRAZE_ASSERT(aligned(bias, p.align_bias), "a bias at ", static_cast<const void*>(bias), " is not aligned to ",
                 p.align_bias, " bytes");
    set_desc(desc_.matmul.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias), where);
  }
  for (const MatmulPlan::Offsets& o : p.calls) {
    const std::byte* a = at(in.a, o.a, item);
    const std::byte* b = at(in.b, o.b, item);
    std::byte* d = in.d + o.d * static_cast<int64_t>(item);
    const std::byte* c = p.has_c ? at(in.c, o.c, item) : d;
    BRAZE_ASSERT(aligned(a, p.align_a) && aligned(b, p.align_b) && aligned(c, p.align_c) && aligned(d, p.align_d),
                 "matmul operands less aligned than planned (", p.align_a, ", ", p.align_b, ", ", p.align_c, ", ",
                 p.align_d, " bytes) for ", key_);
    BRAZE_CUBLASLT(cublasLtMatmul,
                   (handle, desc_.matmul.get(), alpha_ptr, a, desc_.a.get(), b, desc_.b.get(), beta_ptr, c, c_desc, d,
                    desc_.d.get(), &algo_, workspace, workspace_, stream),
                   where);
  }
}

}  // namespace braze::cuda
