// Reading NumPy .npy files (format versions 1-3), for `braze run --inputs`.
// No Debian package offers a C++ .npy reader, and the format is small and
// documented (numpy.lib.format): a magic string, a version, a Python dict
// literal header {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)},
// then the raw elements in C order.
#pragma once

#include <string>
#include <string_view>

#include "graph/array.h"

namespace braze::cli {

// Little-endian (or byte-wide) bool, uint8, int8, uint16, int16, uint32,
// int32, int64, float16, float32, float64 in C order. Throws std::invalid_argument naming the file
// and what is wrong (not .npy, truncated, Fortran order, an unsupported
// dtype).
Array read_npy(const std::string& path);
Array parse_npy(std::string_view bytes, const std::string& name);

}  // namespace braze::cli
