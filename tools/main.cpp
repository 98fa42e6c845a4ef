// The `braze` executable: everything is in run_cli (tools/cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return braze::cli::run_cli(args, std::cout, std::cerr);
}
