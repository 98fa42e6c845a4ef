// SASS, the GPU's machine code, for `braze kernels --target cuda --emit
// sass`: the cubin NVRTC made, disassembled by the CUDA toolkit's own tool.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace braze::cli {

// Note [SASS through a subprocess]
// NVIDIA documents no library that disassembles SASS, so braze runs the
// toolkit's disassembler where one is installed (the issue's "where the
// toolkit's disassembler is installed"): nvdisasm (made for a lone cubin),
// else cuobjdump. Each directory is tried in order, nvdisasm before
// cuobjdump in each: $PATH's, then $CUDA_HOME/bin, $CUDA_PATH/bin,
// /usr/local/cuda/bin and /usr/local/cuda-*/bin (newest name first). The
// cubin goes to a temporary file (both tools read files only), the tool's
// stdout and stderr come back through one pipe, and the text is tidied
// (trailing spaces and runs of blank lines dropped) but not rewritten.
// No tool found, or one that fails, is a one-line error.
struct CudaDisassembler {
  std::string path;  // the executable
  std::vector<std::string> args;  // before the cubin's path: {"-c"} or {"-sass"}
};

// The directories looked in, in order.
std::vector<std::string> cuda_disassembler_dirs();
std::optional<CudaDisassembler> find_cuda_disassembler();
// Throws when none is found: the one-line error naming what was looked for.
CudaDisassembler require_cuda_disassembler();

// The tool's SASS for `cubin`, tidied. Throws with the tool's first line of
// output when it fails.
std::string disassemble_cubin(const CudaDisassembler& tool, std::span<const std::byte> cubin);

// Trailing whitespace off every line, runs of blank lines down to one, no
// blank lines at either end, a final newline.
std::string tidy_disassembly(const std::string& text);

}  // namespace braze::cli
