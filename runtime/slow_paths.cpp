#include "runtime/slow_paths.h"

#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>

#include "graph/check.h"
#include "graph/log.h"

namespace braze {

bool strict_mode() {
  // A static initialiser that throws runs again on the next call (as
  // log_level()): a bad value keeps being reported.
  static const bool strict = [] {
    const char* env = std::getenv("BRAZE_STRICT");
    std::string_view v = env ? env : "";
    BRAZE_CHECK(v.empty() || v == "0" || v == "1", "BRAZE_STRICT='", v,
                "' is not 0 or 1 (1: a slow path is an error, Note [No silent slow paths])");
    return v == "1";
  }();
  return strict;
}

void report_slow_path(const std::string& what_kind, const std::string& what, const std::string& why) {
  if (strict_mode())
    throw std::runtime_error(detail::concat(what, " would run on the reference interpreter, not generated code (",
                                            why, "); BRAZE_STRICT=1 refuses slow paths"));
  static std::mutex mu;
  static std::set<std::string>* said = new std::set<std::string>;  // never destroyed: programs prepare at exit too
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said->insert(what_kind).second) return;
  }
  log_line(detail::concat("warning: ", what, " runs on the reference interpreter, not generated code (", why,
                          "); said once per kind; BRAZE_STRICT=1 makes it an error"));
}

}  // namespace braze
