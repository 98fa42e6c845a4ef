#include "tools/run_inputs.h"

#include <random>

#include "graph/check.h"
#include "tools/npy.h"

namespace braze::cli {

Array random_array(DType dtype, const Shape& shape, uint64_t seed) {
  Array a = allocate_array(dtype, shape);
  // mt19937_64's output is fixed by the standard; the distributions' are
  // not, so values are made from its raw bits.
  std::mt19937_64 bits(seed);
  for (int64_t i = 0; i < a.numel(); ++i) {
    uint64_t r = bits();
    switch (kind(dtype)) {
      case DTypeKind::Float: store_double(dtype, a.data.get(), i, static_cast<double>(r >> 11) * 0x1p-53 * 4.0 - 2.0); break;
      case DTypeKind::Int: store_int(dtype, a.data.get(), i, static_cast<int64_t>(r >> 60) - (is_signed(dtype) ? 8 : 0)); break;
      case DTypeKind::Bool: store_int(dtype, a.data.get(), i, static_cast<int64_t>(r >> 63)); break;
    }
  }
  return a;
}

RunInputs choose_inputs(const GraphSource& src, const std::vector<std::string>& npy_files, uint64_t seed) {
  const Graph& g = src.graph;
  RunInputs out;
  if (!npy_files.empty()) {
    BRAZE_CHECK(npy_files.size() == g.inputs().size(), "run: the graph has ", g.inputs().size(), " input(s) but ",
                npy_files.size(), " .npy file(s) were given");
    for (size_t k = 0; k < npy_files.size(); ++k) {
      Array a = read_npy(npy_files[k]);
      const Node& n = g[g.inputs()[k]];
      BRAZE_CHECK(a.dtype == n.dtype && a.shape == n.shape(), "run: ", npy_files[k], " is ", name(a.dtype),
                  to_string(a.shape), " but input ", k, " of the graph is ", name(n.dtype), to_string(n.shape()));
      out.arrays.push_back(std::move(a));
    }
    out.origin = ".npy files";
  } else if (!src.inputs.empty()) {
    out.arrays = src.inputs;
    out.origin = "saved with the graph";
  } else {
    for (size_t k = 0; k < g.inputs().size(); ++k) {
      const Node& n = g[g.inputs()[k]];
      out.arrays.push_back(random_array(n.dtype, n.shape(), seed + k));
    }
    out.origin = "random (seed " + std::to_string(seed) + ")";
  }
  return out;
}

}  // namespace braze::cli
