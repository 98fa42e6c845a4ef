// Helpers of the CUDA library call tests: a tensor's schedule as a CUDA
// device makes it (post-ops as cuBLASLt and cuDNN take them) and its
// library step's plan.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "fusion/schedule.h"
#include "jit_cuda/conv_plan.h"
#include "jit_cuda/library_epilogue.h"
#include "jit_cuda/matmul_plan.h"
#include "runtime/braze.h"
#include "runtime/lower.h"

namespace braze::testing {

// With `parameters`, Python-style scalars become 0-d inputs, as in a
// program (Note [Scalar parameters]).
inline Schedule cuda_schedule(const Tensor& t, bool parameters = false) {
  Graph g = lower(std::vector<Tensor>{t}).graph;
  return make_schedule(parameters ? with_scalar_parameters(g) : g, cuda::cuda_library_rules());
}

inline const Step& library_step(const Schedule& s) {
  for (const Step& step : s.steps)
    if (step.group.kind == FusedGroup::Kind::Library) return step;
  throw std::logic_error("no library step:\n" + explain(s));
}

inline cuda::MatmulPlan matmul_plan(const Tensor& t, bool parameters = false) {
  Schedule s = cuda_schedule(t, parameters);
  return cuda::plan_matmul(s.graph, library_step(s).group);
}

inline cuda::ConvPlan conv_plan(const Tensor& t) {
  Schedule s = cuda_schedule(t);
  return cuda::plan_conv(s.graph, library_step(s).group);
}

// The message of what `f` throws as std::invalid_argument ("" if nothing).
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// How far a library call's result may be from the reference's, relative
// to 1 + |value|: float32 sums of a few terms, one rounding of float16 and
// bfloat16 (the reference rounds each post-op, the libraries once).
inline double library_tolerance(DType t) {
  switch (t) {
    case DType::Float64: return 1e-11;
    case DType::Float16: return 4e-3;
    case DType::BFloat16: return 3e-2;
    default: return 2e-5;
  }
}

inline Tensor random_of(const Shape& s, std::mt19937& rng, DType t) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(numel(s)));
  for (float& x : v) x = dist(rng);
  return from_vector<float>(v, s, t);
}

// A random matmul with an epilogue: float32 (most), float64, float16 or
// bfloat16; 1-9 rows, columns and terms (sometimes none); no batch, a
// batch on both sides, on the left only (a shared weight), broadcast over
// one axis of two, or broadcast on both sides; each operand stored
// transposed half of the time and sliced one row and column in (an
// offset, a leading dimension past the width) half of the time; then
// maybe a scale, a residual (added or subtracted, sometimes transposed:
// not C), a bias, and relu, gelu (tanh) or gelu (erf: a kernel). `what`
// says which.
inline Tensor random_matmul(uint32_t seed, std::string& what) {
  const DType dtypes[] = {DType::Float32, DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const DType t = dtypes[pick(0, 4)];
  int64_t m = pick(1, 9), k = pick(0, 9) == 0 ? 0 : pick(1, 9), n = pick(1, 9);
  Shape batch_x, batch_w;
  switch (pick(0, 4)) {
    case 1: batch_x = batch_w = {3}; break;
    case 2: batch_x = {3}; break;
    case 3: batch_x = {2, 3}, batch_w = {2, 1}; break;
    case 4: batch_x = {2, 1}, batch_w = {3}; break;
    default: break;
  }
  auto operand = [&](Shape b, int64_t rows, int64_t cols) {
    bool transposed = pick(0, 1), sliced = pick(0, 1);
    Shape s = b;
    s.push_back((transposed ? cols : rows) + sliced);
    s.push_back((transposed ? rows : cols) + sliced);
    Tensor x = random_of(s, rng, t);
    if (sliced) {
      std::vector<Index> idx(b.size(), Slice{});
      idx.push_back(Slice{1, std::nullopt});
      idx.push_back(Slice{1, std::nullopt});
      x = index(x, idx);
    }
    return transposed ? matrix_transpose(x) : x;
  };
  Tensor y = matmul(operand(batch_x, m, k), operand(batch_w, k, n));
  what = "seed " + std::to_string(seed) + " " + std::string(name(t)) + " " + to_string(y.shape());
  if (pick(0, 2) == 0) y = y * 0.75, what += " *0.75";
  if (pick(0, 2) == 0) {
    const Shape& s = y.shape();
    Tensor r = pick(0, 1) ? random_of(s, rng, t) : matrix_transpose(random_of({s.end()[-1], s.end()[-2]}, rng, t));
    y = pick(0, 1) ? y + r : y - r, what += " residual";
  }
  if (pick(0, 1)) y = y + random_of({n}, rng, t), what += " +bias";
  switch (pick(0, 4)) {
    case 0: y = relu(y), what += " relu"; break;
    case 1: y = gelu(y, "tanh"), what += " gelu_tanh"; break;
    case 2: y = gelu(y), what += " gelu (a kernel)"; break;
    default: break;
  }
  return y;
}

// A random conv2d: float32, float64 or float16; 1-3 groups of 1-3 input
// and output channels; 1-9 rows and columns; kernels of 1-3; strides 1-3,
// padding 0-2 and dilation 1-2 per axis; an NCHW input or an NHWC one seen
// as NCHW; maybe a scale. Nullopt when the kernel does not fit.
inline std::optional<Tensor> random_conv(uint32_t seed, std::string& what) {
  const DType dtypes[] = {DType::Float32, DType::Float64, DType::Float16};
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const DType t = dtypes[pick(0, 2)];
  int64_t groups = pick(1, 3), cg = pick(1, 3), kg = pick(1, 3), h = pick(1, 9), w = pick(1, 9);
  int64_t r = pick(1, 3), s = pick(1, 3);
  Conv2dOptions o{{pick(1, 3), pick(1, 3)}, {pick(0, 2), pick(0, 2)}, {pick(1, 2), pick(1, 2)}, groups};
  if (h + 2 * o.padding[0] - o.dilation[0] * (r - 1) - 1 < 0 || w + 2 * o.padding[1] - o.dilation[1] * (s - 1) - 1 < 0)
    return std::nullopt;
  int64_t c = groups * cg, batch = pick(1, 2);
  Tensor x = pick(0, 1) ? random_of({batch, c, h, w}, rng, t) : permute(random_of({batch, h, w, c}, rng, t), {0, 3, 1, 2});
  Tensor y = conv2d(x, random_of({groups * kg, cg, r, s}, rng, t), std::nullopt, o);
  what = "seed " + std::to_string(seed) + " " + std::string(name(t)) + " " + to_string(y.shape());
  if (pick(0, 1)) y = y * 0.5, what += " *0.5";
  return y;
}

}  // namespace braze::testing
