// Heap bytes in use, malloc's small and mapped blocks together (glibc's
// mallinfo2): what the byte estimates of the bounded caches are checked
// against (Note [Bounded caches] in runtime/program.h). Single-threaded
// tests only: other threads' allocations count too.
#pragma once

#include <malloc.h>

#include <cstdint>

namespace braze::testing {

inline int64_t heap_bytes() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

}  // namespace braze::testing
