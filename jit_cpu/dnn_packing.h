// Where a matmul's right operand is copied before the product (Note
// [Packed matmul weights] in dnn_packing.cpp). Internal to the oneDNN
// files (dnn_primitives.cpp).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>

#include "jit_cpu/dnn_call.h"

namespace braze::dnn {

// The layout to copy the right operand `b` of the matmul `c` (a @ b ->
// out, with `attr`) into before each product, or nullopt to read it
// where it is.
std::optional<dnnl::memory::desc> packed_layout(const Call& c, const dnnl::memory::desc& a,
                                                const dnnl::memory::desc& b, const dnnl::memory::desc& out,
                                                const dnnl::primitive_attr& attr, const dnnl::engine& engine);

}  // namespace braze::dnn
