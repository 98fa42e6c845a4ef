// A tensor of normally distributed values from a fixed seed, float32 or
// stored as `dtype`: the data of the fusion, JIT and planner tests.
#pragma once

#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "runtime/braze.h"

namespace braze::testing {

inline Tensor random_tensor(Shape shape, uint32_t seed, float scale = 2.0f, std::optional<DType> dtype = std::nullopt) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = dist(rng);
  return from_vector<float>(v, std::move(shape), dtype);
}

}  // namespace braze::testing
