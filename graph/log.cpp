#include "graph/log.h"

#include <cstdlib>
#include <iostream>
#include <mutex>

namespace braze {

LogLevel parse_log_level(std::string_view value) {
  if (value.empty() || value == "0" || value == "off") return LogLevel::Off;
  if (value == "info") return LogLevel::Info;
  if (value == "debug") return LogLevel::Debug;
  BRAZE_CHECK(false, "BRAZE_LOG='", value, "' is not a log level; expected info or debug (or unset for none)");
  return LogLevel::Off;
}

LogLevel log_level() {
  // A static initialiser that throws runs again on the next call, so every
  // call with a bad value keeps reporting it.
  static const LogLevel level = [] {
    const char* env = std::getenv("BRAZE_LOG");
    return parse_log_level(env ? env : "");
  }();
  return level;
}

void log_line(std::string_view message) {
  static std::mutex mu;
  std::string line = "braze: ";
  line += message;
  line += '\n';
  std::lock_guard<std::mutex> lock(mu);
  std::cerr << line << std::flush;
}

}  // namespace braze
