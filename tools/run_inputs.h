// The input arrays `braze run` realizes a graph with: .npy files, the data
// saved in the graph file, or random values from a fixed seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/graph_source.h"

namespace braze::cli {

struct RunInputs {
  std::vector<Array> arrays;  // by input number
  std::string origin;         // "random (seed 0)", "saved in the graph file", ".npy files"
};

// `npy_files` (by input number) win over saved data, which wins over random
// values. Throws on a count, dtype or shape that does not match the graph.
RunInputs choose_inputs(const GraphSource& src, const std::vector<std::string>& npy_files, uint64_t seed);

// Values a kernel meets in practice, the same for a seed on every machine:
// floats uniform in [-2, 2), integers in [-8, 8) ([0, 16) unsigned), bools
// half true.
Array random_array(DType dtype, const Shape& shape, uint64_t seed);

}  // namespace braze::cli
