// Running the built gpstream binary from the CLI tests: one command line (shell redirections allowed) run in a
// folder, with its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace gpstream::testing {

inline const std::string kGpstreamBin = std::string(GPSTREAM_BINARY_DIR) + "/gpstream";

struct CommandRun {
  int code = -1;
  std::string out, err;
};

inline CommandRun run_gpstream(const std::string& dir, const std::string& args) {
  const std::string err_path = dir + "/stderr.txt";
  const std::string cmd = "cd " + dir + " && " + kGpstreamBin + " " + args + " 2>" + err_path;
  CommandRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "", "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

}  // namespace gpstream::testing
