// BRAZE_LOG=info|debug: one line on stderr per compile, cache hit or miss,
// and program (re)compile, for a person asking "why is this slow the first
// time" or "why did that recompile". Off by default.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "graph/check.h"

namespace braze {

// Info: what costs time (a kernel or program compiled, and why). Debug:
// also what does not (every cache hit).
enum class LogLevel : uint8_t { Off, Info, Debug };

// "", "info" or "debug"; anything else is an error listing those.
LogLevel parse_log_level(std::string_view value);

// BRAZE_LOG, read once. An invalid value throws std::invalid_argument the
// first time anything asks, so the mistake surfaces at the first op that
// logs rather than being ignored.
LogLevel log_level();

inline bool log_enabled(LogLevel level) { return level != LogLevel::Off && log_level() >= level; }

// Writes "braze: <message>" and a newline to stderr as one write, so lines
// from the thread pool or several threads never interleave.
void log_line(std::string_view message);

}  // namespace braze

// Builds the message only when the level is on.
#define BRAZE_LOG(level, ...)                                                  \
  do {                                                                         \
    if (::braze::log_enabled(::braze::LogLevel::level))                        \
      ::braze::log_line(::braze::detail::concat(__VA_ARGS__));                 \
  } while (0)
