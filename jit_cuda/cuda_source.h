// KernelSpec -> CUDA C++ source (Note [CUDA kernel shapes]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusion/kernel_spec.h"

namespace braze::cuda {

// Bump when generated source changes for the same spec: part of every
// cache key (with the prelude's text, which is hashed separately).
inline constexpr int kCudaCodegenVersion = 1;

// Note [CUDA kernel shapes]
// Every spec becomes one kernel of one of three shapes, from its collapsed
// index space (Note [CUDA index space]):
// - Elements: no reduced axis. A grid-stride loop over the domain; each
//   thread computes the body for one index at a time, reading every input
//   through its own baked strides (broadcasts are stride 0).
// - BlockPerRow: the innermost axis is reduced (softmax, layer_norm, a sum
//   over the last axis). One block per row (grid-stride over rows); each
//   reduction is a pass in which the threads stride along the row and
//   combine with warp shuffles and shared memory, so every thread has the
//   row's value for the next pass; a last pass stores the Full outputs.
//   softmax is three passes over a row in one kernel: max, sum of exp, store.
// - ThreadPerRow: the innermost axis is kept (x.sum(axis=0), batch-norm
//   statistics): one thread per row walks the reduced axes sequentially;
//   neighbouring threads read neighbouring columns, so loads coalesce.
// Values are recomputed in each pass that needs them rather than kept:
// registers are the scarce thing on a GPU and the row is in L1/L2.
// Generated code calls the op table's functors (graph/scalar_math.h) on
// each op's compute type, converting and rounding as the reference does
// after every op (jit_cuda/device/prelude.cuh).
enum class KernelShape { Elements, BlockPerRow, ThreadPerRow };
const char* name(KernelShape s);

// How to launch: `threads` per block (a multiple of 32, also the kernel's
// __launch_bounds__); blocks: one per `threads` work items (Elements,
// ThreadPerRow) or one per row (BlockPerRow), capped by the launcher (the
// loops are grid-stride). Nothing to launch when work == 0.
struct CudaLaunch {
  KernelShape shape = KernelShape::Elements;
  int threads = 256;
  int64_t work = 0;  // elements or rows
  int64_t blocks(int64_t max_blocks) const;
};

// Parameters, in order: per spec input a `const T*` (Buffer), its value
// (Scalar: double for float dtypes, long long otherwise), or start and step
// (Arange, the same types); then per spec output a `T*`, dense over the
// domain (Full) or over the rows (Reduced).
struct CudaKernelSource {
  std::string name;    // readable and unique per key: bz_row_max_sub_exp_0123456789ab
  std::string source;  // includes "graph/scalar_math.h" and "braze/prelude.cuh"
  CudaLaunch launch;
  std::vector<std::string> param_types;  // C++ type of each parameter, in order
};

// Deterministic: the same spec gives the same bytes.
CudaKernelSource render_cuda(const KernelSpec& spec);

}  // namespace braze::cuda
