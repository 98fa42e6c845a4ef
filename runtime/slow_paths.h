// Note [No silent slow paths]
// Generated code and the libraries are braze's fast paths. A few things
// still run on the reference interpreter: a library call no library here
// takes (a float16 matmul or conv2d on the CPU, a float64 matmul
// without OpenBLAS) and a fused kernel the generator cannot emit (inputs
// read with strides past 32 bits). They give the right answer, 10-1000x
// slower, and a user who does not know it blames their program. So each is
// said once per process, on stderr, the first time a program that has it
// is prepared, naming the op, its dtype and why; BRAZE_STRICT=1 makes it a
// RuntimeError at realize instead, for CI jobs and benchmarks that must
// know. The counters (library_calls_reference, kernels_interpreted) say
// how often it ran.
#pragma once

#include <string>

namespace braze {

// BRAZE_STRICT, read once: "" or "0" off, "1" on; anything else is a
// std::invalid_argument naming the variable.
bool strict_mode();

// `what` (the op, its dtype and shapes) runs on the reference interpreter
// because `why`. Strict: throws std::runtime_error. Otherwise writes one
// warning line the first time this `what_kind` (the op and dtype, no
// shapes: one line per kind, not per shape) is seen in this process.
void report_slow_path(const std::string& what_kind, const std::string& what, const std::string& why);

}  // namespace braze
