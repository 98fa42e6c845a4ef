// The CUDA texts of a kernel, as BRAZE_DUMP=cuda,ptx writes them and
// `braze kernels --target cuda --emit cuda|ptx` prints them (Note [CUDA
// dump texts]). Built over jit_cuda where it exists (dump_cuda.cpp); a build
// without the CUDA headers links dump_no_cuda.cpp, whose functions say so.
#pragma once

#include <string>

#include "fusion/kernel_spec.h"

namespace braze {

// Note [CUDA dump texts]
// One function makes each text, and both the dumper and the CLI call it, so
// a dump file is byte for byte the CLI's text for that kernel:
//   cuda: "// kernel <name>: <shape>, <threads> threads per block, <work>
//          row(s)|work item(s)" and then jit_cuda's render_cuda source; the
//          first line is a comment, so the file is still CUDA C++.
//   ptx:  the same first line with "; PTX for sm_XX by NVRTC <version>",
//         then NVRTC's PTX for that architecture (a "//" line is a PTX
//         comment too). No compile time: the text is deterministic.
// The architecture, when not given (`braze kernels` without --arch, dumps
// without BRAZE_DUMP_ARCH), is default_cuda_arch(): the first GPU's, when
// the driver finds one that braze can target, else kDefaultCudaArch. Dumps
// are written while the program runs on the CPU too, so a machine with no
// GPU dumps what an sm_90 GPU would run.
inline constexpr int kDefaultCudaArch = 90;

// Whether this build has the CUDA backend (jit_cuda) to render CUDA with.
bool cuda_backend_built();

// The first line of each text, without its newline: "// kernel ...".
std::string cuda_kernel_line(const KernelSpec& spec);
std::string cuda_dump_text(const KernelSpec& spec);
// Throws CudaUnavailable without NVRTC, CudaError when NVRTC fails.
std::string ptx_dump_text(const KernelSpec& spec, int arch);

// The first GPU's architecture (90 for sm_90) when a driver finds a GPU
// that this NVRTC can target at sm_80 or later; else kDefaultCudaArch.
int default_cuda_arch();

// What BRAZE_DUMP=cuda,ptx needs, checked when the dump options are read:
// throws a one-line error naming what is missing (the CUDA backend, or
// libnvrtc and its variable for `ptx`), and returns the PTX architecture:
// BRAZE_DUMP_ARCH (sm_XX, checked like --arch) if set, else
// default_cuda_arch(). Returns 0 when `ptx` is false.
int check_cuda_dumps(bool cuda, bool ptx);

}  // namespace braze
