// Running a shell command line from a test: its exit code, stdout and (when asked for) stderr. Also the
// digest GNU coreutils' `sha256sum` prints for a file, the oracle of the SHA-256 tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace gpstream::testing {

struct CommandRun {
  int code = -1;  // the exit code; -1 when the command did not exit (a signal) or could not start
  std::string out, err;
};

// Runs `command` with /bin/sh, reading its stdout. With an `err_path`, " 2>err_path" is appended to the line
// (so it redirects the last command of a `&&` chain) and the file is read back as err; without one, stderr
// goes where the test's goes, unless the line redirects it.
inline CommandRun run_command(const std::string& command, const std::string& err_path = "") {
  const std::string cmd = err_path.empty() ? command : command + " 2>" + err_path;
  CommandRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "", "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!err_path.empty()) {
    std::ifstream e(err_path);
    r.err.assign(std::istreambuf_iterator<char>(e), {});
  }
  return r;
}

// The hex digest `sha256sum` prints for the file at `path` (its first 64 characters of output).
inline std::string sha256sum_of(const std::string& path) {
  return run_command("sha256sum '" + path + "'").out.substr(0, 64);
}

}  // namespace gpstream::testing
