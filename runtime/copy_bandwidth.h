// The streaming-copy probe of shared/bench/WORKLOADS.md, for the roofline
// ratios of `braze run` and bench/cpu_fused.py: what this machine's memory
// moves per second right now.
#pragma once

namespace braze {

// Bytes per second of a copy of 16M float32 (read 64 MB, write 64 MB),
// split across the CPU thread pool as a kernel's rows are; the best of a
// few runs after a warm-up. A kernel's roofline ratio is
// (its minimum bytes / this) / its time: 1.0 is the memory bandwidth.
double copy_bandwidth();

}  // namespace braze
