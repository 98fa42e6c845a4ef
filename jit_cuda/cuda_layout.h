// The index space a CUDA kernel walks: the spec's domain with size-1 axes
// dropped and neighbouring axes merged wherever every input allows, and the
// C++ types values take in generated code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusion/kernel_spec.h"

namespace braze::cuda {

// Note [CUDA index space]
// Axes of size 1 carry no index; two neighbouring axes that are both kept
// or both reduced merge into one when every input reads them as one
// (stride of the outer = size x stride of the inner), so a contiguous
// tensor of any rank is one loop index and one multiply per input. Reduced
// inputs are not asked about reduced axes: they read them with stride 0.
// Outputs are dense over the domain, so they never prevent a merge.
// Index math is 32-bit when every index and every offset of every input
// fits, with room for a grid-stride step past the end (kMaxIndex32).
inline constexpr int64_t kMaxIndex32 = (int64_t{1} << 31) - (int64_t{1} << 26);

struct CudaLayout {
  std::vector<int64_t> sizes;    // the collapsed domain
  std::vector<bool> reduced;     // per collapsed axis
  // Per spec input (empty for scalars): strides over the collapsed axes
  // (0 along reduced axes for Reduced inputs), and the offset.
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> offsets;
  bool index32 = true;

  bool reduces() const;  // some collapsed axis is reduced
  int64_t numel() const;
  int64_t rows() const;        // product of the kept axes
  int64_t row_length() const;  // product of the reduced axes
};

CudaLayout make_layout(const KernelSpec& spec);

// C++ spellings for a dtype in generated code (prelude: jit_cuda/device/).
const char* storage_type(DType t);   // in memory: unsigned char for bool, bz::f16_bits, ...
const char* register_type(DType t);  // a value: bool, float for float16/bfloat16, ...
const char* compute_type(DType t);   // what ops compute in: as register_type, but int for bool
const char* accumulator_type(DType input);  // float, double or long long
// An expression rounding `e` (a float) to the dtype's precision, or `e`.
std::string round_to(DType t, const std::string& e);
// Loads element `index` of `ptr` (storage_type) as the register type.
std::string load_expr(DType t, const std::string& ptr, const std::string& index);
// The storage representation of `value` (register type).
std::string store_expr(DType t, const std::string& value);

}  // namespace braze::cuda
