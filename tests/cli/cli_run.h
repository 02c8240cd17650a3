// Running the built gpstream binary from the CLI tests: one command line (shell redirections allowed) run in
// a folder, with its exit code, stdout and stderr (the runner itself: tests/testing/run_command.h).
#pragma once

#include <string>

#include "../testing/run_command.h"

namespace gpstream::testing {

inline const std::string kGpstreamBin = std::string(GPSTREAM_BINARY_DIR) + "/gpstream";

inline CommandRun run_gpstream(const std::string& dir, const std::string& args) {
  return run_command("cd " + dir + " && " + kGpstreamBin + " " + args, dir + "/stderr.txt");
}

}  // namespace gpstream::testing
