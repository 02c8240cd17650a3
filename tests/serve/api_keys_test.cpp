// API keys (serve/api_keys.h): the key file's format and bounds, matching, where a request presents its key
// and the listening-address rule; then a real server with keys on a loopback port, talked to without a key,
// with a wrong one, with one in each place a client may put it, on every kind of endpoint. A refusal comes
// before any work: no session is opened.
#include "serve/api_keys.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

const std::string kAlpha = "alpha-key-0123456789";
const std::string kBravo = "bravo_key.0123456789~";

std::string parse_error(const std::string& text) {
  auto keys = ApiKeys::parse(text, "keys.txt");
  return keys ? std::string("(accepted)") : keys.error().message();
}

TEST(ApiKeys, FileHoldsOneKeyPerLineWithComments) {
  auto keys = ApiKeys::parse(cat("# production\n\n  ", kAlpha, "  \r\n#", kBravo, "\n", kBravo), "keys.txt");
  ASSERT_TRUE(keys.ok()) << keys.error().message();
  EXPECT_EQ(keys->size(), 2u);
  EXPECT_EQ(keys->match(kAlpha), std::optional<size_t>(0));
  EXPECT_EQ(keys->match(kBravo), std::optional<size_t>(1));
}

TEST(ApiKeys, BadFilesAreRefusedNamingTheLine) {
  EXPECT_EQ(parse_error("\n# only comments\n"), "keys.txt: no keys (one key per line; '#' starts a comment)");
  EXPECT_EQ(parse_error(cat(kAlpha, "\nshort\n")),
            "keys.txt:2: a key must be 16 to 256 characters long, this one has 5");
  EXPECT_EQ(parse_error(std::string(257, 'a')),
            "keys.txt:1: a key must be 16 to 256 characters long, this one has 257");
  EXPECT_EQ(parse_error("\n\nkey with spaces inside"),
            "keys.txt:3: a key may hold only the characters A-Z a-z 0-9 - . _ ~ (one key per line)");
  EXPECT_EQ(parse_error("key=0123456789abcdef"),
            "keys.txt:1: a key may hold only the characters A-Z a-z 0-9 - . _ ~ (one key per line)");
  EXPECT_EQ(parse_error(cat(kAlpha, "\n", kAlpha)), "keys.txt:2: this key is already on an earlier line");
  std::string many;
  for (size_t i = 0; i <= kMaxApiKeys; ++i) many.append(cat("key-", std::to_string(1000000000000 + i), "\n"));
  EXPECT_EQ(parse_error(many), cat("keys.txt:", std::to_string(kMaxApiKeys + 1), ": more than ",
                                   std::to_string(kMaxApiKeys), " keys"));
  EXPECT_EQ(parse_error(std::string(kMaxApiKeyFileBytes + 1, '#')), "keys.txt: over 1048576 bytes");
}

TEST(ApiKeys, LoadReadsRegularFilesOnly) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpstream_api_keys_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "keys.txt").string();
  std::ofstream(path) << kAlpha << "\n";
  auto keys = ApiKeys::load(path);
  ASSERT_TRUE(keys.ok()) << keys.error().message();
  EXPECT_TRUE(keys->match(kAlpha).has_value());
  auto folder = ApiKeys::load(dir.string());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.error().message().find(dir.string()), std::string::npos) << folder.error().message();
  EXPECT_FALSE(ApiKeys::load((dir / "missing.txt").string()).ok());
  std::filesystem::remove_all(dir);
}

TEST(ApiKeys, OnlyTheWholeKeyMatches) {
  auto keys = ApiKeys::parse(cat(kAlpha, "\n", kBravo), "keys");
  ASSERT_TRUE(keys.ok());
  std::string last_differs = kAlpha;
  last_differs.back() = '8';
  for (const std::string& wrong :
       {std::string(), kAlpha.substr(0, kAlpha.size() - 1), cat(kAlpha, "0"), last_differs,
        std::string("Alpha-key-0123456789"), cat(kAlpha, std::string(kMaxApiKeyLength, 'x')),
        std::string(kMaxApiKeyLength + 1, 'a')}) {
    EXPECT_FALSE(keys->match(wrong).has_value()) << wrong;
  }
  // A key of the longest length, and a presented value that is that key followed by more.
  const std::string longest(kMaxApiKeyLength, 'z');
  auto long_keys = ApiKeys::parse(longest, "keys");
  ASSERT_TRUE(long_keys.ok());
  EXPECT_TRUE(long_keys->match(longest).has_value());
  EXPECT_FALSE(long_keys->match(cat(longest, "z")).has_value());
}

TEST(ApiKeys, RequestsPresentAKeyInAuthorizationOrTheQuery) {
  using K = std::optional<std::string>;
  EXPECT_EQ(presented_api_key("Bearer abc", "/v1/translate"), K("abc"));
  EXPECT_EQ(presented_api_key("bearer   abc ", "/"), K("abc"));
  // The header wins, even with another scheme.
  EXPECT_EQ(presented_api_key("Basic YWxhZGRpbjpvcGVu", "/v1/stream?key=abc"), std::nullopt);
  EXPECT_EQ(presented_api_key("Bearer", "/"), std::nullopt);
  EXPECT_EQ(presented_api_key("", "/v1/stream?key=abc"), K("abc"));
  EXPECT_EQ(presented_api_key("", "/v1/stream?x=1&key=abc&y=2"), K("abc"));
  EXPECT_EQ(presented_api_key("", "/v1/stream?monkey=abc"), std::nullopt);
  EXPECT_EQ(presented_api_key("", "/v1/stream?key="), K(""));
  EXPECT_EQ(presented_api_key("", "/v1/stream"), std::nullopt);
}

TEST(ApiKeys, LoopbackHostsAreThisMachineOnly) {
  for (const char* host :
       {"127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost", "LocalHost", "::ffff:127.0.0.1"})
    EXPECT_TRUE(is_loopback_host(host)) << host;
  for (const char* host : {"0.0.0.0", "::", "[::]", "10.0.0.1", "192.168.1.2", "128.0.0.1", "example.com",
                           "localhost.example.com", ""})
    EXPECT_FALSE(is_loopback_host(host)) << host;
}

class ServeApiKeyTest : public ShippedModelServerTest {
 protected:
  void start() {
    ServerOptions o;
    auto keys = ApiKeys::parse(cat(kAlpha, "\n", kBravo, "\n"), "keys");
    ASSERT_TRUE(keys.ok());
    o.api_keys = std::make_shared<const ApiKeys>(std::move(*keys));
    stream::SessionOptions so = model_->default_options();
    so.max_target_tokens = 64;
    start_server(std::move(o), so);
  }

  HttpReply request(http::verb verb, const std::string& target, const Headers& headers = {},
                    const std::string& body = "", const std::string& accept = "") const {
    return gpstream::testing::http_request_with(port_, verb, target, headers, body, accept);
  }

  static Headers bearer(const std::string& key) {
    return {{http::field::authorization, cat("Bearer ", key)}};
  }

  static void expect_unauthorized(const HttpReply& r) {
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_EQ(std::string(r.headers[http::field::www_authenticate]).substr(0, 6), "Bearer");
    ASSERT_EQ(r.content_type, "application/json");
    EXPECT_EQ(json::parse(r.body)["code"], "unauthorized");
    EXPECT_EQ(r.body.find(kAlpha), std::string::npos);
  }
};

const std::string kTranslateBody = R"({"text": "The cat sat on the mat."})";
const std::string kSegment = R"({"index": 0, "content": "cat", "finished": true, "is_empty": false,
                                 "data_type": "text", "tgt_lang": null})";

TEST_F(ServeApiKeyTest, EveryEndpointButHealthAndTheDemoPageNeedsAKey) {
  start();
  for (const Headers& wrong : {Headers{}, bearer("alpha-key-012345678"), bearer(cat(kAlpha, "x")),
                               Headers{{http::field::authorization, cat("Basic ", kAlpha)}}}) {
    expect_unauthorized(request(http::verb::post, "/v1/translate", wrong, kTranslateBody));
    expect_unauthorized(request(http::verb::post, "/reset", wrong));
    expect_unauthorized(request(http::verb::put, "/input", wrong, kSegment));
    expect_unauthorized(request(http::verb::get, "/output", wrong));
    expect_unauthorized(request(http::verb::get, "/metrics", wrong));
    expect_unauthorized(request(http::verb::get, "/simuleval", wrong));
    expect_unauthorized(request(http::verb::get, "/", wrong));  // SimulEval's agent info
    expect_unauthorized(gpstream::testing::websocket_handshake(port_, wrong));
  }
  expect_unauthorized(request(http::verb::post, cat("/v1/translate?key=", kAlpha, "0"), {}, kTranslateBody));
  expect_unauthorized(
      gpstream::testing::websocket_handshake(port_, {}, "/v1/stream?key=wrong-key-0123456789"));
  // Two Authorization headers, one of them right, are refused too.
  expect_unauthorized(gpstream::testing::raw_http(
      port_, cat("POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ", kAlpha,
                 "\r\nAuthorization: Bearer nope\r\nContent-Length: 0\r\n\r\n")));
  EXPECT_EQ(server_->metrics().sessions_total.load(), 0);

  // Load balancers, the demo page and CORS preflights need none.
  const HttpReply health = request(http::verb::get, "/health");
  ASSERT_EQ(health.status, 200);
  EXPECT_EQ(json::parse(health.body)["auth"], "api_key");
  EXPECT_EQ(request(http::verb::get, "/", {}, "", "text/html").status, 200);
  EXPECT_EQ(request(http::verb::get, "/app.js").status, 200);
  EXPECT_EQ(request(http::verb::options, "/v1/translate").status, 204);

  // Either key, in the header or the query.
  EXPECT_EQ(request(http::verb::post, "/v1/translate", bearer(kAlpha), kTranslateBody).status, 200);
  EXPECT_EQ(request(http::verb::post, cat("/v1/translate?key=", kBravo), {}, kTranslateBody).status, 200);
  EXPECT_EQ(request(http::verb::get, "/metrics", bearer(kBravo)).status, 200);
  EXPECT_EQ(request(http::verb::post, "/reset", bearer(kAlpha)).status, 200);
  EXPECT_EQ(request(http::verb::put, "/input", bearer(kAlpha), kSegment).status, 200);
  EXPECT_EQ(gpstream::testing::websocket_handshake(port_, bearer(kBravo)).status, 101);
  EXPECT_EQ(gpstream::testing::websocket_handshake(port_, {}, cat("/v1/stream?key=", kAlpha)).status, 101);
}

TEST_F(ServeApiKeyTest, BrowsersStreamWithTheKeyInTheUrl) {
  start();
  WsClient c(port_, 60, {}, cat("/v1/stream?key=", kAlpha));
  EXPECT_TRUE(c.send(R"({"type": "start"})"));
  auto ready = c.read_json();
  ASSERT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
  EXPECT_TRUE(c.send(R"({"type": "source", "text": "The cat sat on the mat."})"));
  EXPECT_TRUE(c.send(R"({"type": "end"})"));
  size_t words = 0;
  for (const auto& m : c.read_all()) words += m["type"] == "word";
  EXPECT_GT(words, 0u);
  EXPECT_EQ(c.close_code(), 1000);
}

}  // namespace
}  // namespace gpstream::serve
