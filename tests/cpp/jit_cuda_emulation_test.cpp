// The CUDA source braze renders, compiled by the host C++ compiler against
// jit_cuda/device/host_emulation.h and run on CPU threads (blocks, warps,
// shuffles, shared memory, barriers), against the spec interpreter: the
// generated kernels' results checked on a machine with no GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "jit_cuda/cuda_source.h"
#include "jit_cuda/emulated_kernels.h"
#include "tests/cpp/jit_cuda_emulate.h"
#include "tests/cpp/jit_cuda_specs.h"

namespace braze::cuda {
namespace {

TEST(JitCudaEmulation, GeneratedKernelsMatchTheSpecInterpreter) {
  auto t0 = std::chrono::steady_clock::now();
  testing::SpecCollection c;
  testing::add_elementwise_ops(c);
  testing::add_casts(c);
  testing::add_reductions(c);
  testing::add_composites(c);
  testing::add_random_graphs(c, testing::fuzz_graphs(60));
  std::vector<CudaKernelSource> kernels;
  for (const auto& [key, spec] : c.specs()) kernels.push_back(render_cuda(spec));
  EmulatedKernels so(kernels);  // throws with the compiler's log
  double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t n = 0;
  for (const auto& [key, spec] : c.specs()) {
    testing::check_emulated(spec, kernels[n], so, static_cast<uint32_t>(n));
    ++n;
    if (::testing::Test::HasFailure()) break;
  }
  std::cout << n << " kernels emulated and checked; host compile " << build_s << " s, total "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
}

}  // namespace
}  // namespace braze::cuda
