// The `braze` command line, as a function: main() is a thin wrapper over
// it, and the tests call it with their own streams.
#pragma once

#include <iosfwd>
#include <span>
#include <string>

namespace braze::cli {

// `args` without the program name ({"fuse", "g.json"}). Writes results to
// `out` and a one-line reason for a failure to `err`. Returns the exit
// code: 0 success, 1 bad input or a failed check, 2 bad usage.
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace braze::cli
