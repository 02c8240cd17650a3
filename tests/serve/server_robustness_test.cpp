// The server under pressure, in-process with the shipped model: the connection limit (connections past it get
// 503 with Retry-After and are closed; the server answers again once one closes), the request log (one JSON
// line per request and stream, with counts checked against what the test sent and received, and no text
// unless asked for), and a graceful drain (open streams are translated to the end of what they were sent,
// as if they had sent "end", then closed with 1001; new work gets 503 "draining").
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "../testing/temp_dir.h"
#include "serve/connection_limit.h"
#include "serve/request_log.h"
#include "serve/server.h"
#include "serve_process.h"
#include "serve_test_client.h"
#include "shipped_model_server.h"

namespace gpstream::serve {
namespace {

using gpstream::testing::HttpReply;
using gpstream::testing::WsClient;
using nlohmann::json;
namespace http = gpstream::testing::http;
namespace net = gpstream::testing::net;
using tcp = gpstream::testing::tcp;

using gpstream::testing::eventually;
using gpstream::testing::read_file;
using gpstream::testing::word_count;

std::vector<json> read_log_lines(const std::string& path) {
  std::vector<json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

struct StreamResult {
  uint64_t session = 0;
  std::vector<std::string> words;
  std::string last_type;  // the type of the last message
  int close_code = 0;
};

// A stream that sends `text` in one source message, then "end".
StreamResult stream_words(int port, const std::string& text) {
  StreamResult r;
  WsClient c(port);
  EXPECT_TRUE(c.send(R"({"type": "start"})"));
  auto ready = c.read_json();
  EXPECT_TRUE(ready && (*ready)["type"] == "ready");
  if (ready) r.session = (*ready)["session"].get<uint64_t>();
  EXPECT_TRUE(c.send(json{{"type", "source"}, {"text", text}}.dump()));
  EXPECT_TRUE(c.send(R"({"type": "end"})"));
  for (const json& m : c.read_all()) {
    if (m["type"] == "word") r.words.push_back(m["word"]);
    r.last_type = m["type"];
  }
  r.close_code = c.close_code();
  return r;
}

class RobustnessTest : public ShippedModelServerTest {
 protected:
  static stream::SessionOptions defaults() {
    stream::SessionOptions so = model_->default_options();
    so.max_target_tokens = 256;
    return so;
  }
  void start(ServerOptions o = {}) { start_server(std::move(o), defaults()); }
};

// The text every stream here sends: two sentences, the second unfinished, every word complete (a trailing
// space).
const std::string kText = "The cat sat on the mat. I would like a cup of ";

TEST(ConnectionLimitDefault, StaysBelowTheDescriptorLimit) {
  // min(512, limit − 32 reserved − 16 refusals), at least 1: worked out by hand from the documented rule.
  EXPECT_EQ(max_connections_for_descriptor_limit(1024), 512);
  EXPECT_EQ(max_connections_for_descriptor_limit(560), 512);
  EXPECT_EQ(max_connections_for_descriptor_limit(559), 511);
  EXPECT_EQ(max_connections_for_descriptor_limit(100), 52);
  EXPECT_EQ(max_connections_for_descriptor_limit(48), 1);
  EXPECT_EQ(max_connections_for_descriptor_limit(20), 1);
  EXPECT_EQ(max_connections_for_descriptor_limit(-1), 512);  // unlimited
  EXPECT_GE(default_max_connections(), 1);
  EXPECT_LE(default_max_connections(), 512);
}

// A log whose destination blocks (a pipe nobody reads) never blocks the threads that log: what does not fit
// is dropped, and every line is accounted for, written (in order) or counted in a log_dropped line.
TEST(RequestLogTest, ABlockedDestinationNeverBlocksTheLoggersAndDropsAreCounted) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  auto log = RequestLog::open_file("/dev/fd/" + std::to_string(fds[1]), /*log_text=*/false);
  ASSERT_TRUE(log.ok()) << log.error().message();
  // More than the pipe (64 KiB), the batch being written and the queue can hold together.
  constexpr int kLines = 2 * static_cast<int>(kMaxQueuedLogLines) + 4000;
  std::atomic<bool> logged{false};
  std::thread logger([&] {
    for (int i = 0; i < kLines; ++i) (*log)->write("request", {{"i", i}, {"pad", std::string(100, 'x')}});
    logged = true;
  });
  const bool finished = eventually([&] { return logged.load(); }, 120);
  std::string all;
  std::thread reader([&] {
    char buf[1 << 16];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
  });
  logger.join();
  EXPECT_TRUE(finished) << "logging blocked on the destination";
  close(fds[1]);
  log->reset();  // writes what is queued, closes its end: the reader sees the end of the pipe
  reader.join();
  close(fds[0]);
  int64_t written = 0, dropped = 0, last = -1;
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line);
    if (j["event"] == "log_dropped") {
      dropped += j["lines"].get<int64_t>();
    } else {
      ASSERT_EQ(j["event"], "request");
      EXPECT_GT(j["i"].get<int64_t>(), last);
      last = j["i"];
      ++written;
    }
  }
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(written + dropped, kLines);
}

TEST_F(RobustnessTest, ConnectionsPastTheLimitGet503AndTheServerAnswersOnceOneCloses) {
  ServerOptions o;
  o.max_connections = 3;
  start(o);
  EXPECT_EQ(server_->max_connections(), 3);
  net::io_context ioc;
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(gpstream::testing::connect_loopback(ioc, port_));
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 3; }));

  // The fourth connection is answered at once, without sending a request, and closed.
  tcp::socket extra = gpstream::testing::connect_loopback(ioc, port_);
  HttpReply refused = gpstream::testing::read_reply(extra);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.headers[http::field::retry_after], "1");
  EXPECT_EQ(json::parse(refused.body)["code"], "over_capacity");
  char byte = 0;
  gpstream::testing::beast::error_code ec;
  extra.read_some(net::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, net::error::eof);
  EXPECT_EQ(server_->metrics().connections_refused, 1);
  // A request on a refused connection is not served either.
  EXPECT_EQ(gpstream::testing::http_request(port_, http::verb::get, "/health").status, 503);

  idle.pop_back();  // one closes: its place is free again
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 2; }));
  HttpReply health = gpstream::testing::http_request(port_, http::verb::get, "/health");
  ASSERT_EQ(health.status, 200);
  const json h = json::parse(health.body);
  EXPECT_EQ(h["max_connections"], 3);
  EXPECT_EQ(h["connections"], 3);  // the two idle ones and the one asking
}

TEST_F(RobustnessTest, RequestLogHasOneParseableLinePerEventAndNoTextByDefault) {
  gpstream::testing::TempDir dir;
  const std::string path = dir.file("requests.log");
  auto log = RequestLog::open_file(path, /*log_text=*/false);
  ASSERT_TRUE(log.ok()) << log.error().message();
  ServerOptions o;
  o.request_log = *log;
  start(o);

  const std::string body = json{{"text", "Where is the train station?"}}.dump();
  HttpReply translated = gpstream::testing::http_request(port_, http::verb::post, "/v1/translate", body);
  ASSERT_EQ(translated.status, 200);
  const std::string translation = json::parse(translated.body)["translation"];
  const StreamResult stream = stream_words(port_, kText);
  ASSERT_EQ(stream.last_type, "finished");
  ASSERT_FALSE(stream.words.empty());

  json request, open, close;
  ASSERT_TRUE(eventually([&] {
    for (const json& line : read_log_lines(path)) {
      if (line["event"] == "request" && line.value("path", "") == "/v1/translate") request = line;
      if (line["event"] == "open") open = line;
      if (line["event"] == "close" && line.contains("stream")) close = line;
    }
    return !request.is_null() && !open.is_null() && !close.is_null();
  })) << read_file(path);

  const std::regex iso8601(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  for (const json* line : {&request, &open, &close}) {
    EXPECT_TRUE(std::regex_match(line->at("time").get<std::string>(), iso8601)) << *line;
    EXPECT_TRUE(line->at("client").get<std::string>().starts_with("127.0.0.1:")) << *line;
    EXPECT_GT(line->at("connection").get<uint64_t>(), 0u) << *line;
  }
  EXPECT_EQ(request["method"], "POST");
  EXPECT_EQ(request["status"], 200);
  EXPECT_EQ(request["bytes_in"], body.size());
  EXPECT_GT(request["bytes_out"].get<size_t>(), translated.body.size());  // headers too
  EXPECT_GE(request["duration_ms"].get<double>(), 0.0);

  EXPECT_EQ(open["stream"], stream.session);
  EXPECT_EQ(open["input"], "text");
  EXPECT_EQ(close["stream"], stream.session);
  EXPECT_EQ(close["connection"], open["connection"]);
  EXPECT_EQ(close["outcome"], "finished");
  EXPECT_EQ(close["close_code"], 1000);
  EXPECT_EQ(close["source_words"], word_count(kText));
  EXPECT_EQ(close["target_words"], stream.words.size());
  EXPECT_GT(close["bytes_in"].get<size_t>(), kText.size());
  EXPECT_GE(close["duration_ms"].get<double>(), 0.0);

  // No text: neither what was sent nor what came back, and no text fields.
  const std::string all = read_file(path);
  EXPECT_EQ(all.find("train station"), std::string::npos);
  EXPECT_EQ(all.find("cat sat"), std::string::npos);
  EXPECT_EQ(all.find(json(translation).dump()), std::string::npos);
  for (const json& line : read_log_lines(path)) {
    EXPECT_FALSE(line.contains("text")) << line;
    EXPECT_FALSE(line.contains("translation")) << line;
  }
}

TEST_F(RobustnessTest, LogTextPutsTheTextInTheLog) {
  gpstream::testing::TempDir dir;
  const std::string path = dir.file("requests.log");
  auto log = RequestLog::open_file(path, /*log_text=*/true);
  ASSERT_TRUE(log.ok()) << log.error().message();
  ServerOptions o;
  o.request_log = *log;
  start(o);
  const StreamResult stream = stream_words(port_, kText);
  ASSERT_EQ(stream.last_type, "finished");
  json close;
  ASSERT_TRUE(eventually([&] {
    for (const json& line : read_log_lines(path))
      if (line["event"] == "close" && line.contains("stream")) close = line;
    return !close.is_null();
  })) << read_file(path);
  EXPECT_EQ(close["text"], kText);
  std::string joined;
  for (const std::string& w : stream.words) joined += (joined.empty() ? "" : " ") + w;
  EXPECT_EQ(close["translation"], joined);
}

TEST_F(RobustnessTest, DrainFinishesOpenStreamsThenClosesThemGoingAway) {
  start();
  // The oracle: the same text with "end", on the same server, before the drain.
  const StreamResult want = stream_words(port_, kText);
  ASSERT_EQ(want.last_type, "finished");
  ASSERT_EQ(want.close_code, 1000);

  WsClient waiting(port_);  // connected, never started: closed at once by the drain
  WsClient c(port_);
  ASSERT_TRUE(c.send(R"({"type": "start"})"));
  ASSERT_EQ((*c.read_json())["type"], "ready");
  const int64_t words_before = server_->metrics().source_words;
  ASSERT_TRUE(c.send(json{{"type", "source"}, {"text", kText}}.dump()));
  // Every word has reached the engine before the drain starts (else the drain's end could overtake them).
  ASSERT_TRUE(eventually([&] {
    return server_->metrics().source_words == words_before + static_cast<int64_t>(word_count(kText));
  }));

  bool drained = false;
  std::thread drainer([&] { drained = server_->drain(std::chrono::seconds(60)); });
  std::vector<std::string> words;
  std::string last_type;
  for (const json& m : c.read_all()) {
    if (m["type"] == "word") words.push_back(m["word"]);
    last_type = m["type"];
  }
  EXPECT_EQ(words, want.words);
  EXPECT_EQ(last_type, "finished");
  EXPECT_EQ(c.close_code(), 1001);

  auto refused = waiting.read_json();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ((*refused)["code"], "draining");
  EXPECT_FALSE(waiting.read().has_value());
  EXPECT_EQ(waiting.close_code(), 1001);

  // New work is refused while draining.
  HttpReply health = gpstream::testing::http_request(port_, http::verb::get, "/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(json::parse(health.body)["code"], "draining");
  EXPECT_EQ(gpstream::testing::websocket_handshake(port_, {}).status, 503);
  drainer.join();
  EXPECT_TRUE(drained);
  server_->stop();
}

}  // namespace
}  // namespace gpstream::serve
