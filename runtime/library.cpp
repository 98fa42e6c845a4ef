// The one source of libbraze.so (cmake/package.cmake), which is otherwise
// the libraries of graph/ .. runtime/ linked whole. Compiling the umbrella
// header on its own here checks that it includes all it needs, as a C++
// user's first #include does.
#include "runtime/braze.h"
