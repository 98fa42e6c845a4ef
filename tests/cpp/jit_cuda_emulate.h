// Runs a rendered CUDA kernel under host emulation and the same spec on the
// spec interpreter, on the same random inputs, and compares the outputs:
// shared by the emulation tests (jit_cuda_emulation_test.cpp,
// jit_cuda_codegen_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <random>
#include <stdexcept>

#include "fusion/spec_interpreter.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/emulated_kernels.h"
#include "tests/cpp/jit_check.h"

namespace braze::testing {

// Few blocks of few threads: the loops are grid- and block-stride, so two
// blocks cover every index and check the strides, and two warps check the
// shared-memory step of block_reduce.
inline void emulated_launch(const cuda::EmulatedKernels& so, const cuda::CudaKernelSource& k, void* const* params) {
  if (k.launch.work > 0)
    so.launch(so.entry(k.name), params, static_cast<unsigned>(k.launch.blocks(2)), k.launch.threads_up_to(64));
}

// The last element a view reaches (a windowed view, Note [Windows], only
// those in its window), or -1 when it reaches none.
inline int64_t view_extent(const View& v) {
  int64_t hi = v.offset;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    Window w = v.window_of(d);
    if (w.hi <= w.lo) return -1;
    if (v.shape[d] > 1) hi += std::max(w.lo * v.strides[d], (w.hi - 1) * v.strides[d]);
  }
  return hi;
}

// A buffer of `t` of `elements`, mapped, not allocated: pages no view
// reaches cost nothing, so a view at an offset past 2^31 elements is cheap.
inline Array mapped_buffer(DType t, int64_t elements) {
  size_t bytes = static_cast<size_t>(elements) * itemsize(t);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return Array{t, {elements}, std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p), [bytes](std::byte* q) { ::munmap(q, bytes); })};
}

// Random values at every element of `a` the view reaches.
inline void fill_view(Array& a, const View& v, std::mt19937& rng, double nan_chance) {
  const DType t = a.dtype;
  std::normal_distribution<double> normal(0.0, 1.5);
  std::uniform_int_distribution<int64_t> small(-8, 8);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<int64_t> at(v.shape.size(), 0);
  for (int64_t n = numel(v.shape); n > 0; --n) {
    int64_t i = v.offset;
    bool in = true;
    for (size_t d = 0; d < at.size(); ++d) {
      i += at[d] * v.strides[d];
      in = in && at[d] >= v.window_of(d).lo && at[d] < v.window_of(d).hi;
    }
    if (!in) {  // padding: nothing in memory
    } else if (is_float(t)) store_double(t, a.data.get(), i, nan_chance > 0 && unit(rng) < nan_chance ? NAN : normal(rng));
    else store_int(t, a.data.get(), i, !is_signed(t) ? small(rng) & (t == DType::Bool ? 1 : 15) : small(rng));
    for (size_t d = at.size(); d-- > 0 && ++at[d] == v.shape[d];) at[d] = 0;
  }
}

// Per spec input, a buffer with random values at every element its view
// reaches (null for inputs that are not buffers). Inputs reading one
// buffer (KernelInput::same_buffer_as) share one, as they do when run:
// kernels may read one through another's loads (Note [Tile pairs on the
// GPU]).
inline std::vector<Array> random_input_buffers(const KernelSpec& spec, std::mt19937& rng, double nan_chance) {
  const size_t n = spec.inputs.size();
  auto root = [&](size_t i) {
    const int32_t j = spec.inputs[i].same_buffer_as;
    return j >= 0 && spec.inputs[j].dtype == spec.inputs[i].dtype ? static_cast<size_t>(j) : i;
  };
  std::vector<int64_t> extent(n, -1);
  for (size_t i = 0; i < n; ++i)
    if (spec.inputs[i].kind == KernelInput::Kind::Buffer) extent[root(i)] = std::max(extent[root(i)], view_extent(spec.inputs[i].view));
  std::vector<Array> buffers(n);
  for (size_t i = 0; i < n; ++i) {
    if (spec.inputs[i].kind != KernelInput::Kind::Buffer) continue;
    Array& b = buffers[root(i)];
    if (!b.data) b = mapped_buffer(spec.inputs[i].dtype, std::max<int64_t>(extent[root(i)], 0) + 1);
    fill_view(b, spec.inputs[i].view, rng, nan_chance);
    buffers[i] = b;
  }
  return buffers;
}

inline double emulation_tolerance(DType t) {
  if (t == DType::Float16) return 1e-2;
  if (t == DType::BFloat16) return 3e-2;
  return 1e-4;
}

struct EmulationOptions {
  double tolerance_scale = 1;  // reductions over many elements round more
  double nan_chance = 0;       // per float input element
};

// Runs one spec both ways on the same random inputs and compares outputs.
inline void check_emulated(const KernelSpec& spec, const cuda::CudaKernelSource& k, const cuda::EmulatedKernels& so, uint32_t seed,
                  EmulationOptions o = {}) {
  std::mt19937 rng(seed);
  std::vector<Array> buffers = random_input_buffers(spec, rng, o.nan_chance);
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
        args[i].data = buffers[i].data.get();
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
      case KernelInput::Kind::Window: break;  // only in lowered specs
    }
  }
  std::vector<Array> want, got;
  std::vector<std::byte*> want_ptrs;
  for (const KernelOutput& out : spec.outputs) {
    want.push_back(allocate_array(out.dtype, spec.shape_of(out.space)));
    got.push_back(allocate_array(out.dtype, spec.shape_of(out.space)));
    want_ptrs.push_back(want.back().data.get());
    pointers.push_back(got.back().data.get());
    params.push_back(&pointers.back());
  }
  interpret_spec(spec, args, want_ptrs);
  emulated_launch(so, k, params.data());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(close(got[i], want[i], emulation_tolerance(want[i].dtype) * o.tolerance_scale))
        << "output " << i << " of " << k.name << "\n" << k.source;
}

}  // namespace braze::testing
