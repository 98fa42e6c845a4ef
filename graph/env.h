// Sizes read from the environment, validated (docs/environment.md).
#pragma once

#include <cstdint>

namespace braze {

// The largest size a *_MB variable takes: 1 TiB, more memory than any
// machine braze runs on has, so a larger value is a typo.
inline constexpr int64_t kMaxEnvMegabytes = int64_t{1} << 20;

// `variable` as a whole number of megabytes from 0 to kMaxEnvMegabytes,
// in bytes; `otherwise` (megabytes) when it is unset or empty. Anything
// else is a std::invalid_argument naming the variable and its value.
int64_t megabytes_from_env(const char* variable, int64_t otherwise);

}  // namespace braze
