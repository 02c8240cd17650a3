// `gpstream serve` as a process, with the shipped model: SIGTERM drains (an open stream gets its last words,
// then close 1001, and the process exits 0), and running out of file descriptors (a lowered RLIMIT_NOFILE and
// more connections than it allows) neither spins the process nor stops it: connections past what it can
// accept wait, and once descriptors free up they and /health are answered. Skipped when the gpstream binary
// is not built.
#include "serve_process.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "../testing/temp_dir.h"
#include "serve_test_client.h"

namespace gpstream {
namespace {

using nlohmann::json;
using testing::eventually;
using testing::HttpReply;
using testing::kGpstream;
using testing::read_file;
using testing::ServeProcess;
using testing::source_words_metric;
using testing::word_count;
using testing::WsClient;
namespace http = testing::http;
namespace net = testing::net;
using tcp = testing::tcp;

// Every word complete (trailing space); the second sentence unfinished.
const std::string kText = "The cat sat on the mat. I would like a cup of ";

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
  // The log has its own writer thread: the line comes shortly after the answer.
  EXPECT_TRUE(eventually([&] { return read_file(log).find("\"accept_resumed\"") != std::string::npos; }, 30))
      << read_file(log);
  EXPECT_TRUE(serve.running());
  EXPECT_EQ(serve.signal_and_wait(SIGTERM), 0) << serve.err();
}

}  // namespace
}  // namespace gpstream
