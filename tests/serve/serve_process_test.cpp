// `gpstream serve` as a process, with the shipped model: SIGTERM drains (an open stream gets its last words,
// then close 1001, and the process exits 0), and running out of file descriptors (a lowered RLIMIT_NOFILE and
// more connections than it allows) neither spins the process nor stops it: connections past what it can
// accept wait, and once descriptors free up they and /health are answered. Skipped when the gpstream binary
// is not built.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../testing/temp_dir.h"
#include "serve_test_client.h"

extern char** environ;

namespace gpstream {
namespace {

using testing::HttpReply;
using testing::WsClient;
using nlohmann::json;
namespace http = testing::http;
namespace net = testing::net;
using tcp = testing::tcp;

const std::string kGpstream = std::string(GPSTREAM_BINARY_DIR) + "/gpstream";
const std::string kModel = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";
// Every word complete (trailing space); the second sentence unfinished.
const std::string kText = "The cat sat on the mat. I would like a cup of ";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t word_count(const std::string& text) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

template <typename Pred>
bool eventually(Pred done, int seconds) {
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
  ServeProcess(const testing::TempDir& dir, const std::string& args, int max_files = 0)
      : out_(dir.file("serve.out")), err_(dir.file("serve.err")) {
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
int64_t source_words_metric(int port) {
  const HttpReply r = testing::http_request(port, http::verb::get, "/metrics");
  const std::string name = "\ngpstream_source_words_total ";
  const size_t at = r.body.find(name);
  return at == std::string::npos ? -1 : std::stoll(r.body.substr(at + name.size()));
}

TEST(ServeProcessTest, SigtermDrainsOpenStreamsThenExitsZero) {
  if (!std::filesystem::exists(kGpstream)) GTEST_SKIP() << "gpstream is not built";
  testing::TempDir dir;
  ServeProcess serve(dir, "--drain-seconds 60");
  const int port = serve.wait_for_port();
  ASSERT_GT(port, 0) << serve.err();

  // The oracle: the same text with "end", on the same server.
  std::vector<std::string> want;
  {
    WsClient c(port);
    c.send(R"({"type": "start"})");
    c.send(json{{"type", "source"}, {"text", kText}}.dump());
    c.send(R"({"type": "end"})");
    for (const json& m : c.read_all())
      if (m["type"] == "word") want.push_back(m["word"]);
    ASSERT_EQ(c.close_code(), 1000);
  }
  ASSERT_FALSE(want.empty());

  WsClient c(port);
  ASSERT_TRUE(c.send(R"({"type": "start"})"));
  ASSERT_EQ((*c.read_json())["type"], "ready");
  ASSERT_TRUE(c.send(json{{"type", "source"}, {"text", kText}}.dump()));
  const int64_t all_words = 2 * static_cast<int64_t>(word_count(kText));
  ASSERT_TRUE(eventually([&] { return source_words_metric(port) == all_words; }, 60));

  std::thread terminate([&] { EXPECT_EQ(serve.signal_and_wait(SIGTERM), 0) << serve.err(); });
  std::vector<std::string> got;
  std::string last_type;
  for (const json& m : c.read_all()) {
    if (m["type"] == "word") got.push_back(m["word"]);
    last_type = m["type"];
  }
  terminate.join();
  EXPECT_EQ(got, want);
  EXPECT_EQ(last_type, "finished");
  EXPECT_EQ(c.close_code(), 1001);
  // The request log (stderr by default) has the stream's close line.
  bool logged_close = false;
  std::istringstream err(serve.err());
  for (std::string line; std::getline(err, line);) {
    if (line.empty() || line[0] != '{') continue;
    const json j = json::parse(line);
    if (j["event"] == "close" && j.value("outcome", "") == "draining") logged_close = j["close_code"] == 1001;
  }
  EXPECT_TRUE(logged_close) << serve.err();
}

TEST(ServeProcessTest, RunningOutOfDescriptorsNeitherSpinsNorStopsTheServer) {
  if (!std::filesystem::exists(kGpstream)) GTEST_SKIP() << "gpstream is not built";
  testing::TempDir dir;
  const std::string log = dir.file("requests.log");
  // 64 descriptors, and a connection limit above them: accept() itself runs out.
  ServeProcess serve(dir, "--max-connections 1000 --log-file " + log, /*max_files=*/64);
  const int port = serve.wait_for_port();
  ASSERT_GT(port, 0) << serve.err();

  net::io_context ioc;
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 80; ++i) idle.push_back(testing::connect_loopback(ioc, port));
  ASSERT_TRUE(eventually([&] { return read_file(log).find("\"accept_paused\"") != std::string::npos; }, 60))
      << read_file(log);

  // One more connection asks for /health: it waits (no answer while descriptors are out).
  tcp::socket waiting = testing::connect_loopback(ioc, port);
  http::request<http::empty_body> req{http::verb::get, "/health", 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(waiting, req);
  pollfd readable{waiting.native_handle(), POLLIN, 0};
  EXPECT_EQ(poll(&readable, 1, 1000), 0) << "answered while out of descriptors";

  // No busy loop: a spinning accept() would burn about a second of CPU per second.
  const double cpu_before = serve.cpu_seconds();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double cpu_used = serve.cpu_seconds() - cpu_before;
  EXPECT_LT(cpu_used, 0.5) << "CPU seconds in 2 s of wall time while out of descriptors";

  idle.clear();  // descriptors free up
  const HttpReply waited = testing::read_reply(waiting);
  EXPECT_EQ(waited.status, 200) << read_file(log);
  EXPECT_EQ(testing::http_request(port, http::verb::get, "/health").status, 200);
  EXPECT_NE(read_file(log).find("\"accept_resumed\""), std::string::npos);
  EXPECT_TRUE(serve.running());
  EXPECT_EQ(serve.signal_and_wait(SIGTERM), 0) << serve.err();
}

}  // namespace
}  // namespace gpstream
