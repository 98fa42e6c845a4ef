// How the CLI tests call `braze`: run_cli() (tools/cli.h) on an argument
// list, with stdout, stderr and the exit code captured.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace braze::testing {

struct CliResult {
  int code;
  std::string out, err;
};

inline CliResult cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = cli::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// Bad input is reported as exactly one line.
inline bool one_line(const std::string& s) {
  return !s.empty() && s.back() == '\n' && std::count(s.begin(), s.end(), '\n') == 1;
}

}  // namespace braze::testing
