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
//
// Index math is 32-bit (`int` offsets, `unsigned` loop counters) when
//   - the domain has at most kMaxIndex32 elements: every linear index
//     (element, row, position in a row, dense output index) and every
//     axis index is below 2^31; and
//   - every element offset of every input lies in [-kMaxIndex32,
//     kMaxIndex32]: an offset is the input's base offset plus one term per
//     axis, each between 0 and (size - 1) x stride, so every partial sum
//     the generated code forms lies between the smallest and the largest
//     offset too.
// Loop counters are unsigned because a grid-stride loop steps past its end
// before it stops: the last index below 2^31 plus one grid's threads, at
// most kMaxGridThreads = 2^31 (CudaLaunch::blocks caps the grid), stays
// below 2^32, so the counter never wraps. Otherwise (a tensor of 2^31
// elements, or a view reaching that far) everything is 64-bit.
inline constexpr int64_t kMaxIndex32 = (int64_t{1} << 31) - 1;
inline constexpr int64_t kMaxGridThreads = int64_t{1} << 31;

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

// Note [CUDA vector access]
// An element-wise kernel moves 16 bytes per operand and thread where it
// can: `width` = 16 / the widest itemsize among its buffers and outputs
// (4 float32, 8 float16/bfloat16, 16 int8, 2 float64) consecutive
// elements along the innermost collapsed axis, through one aligned
// bz::Vec (prelude.cuh: ld/st.global.v4 for 16 bytes, narrower for the
// narrower dtypes of a mixed kernel). It applies when that axis divides by
// `width`, or when the whole domain is one axis (then a scalar tail loop
// does the last numel % width elements). Outputs are dense, so always
// vector stores. Each buffer input is decided alone from its baked view:
//   - Vector: stride 1 along the axis, and the offset and every outer
//     stride multiples of `width`, so each thread's first element sits on
//     a width x itemsize boundary: buffers start 64-byte aligned
//     (graph/array.h; device memory and the device arena 256), and a view
//     with an element offset keeps that only if the offset divides;
//   - Broadcast: stride 0 along the axis: one scalar load per thread;
//   - Gather: anything else (transposed, sliced with a step, a misaligned
//     offset): `width` scalar loads.
// A row reduction (BlockPerRow, one reduced axis, the innermost) reads its
// rows the same way when the row length divides by `width` and every input
// it reads per element is Vector or Broadcast (a row is not gathered);
// values per row (Reduced space) stay scalar. Column reductions do not
// vectorise: their threads already read neighbouring columns.
enum class Access { Vector, Broadcast, Gather };
inline constexpr int kVectorBytes = 16;

struct VectorPlan {
  int width = 1;               // elements per thread; 1 = the scalar kernel
  std::vector<Access> inputs;  // per spec input (meaningful for buffers)
  int64_t vectors = 0;         // numel / width: the vector loop's trip count
  int64_t tail = 0;            // numel % width: the scalar tail (one-axis domains only)
};
VectorPlan plan_vectors(const KernelSpec& spec, const CudaLayout& l);
// How buffer input k moves `width` elements along the innermost axis.
Access vector_access(const CudaLayout& l, size_t k, int64_t width);

// C++ spellings for a dtype in generated code (prelude: jit_cuda/device/).
const char* storage_type(DType t);   // in memory: unsigned char for bool, bz::f16_bits, ...
const char* register_type(DType t);  // a value: bool, float for float16/bfloat16, ...
const char* compute_type(DType t);   // what ops compute in: as register_type, but int for bool
// float, double or long long. A float product accumulates in double, as
// the reference's does (Note [Float products] in jit_cpu/gen_analysis.cpp).
const char* accumulator_type(Op op, DType input);
// An expression rounding `e` (a float) to the dtype's precision, or `e`.
std::string round_to(DType t, const std::string& e);
// Loads element `index` of `ptr` (storage_type) as the register type.
std::string load_expr(DType t, const std::string& ptr, const std::string& index);
// The storage representation of `value` (register type).
std::string store_expr(DType t, const std::string& value);

}  // namespace braze::cuda
