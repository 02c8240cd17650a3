// `gpstream version`: prints the version.
#include <cstdio>

#include "cli/command.h"

namespace {
int run_version(int, char**) {
  std::printf("gpstream 0.1.0\n");
  return 0;
}
}  // namespace

GPSTREAM_COMMAND("version", "print the version", run_version);
