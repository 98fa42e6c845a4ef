// The headers generated CUDA source includes, compiled into braze and handed
// to NVRTC from memory, so compiling a kernel needs no file of the toolkit's
// or of braze's source tree at run time.
#pragma once

#include <span>
#include <string>

namespace braze::cuda {

struct EmbeddedHeader {
  const char* include_name;  // as generated code spells it: "braze/prelude.cuh"
  const char* text;
};

std::span<const EmbeddedHeader> device_headers();

// What host emulation adds to them (jit_cuda/emulated_kernels.h): the
// emulation header, force-included as "braze/host_emulation.h", and the
// float16/bfloat16 conversions it uses.
std::span<const EmbeddedHeader> emulation_headers();

// A hash (hex) of every embedded header's name and text: part of the disk
// cache key, so editing a header can never serve a stale cubin.
std::string device_headers_hash();

}  // namespace braze::cuda
