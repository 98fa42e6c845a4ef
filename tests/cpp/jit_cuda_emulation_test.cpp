// The CUDA source braze renders, compiled by the host C++ compiler against
// jit_cuda/device/host_emulation.h and run on CPU threads (blocks, warps,
// shuffles, shared memory, barriers), against the spec interpreter: the
// generated kernels' results checked on a machine with no GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <random>

#include "fusion/spec_interpreter.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/emulated_kernels.h"
#include "tests/cpp/jit_check.h"
#include "tests/cpp/jit_cuda_specs.h"

namespace braze::cuda {
namespace {

// Few blocks of few threads: the loops are grid- and block-stride, so two
// blocks cover every index and check the strides, and two warps check the
// shared-memory step of block_reduce.
void run(const EmulatedKernels& so, const CudaKernelSource& k, void* const* params) {
  if (k.launch.work > 0)
    so.launch(so.entry(k.name), params, static_cast<unsigned>(k.launch.blocks(2)), std::min(k.launch.threads, 64));
}

// Random contents for a buffer of `t` large enough for the view.
Array random_buffer(DType t, const View& v, std::mt19937& rng) {
  int64_t hi = v.offset;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] > 1 && v.strides[d] > 0) hi += (v.shape[d] - 1) * v.strides[d];
  Array a = allocate_array(t, {hi + 1});
  std::normal_distribution<double> normal(0.0, 1.5);
  std::uniform_int_distribution<int64_t> small(-8, 8);
  for (int64_t i = 0; i <= hi; ++i) {
    if (is_float(t)) store_double(t, a.data.get(), i, normal(rng));
    else store_int(t, a.data.get(), i, t == DType::UInt8 || t == DType::Bool ? small(rng) & (t == DType::Bool ? 1 : 15) : small(rng));
  }
  return a;
}

double tolerance(DType t) {
  if (t == DType::Float16) return 1e-2;
  if (t == DType::BFloat16) return 3e-2;
  return 1e-4;
}

// Runs one spec both ways on the same random inputs and compares outputs.
void check(const KernelSpec& spec, const CudaKernelSource& k, const EmulatedKernels& so, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Array> buffers;
  std::vector<KernelArg> args(spec.inputs.size());
  std::vector<const void*> pointers;
  std::vector<double> reals;
  std::vector<long long> ints;
  pointers.reserve(64), reals.reserve(64), ints.reserve(64);
  std::vector<void*> params;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const KernelInput& in = spec.inputs[i];
    bool real = is_float(in.dtype);
    switch (in.kind) {
      case KernelInput::Kind::Buffer:
        buffers.push_back(random_buffer(in.dtype, in.view, rng));
        args[i].data = buffers.back().data.get();
        pointers.push_back(args[i].data);
        params.push_back(&pointers.back());
        break;
      case KernelInput::Kind::Scalar:
        args[i].real[0] = 0.75, args[i].integer[0] = 3;
        if (real) reals.push_back(0.75), params.push_back(&reals.back());
        else ints.push_back(3), params.push_back(&ints.back());
        break;
      case KernelInput::Kind::Arange:
        args[i].real[0] = -1.5, args[i].real[1] = 0.25, args[i].integer[0] = -3, args[i].integer[1] = 2;
        if (real) reals.push_back(-1.5), params.push_back(&reals.back()), reals.push_back(0.25), params.push_back(&reals.back());
        else ints.push_back(-3), params.push_back(&ints.back()), ints.push_back(2), params.push_back(&ints.back());
        break;
    }
  }
  std::vector<Array> want, got;
  std::vector<std::byte*> want_ptrs;
  for (const KernelOutput& o : spec.outputs) {
    want.push_back(allocate_array(o.dtype, spec.shape_of(o.space)));
    got.push_back(allocate_array(o.dtype, spec.shape_of(o.space)));
    want_ptrs.push_back(want.back().data.get());
    pointers.push_back(got.back().data.get());
    params.push_back(&pointers.back());
  }
  interpret_spec(spec, args, want_ptrs);
  run(so, k, params.data());
  for (size_t o = 0; o < want.size(); ++o)
    EXPECT_TRUE(testing::close(got[o], want[o], tolerance(want[o].dtype)))
        << "output " << o << " of " << k.name << "\n" << k.source;
}

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
    check(spec, kernels[n], so, static_cast<uint32_t>(n));
    ++n;
    if (::testing::Test::HasFailure()) break;
  }
  std::cout << n << " kernels emulated and checked; host compile " << build_s << " s, total "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
}

}  // namespace
}  // namespace braze::cuda
