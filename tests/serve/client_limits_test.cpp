// How much each client may take and what it is told when it asks for too much: per-client quotas
// (serve/client_quota.h), the status of each error code (serve/error_status.h), and a real server on a
// loopback port refusing a client over its quota while another gets in, and answering malformed, oversized,
// too deeply nested and unservable requests with 400, 413, 422 and 429, never 500.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "serve/api_keys.h"
#include "serve/client_quota.h"
#include "serve/error_status.h"
#include "serve/server.h"
#include "serve_test_client.h"
#include "shipped_model_server.h"

namespace gpstream::serve {
namespace {

using gpstream::testing::cat;
using gpstream::testing::Headers;
using gpstream::testing::HttpReply;
using gpstream::testing::WsClient;
using nlohmann::json;
namespace http = gpstream::testing::http;
namespace net = gpstream::testing::net;
using tcp = gpstream::testing::tcp;

TEST(ClientQuota, EachClientHoldsAtMostItsSlots) {
  ClientQuota quota(2);
  ClientQuota::Lease a1 = quota.acquire("a"), a2 = quota.acquire("a");
  ASSERT_TRUE(a1 && a2);
  EXPECT_FALSE(quota.acquire("a"));
  EXPECT_EQ(quota.held("a"), 2);
  ClientQuota::Lease b1 = quota.acquire("b");
  EXPECT_TRUE(b1);  // another client is not affected
  ClientQuota::Lease copy = a1;
  a1.reset();
  EXPECT_EQ(quota.held("a"), 2);  // a copy still holds the slot
  copy.reset();
  EXPECT_EQ(quota.held("a"), 1);
  EXPECT_TRUE(quota.acquire("a"));  // returned at once when that lease goes too
  a2.reset();
  b1.reset();
  EXPECT_EQ(quota.held("a"), 0);
  EXPECT_EQ(quota.held("b"), 0);
}

TEST(ErrorStatus, EachErrorCodeHasItsStatus) {
  const std::pair<const char*, int> table[] = {
      {"bad_request", 400},  {"bad_message", 400},       {"bad_options", 400},   {"bad_segment", 400},
      {"unauthorized", 401}, {"forbidden_origin", 403},  {"not_found", 404},     {"too_large", 413},
      {"bad_host", 421},     {"sentence_too_long", 422}, {"word_too_long", 422}, {"quota", 429},
      {"busy", 503},         {"draining", 503},          {"shutdown", 503},      {"over_capacity", 503},
      {"engine_error", 500}, {"no_such_code", 500}};
  for (const auto& [code, status] : table) EXPECT_EQ(http_status_for_error(code), status) << code;
}

const std::string kAlpha = "alpha-key-0123456789";
const std::string kBravo = "bravo-key-0123456789";

// A WebSocket upgrade to /v1/stream sent from the loopback address `from` (any of 127.0.0.0/8 reaches a
// server on 127.0.0.1): the response's status (101: upgraded), the socket kept open in `keep`.
int handshake_from(const std::string& from, int port, std::vector<std::unique_ptr<tcp::socket>>& keep,
                   net::io_context& ioc) {
  auto socket = std::make_unique<tcp::socket>(ioc);
  socket->open(tcp::v4());
  socket->bind(tcp::endpoint(net::ip::make_address(from), 0));
  socket->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  gpstream::testing::set_read_timeout(*socket, 60);
  http::request<http::empty_body> req{http::verb::get, "/v1/stream", 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
  req.set(http::field::sec_websocket_version, "13");
  http::write(*socket, req);
  // Only the header: a 101 has no body, and the connection stays open.
  gpstream::testing::beast::flat_buffer buf;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);
  gpstream::testing::beast::error_code ec;
  http::read_header(*socket, buf, parser, ec);
  if (ec) return 0;
  keep.push_back(std::move(socket));
  return parser.get().result_int();
}

class ServeLimitsTest : public ShippedModelServerTest {
 protected:
  void start(ServerOptions o = {}, int max_cache_rows = 0) {
    stream::SessionOptions so = model_->default_options();
    so.max_target_tokens = 64;
    if (max_cache_rows) so.max_cache_rows = max_cache_rows;
    start_server(std::move(o), so);
  }
  HttpReply translate(const std::string& body, const Headers& headers = {}) const {
    return gpstream::testing::http_request_with(port_, http::verb::post, "/v1/translate", headers, body);
  }
  static void expect_error(const HttpReply& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body;
    ASSERT_EQ(r.content_type, "application/json") << r.body;
    const json body = json::parse(r.body);
    EXPECT_EQ(body["type"], "error");
    EXPECT_EQ(body["code"], code) << r.body;
  }
  bool eventually(const std::function<bool()>& ok) const {
    for (int i = 0; i < 200; ++i) {
      if (ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }
};

TEST_F(ServeLimitsTest, AClientOverItsQuotaIsRefusedAndOthersStillGetIn) {
  ServerOptions o;
  auto keys = ApiKeys::parse(cat(kAlpha, "\n", kBravo), "keys");
  ASSERT_TRUE(keys.ok());
  o.api_keys = std::make_shared<const ApiKeys>(std::move(*keys));
  o.max_sessions_per_client = 2;
  o.engine.max_sessions = 8;
  start(o);
  const Headers alpha = {{http::field::authorization, cat("Bearer ", kAlpha)}};
  const Headers bravo = {{http::field::authorization, cat("Bearer ", kBravo)}};
  auto first = std::make_unique<WsClient>(port_, 60, alpha);
  WsClient second(port_, 60, alpha);
  // Alpha holds its two: a third stream and a translate request are refused with 429, before any work.
  expect_error(gpstream::testing::websocket_handshake(port_, alpha), 429, "quota");
  expect_error(translate(R"({"text": "The cat sat on the mat."})", alpha), 429, "quota");
  EXPECT_EQ(server_->metrics().sessions_total.load(), 0);
  // Bravo is another client: it streams and translates.
  WsClient other(port_, 60, bravo);
  EXPECT_TRUE(other.send(R"({"type": "start"})"));
  auto ready = other.read_json();
  EXPECT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
  EXPECT_EQ(translate(R"({"text": "The cat sat on the mat."})", bravo).status, 200);
  // A slot comes back when its connection ends.
  first->abort();
  first.reset();
  EXPECT_TRUE(eventually([&] { return gpstream::testing::websocket_handshake(port_, alpha).status == 101; }));
}

// Every open stream's KV cache may grow to max_cache_rows per region: a stream opens only when all of them
// at their worst, the new one included, fit the memory budget; past it WebSocket streams get busy (1013)
// and translate requests 503, until a stream ends.
TEST_F(ServeLimitsTest, StreamsWhoseCachesWouldNotFitTheMemoryBudgetAreRefused) {
  constexpr int kCacheRows = 512;
  const model::ModelConfig& c = model_->model->config();
  // One stream's worst case from the config: rows × 2 regions × layers × KV width × (K, V) × 4 bytes.
  const uint64_t per_stream = static_cast<uint64_t>(kCacheRows) * 2 * static_cast<uint64_t>(c.n_layer) *
                              static_cast<uint64_t>(c.n_head_kv * c.head_dim) * 2 * 4;
  ServerOptions o;
  o.engine.memory_budget_bytes = 2 * per_stream + per_stream / 2;  // two streams fit, three do not
  start(o, kCacheRows);
  auto open_stream = [&](WsClient& client) {
    EXPECT_TRUE(client.send(R"({"type": "start"})"));
    return client.read_json();
  };
  auto first = std::make_unique<WsClient>(port_);
  WsClient second(port_);
  for (WsClient* client : {first.get(), &second}) {
    auto ready = open_stream(*client);
    ASSERT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
  }
  {
    WsClient third(port_);
    auto refused = open_stream(third);
    ASSERT_TRUE(refused) << "closed without an error event";
    EXPECT_EQ((*refused)["code"], "busy") << refused->dump();
    EXPECT_NE((*refused)["message"].get<std::string>().find("budget"), std::string::npos) << refused->dump();
    third.read_all();
    EXPECT_EQ(third.close_code(), 1013);
  }
  expect_error(translate(R"({"text": "The cat sat on the mat."})"), 503, "busy");
  EXPECT_GE(server_->metrics().sessions_rejected.load(), 2);
  // The budget comes back when a stream ends.
  first->abort();
  first.reset();
  EXPECT_TRUE(eventually([&] { return translate(R"({"text": "The cat sat on the mat."})").status == 200; }));
}

TEST_F(ServeLimitsTest, WithoutKeysAClientIsItsAddress) {
  ServerOptions o;
  o.max_sessions_per_client = 1;
  o.engine.max_sessions = 4;
  start(o);
  net::io_context ioc;
  std::vector<std::unique_ptr<tcp::socket>> open;
  EXPECT_EQ(handshake_from("127.0.0.1", port_, open, ioc), 101);
  EXPECT_EQ(handshake_from("127.0.0.1", port_, open, ioc), 429);
  EXPECT_EQ(handshake_from("127.0.0.2", port_, open, ioc), 101);
  EXPECT_EQ(handshake_from("127.0.0.2", port_, open, ioc), 429);
  const HttpReply health = gpstream::testing::http_request(port_, http::verb::get, "/health");
  EXPECT_EQ(json::parse(health.body)["max_sessions_per_client"], 1);
}

TEST_F(ServeLimitsTest, TranslateRequestsGetTheStatusOfTheirMistake) {
  ServerOptions o;
  o.max_body_bytes = 4000;
  o.engine.max_pending_bytes = 3000;
  // A cache of 1024 rows leaves a sentence 768 bytes of source (the engine keeps 256 for the prompt).
  start(o, 1024);
  expect_error(translate("{\"text\": "), 400, "bad_request");
  expect_error(translate(R"({"text": ["a"]})"), 400, "bad_request");
  expect_error(translate(R"({"text": "a", "k": "5"})"), 400, "bad_request");
  // The shipped model was trained for k from 1 to 9 (its gpstream.json).
  ASSERT_EQ(model_->meta.k_min, 1);
  ASSERT_EQ(model_->meta.k_max, 9);
  const HttpReply k10 = translate(R"({"text": "a", "k": 10})");
  expect_error(k10, 400, "bad_request");
  EXPECT_NE(k10.body.find("from 1 to 9"), std::string::npos) << k10.body;
  EXPECT_EQ(translate(R"({"text": "The cat.", "k": 9})").status, 200);
  expect_error(translate(json{{"text", std::string(5000, 'a')}}.dump()), 413, "too_large");
  const HttpReply long_word = translate(json{{"text", std::string(2000, 'x')}}.dump());
  expect_error(long_word, 422, "sentence_too_long");
}

TEST_F(ServeLimitsTest, StreamsRefuseAWaitKTheModelWasNotTrainedFor) {
  start();
  WsClient c(port_);
  EXPECT_TRUE(c.send(R"({"type": "start", "k": 12})"));
  auto error = c.read_json();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ((*error)["type"], "error");
  EXPECT_EQ((*error)["code"], "bad_options");
  EXPECT_EQ((*error)["message"], "'k': this model was trained for k from 1 to 9, got 12");
  c.read_all();
  EXPECT_EQ(c.close_code(), 1008);
}

TEST_F(ServeLimitsTest, DeeplyNestedJsonIsRefusedEverywhere) {
  ServerOptions o;
  o.max_message_bytes = 1 << 20;
  start(o);
  const std::string open(100000, '['), close(100000, ']');
  const std::string in_a_start = cat("{\"type\": \"start\", \"k\": ", open, close, "}");
  for (const std::string& nested : {cat(open, close), open, in_a_start}) {
    SCOPED_TRACE(nested.substr(nested.size() - 8));
    expect_error(translate(nested), 400, "bad_request");
    expect_error(gpstream::testing::http_request(port_, http::verb::put, "/input", nested), 400,
                 "bad_segment");
    WsClient c(port_);
    EXPECT_TRUE(c.send(nested));
    auto error = c.read_json();
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ((*error)["code"], "bad_message");
    c.read_all();
    EXPECT_EQ(c.close_code(), 1008);
  }
  const HttpReply deep = translate(cat(open, close));
  EXPECT_NE(json::parse(deep.body)["message"].get<std::string>().find("nested more than 32 levels"),
            std::string::npos)
      << deep.body;
  // The server still serves.
  EXPECT_EQ(translate(R"({"text": "The cat sat on the mat."})").status, 200);
}

}  // namespace
}  // namespace gpstream::serve
