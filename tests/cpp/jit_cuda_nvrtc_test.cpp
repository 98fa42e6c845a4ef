// Every kernel the tests generate compiles through NVRTC to cubins for
// sm_80 and sm_90 (DESIGN.md section 9): no GPU needed.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <thread>

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/nvrtc_api.h"
#include "jit_cuda/nvrtc_compile.h"
#include "tests/cpp/jit_cuda_specs.h"

namespace braze::cuda {
namespace {


testing::SpecCollection all_specs() {
  testing::SpecCollection c;
  testing::add_elementwise_ops(c);
  testing::add_casts(c);
  testing::add_reductions(c);
  testing::add_composites(c);
  testing::add_random_graphs(c, testing::fuzz_graphs(120));
  return c;
}

// NVRTC costs a fixed ~0.2 s per program beyond its per-kernel time, so
// kernels are compiled many to a program; a failing program is compiled
// again kernel by kernel to name the one that fails, with its source.
constexpr size_t kKernelsPerProgram = 64;

void compile_or_explain(const std::vector<CudaKernelSource>& batch, int arch, size_t& cubin_bytes) {
  std::string source;
  for (const CudaKernelSource& k : batch) source += k.source + "\n";
  try {
    cubin_bytes += compile_cuda(source, "batch", arch, CudaImage::Cubin).image.size();
    return;
  } catch (const CudaError&) {
  }
  for (const CudaKernelSource& k : batch) {
    try {
      compile_cuda(k.source, k.name, arch, CudaImage::Cubin);
    } catch (const CudaError& e) {
      ADD_FAILURE() << e.what() << "\n--- log ---\n" << e.error_text() << "\n--- source ---\n" << k.source;
    }
  }
}

TEST(JitCudaNvrtc, EveryTestKernelCompilesForSm80AndSm90) {
  if (!nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  auto t0 = std::chrono::steady_clock::now();
  testing::SpecCollection c = all_specs();
  std::vector<CudaKernelSource> kernels;
  std::map<KernelShape, int> shapes;
  for (const auto& [key, spec] : c.specs()) {
    kernels.push_back(render_cuda(spec));
    ++shapes[kernels.back().launch.shape];
  }
  // Every op of the op table that can be in a kernel was in one; but
  // stop_gradient, which fusion drops (or turns into the Copy it equals).
  for (size_t o = 0; o < std::size(kOpInfo); ++o) {
    Op op = static_cast<Op>(o);
    if ((is_elementwise(op) || is_reduce(op)) && op != Op::StopGradient) {
      EXPECT_TRUE(c.ops_seen().count(std::string(info(op).name))) << info(op).name << " is in no kernel";
    }
  }
  EXPECT_GE(kernels.size(), 400u);
  for (KernelShape s : {KernelShape::Elements, KernelShape::BlockPerRow, KernelShape::ThreadPerRow,
                       KernelShape::SplitColumns})
    EXPECT_GT(shapes[s], 10) << name(s);
  // One thread per architecture: NVRTC is thread-safe, and CI has two cores.
  auto compile_all = [&](int arch, size_t& bytes) {
    for (size_t b = 0; b < kernels.size() && !::testing::Test::HasFailure(); b += kKernelsPerProgram) {
      std::vector<CudaKernelSource> batch(kernels.begin() + b,
                                          kernels.begin() + std::min(kernels.size(), b + kKernelsPerProgram));
      compile_or_explain(batch, arch, bytes);
    }
  };
  size_t bytes80 = 0, bytes90 = 0;
  std::thread sm80(compile_all, 80, std::ref(bytes80));
  compile_all(90, bytes90);
  sm80.join();
  std::cout << "cubin bytes: sm_80 " << bytes80 << ", sm_90 " << bytes90 << "\n";
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << kernels.size() << " kernels (" << shapes[KernelShape::Elements] << " elements, "
            << shapes[KernelShape::BlockPerRow] << " block per row, " << shapes[KernelShape::ThreadPerRow]
            << " thread per row, " << shapes[KernelShape::SplitColumns] << " split columns) compiled for sm_80 and sm_90 in " << s << " s\n";
}

TEST(JitCudaNvrtc, SourceIsDeterministic) {
  testing::SpecCollection a, b;
  testing::add_random_graphs(a, 40);
  testing::add_random_graphs(b, 40);
  ASSERT_EQ(a.specs().size(), b.specs().size());
  for (auto ia = a.specs().begin(), ib = b.specs().begin(); ia != a.specs().end(); ++ia, ++ib) {
    CudaKernelSource x = render_cuda(ia->second), y = render_cuda(ib->second);
    EXPECT_EQ(x.source, y.source);
    EXPECT_EQ(x.name, y.name);
  }
}

}  // namespace
}  // namespace braze::cuda
