#include "graph/env.h"

#include <cerrno>
#include <cstdlib>

#include "graph/check.h"

namespace braze {

int64_t megabytes_from_env(const char* variable, int64_t otherwise) {
  const char* env = std::getenv(variable);
  if (!env || !*env) return otherwise << 20;
  char* end = nullptr;
  errno = 0;
  long long mb = std::strtoll(env, &end, 10);
  // strtoll skips leading blanks and takes a sign: a size is digits only.
  bool digits = *env >= '0' && *env <= '9';
  BRAZE_CHECK(digits && errno == 0 && end && *end == '\0' && mb <= kMaxEnvMegabytes, variable, "='", env,
              "' is not a size; expected a whole number of megabytes from 0 to ", kMaxEnvMegabytes);
  return static_cast<int64_t>(mb) << 20;
}

}  // namespace braze
