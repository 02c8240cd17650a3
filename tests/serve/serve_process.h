// A `gpstream serve` process for the tests that need the real binary (signals, descriptor limits, several
// replicas behind a proxy): started on a free port with the shipped model, its stdout (the port it listens
// on) and stderr (the request log) in files, killed when the object goes. Plus small helpers those tests
// share.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "../testing/temp_dir.h"
#include "serve_test_client.h"

extern char** environ;

namespace gpstream::testing {

inline const std::string kGpstream = std::string(GPSTREAM_BINARY_DIR) + "/gpstream";
inline const std::string kModel = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline size_t word_count(const std::string& text) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

// Polls `done` every 20 ms for up to `seconds`.
template <typename Pred>
bool eventually(Pred done, int seconds = 30) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// `gpstream serve` on a free port, its stdout and stderr in files; with `max_files`, under `ulimit -n`.
class ServeProcess {
 public:
  ServeProcess(const TempDir& dir, const std::string& args, int max_files = 0,
               const std::string& name = "serve")
      : out_(dir.file(name + ".out")), err_(dir.file(name + ".err")) {
    std::string line = max_files ? "ulimit -n " + std::to_string(max_files) + " && " : "";
    line += "exec " + kGpstream + " serve -m " + kModel + " --port 0 " + args + " >" + out_ + " 2>" + err_;
    std::string sh = "/bin/sh", dash_c = "-c";
    char* argv[] = {sh.data(), dash_c.data(), line.data(), nullptr};
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv, environ) != 0) pid_ = -1;
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // The port it printed, or 0 when it exited or printed none within two minutes.
  int wait_for_port() {
    eventually([&] { return !read_file(out_).empty() || !running(); }, 120);
    const std::string out = read_file(out_);
    return out.empty() ? 0 : std::stoi(out);
  }
  bool running() { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  // Sends `sig` and waits for the exit: the exit status, or -1 when it did not exit normally.
  int signal_and_wait(int sig) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // User + system CPU seconds used so far (every thread), from /proc/PID/stat.
  double cpu_seconds() const {
    const std::string stat = read_file("/proc/" + std::to_string(pid_) + "/stat");
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string skip;
    for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt: fields 3 to 13
    long long utime = 0, stime = 0;
    fields >> utime >> stime;
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::string err() const { return read_file(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
};

// gpstream_source_words_total from GET /metrics.
inline int64_t source_words_metric(int port) {
  const HttpReply r = http_request(port, http::verb::get, "/metrics");
  const std::string name = "\ngpstream_source_words_total ";
  const size_t at = r.body.find(name);
  return at == std::string::npos ? -1 : std::stoll(r.body.substr(at + name.size()));
}

}  // namespace gpstream::testing
