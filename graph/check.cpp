#include "graph/check.h"

namespace braze::detail {

void throw_internal(const char* file, int line, const char* cond,
                    const std::string& msg) {
  throw std::logic_error(concat("braze internal error at ", file, ":", line,
                                ": ", cond, " failed: ", msg,
                                " (this is a bug in braze; please report it)"));
}

}  // namespace braze::detail
