// Heap bytes in use, malloc's small and mapped blocks together (glibc's
// mallinfo2): what the byte estimates of the bounded caches are checked
// against (Note [Bounded caches] in runtime/program.h). Single-threaded
// tests only: other threads' allocations count too.
#pragma once

#include <malloc.h>

#include <cstddef>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizer runtime's (GCC ships no header for it).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace braze::testing {

inline int64_t heap_bytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizer's allocator replaces malloc, and its mallinfo2 is all
  // zeros (scripts/sanitize.sh: both estimate tests failed on a heap of 0).
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#endif
}

}  // namespace braze::testing
