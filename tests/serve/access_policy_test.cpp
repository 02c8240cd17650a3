// Who may use the server (serve/access_policy.h). The policy's functions against tables of header values
// (the oracle: how browsers write Host and Origin, RFC 6454 and the Fetch standard), then a real server on a
// loopback port with the shipped model, talked to as a foreign web page, a DNS-rebinding page, the demo page
// itself and programs that send no Origin. A refusal must come before any work: no session is opened.
#include "serve/access_policy.h"

#include <gtest/gtest.h>

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

const std::string kEvil = "http://evil.example";

// A server listening on `listen` (127.0.0.1 by default, as gpstream serve).
AccessPolicy policy(const std::vector<std::string>& origins = {}, const std::vector<std::string>& hosts = {},
                    const std::string& listen = "127.0.0.1") {
  auto p = AccessPolicy::create(origins, hosts, listen);
  EXPECT_TRUE(p.ok()) << p.error().message();
  return std::move(*p);
}

TEST(AccessPolicy, AllowOptionsAreOriginsAndHostNames) {
  const std::pair<std::string, std::string> origins[] = {
      {"*", "*"},
      {"http://localhost:3000", "http://localhost:3000"},
      {"HTTP://App.Example:80", "http://app.example"},
      {"https://app.example:443", "https://app.example"},
      {"https://app.example:8443", "https://app.example:8443"},
      {"http://[::1]:8080", "http://[::1]:8080"},
  };
  for (const auto& [value, normalized] : origins) {
    auto o = parse_allow_origin(value);
    ASSERT_TRUE(o.ok()) << value << ": " << o.error().message();
    EXPECT_EQ(*o, normalized);
  }
  for (const std::string& bad :
       std::vector<std::string>{"", "null", "app.example", "http://", "http://app.example/", "http://a/b",
                                "http://user@app.example", "http://app.example:0", "http://app.example:65536",
                                "http://app.example:", "http://a b", "1http://a", "http://[::1",
                                "http://[zz]", cat("http://", std::string(400, 'a'))})
    EXPECT_FALSE(parse_allow_origin(bad).ok()) << bad;
  EXPECT_EQ(*parse_allow_host("GPU.lan"), "gpu.lan");
  EXPECT_EQ(*parse_allow_host("[::1]"), "[::1]");
  EXPECT_EQ(*parse_allow_host("*"), "*");
  for (const std::string& bad : std::vector<std::string>{"", "gpu.lan:8080", "gpu/lan", "http://gpu.lan",
                                                         "a b", std::string(300, 'a')})
    EXPECT_FALSE(parse_allow_host(bad).ok()) << bad;
  EXPECT_FALSE(AccessPolicy::create({"http://a/"}, {}, "127.0.0.1").ok());
  EXPECT_FALSE(AccessPolicy::create({}, {"a:1"}, "127.0.0.1").ok());
}

TEST(AccessPolicy, HostMustNameTheServer) {
  const LocalAddress loopback{"127.0.0.1", true};
  const LocalAddress lan{"192.168.1.5", false};
  const AccessPolicy p = policy();
  for (const char* host : {"localhost:8080", "127.0.0.1:8080", "[::1]:8080", "127.0.0.1", "LocalHost:8080"})
    EXPECT_TRUE(p.host_allowed(host, loopback)) << host;
  for (const std::string& host : std::vector<std::string>{
           "evil.example", "evil.example:8080", "localhost.evil.example:8080", "127.0.0.1.nip.io:8080", "",
           "localhost:", "localhost:x", "localhost:8080:1", "localhost:70000", "[::1", "localhost ",
           "192.168.1.5:8080", std::string(10000, 'a')})
    EXPECT_FALSE(p.host_allowed(host, loopback)) << host;
  // Listening on every address (0.0.0.0): that name, and the address each client reached.
  const AccessPolicy all = policy({}, {}, "0.0.0.0");
  EXPECT_TRUE(all.host_allowed("0.0.0.0:8080", lan));
  EXPECT_TRUE(all.host_allowed("192.168.1.5:8080", lan));
  EXPECT_FALSE(all.host_allowed("192.168.1.6:8080", lan));
  EXPECT_FALSE(all.host_allowed("localhost:8080", lan));
  EXPECT_FALSE(all.host_allowed("127.0.0.1:8080", lan));
  EXPECT_FALSE(all.host_allowed("evil.example:8080", lan));
  EXPECT_TRUE(all.host_allowed("localhost:8080", loopback));
  // Listening on one LAN address: that address only.
  EXPECT_TRUE(policy({}, {}, "192.168.1.5").host_allowed("192.168.1.5:8080", lan));
  EXPECT_FALSE(policy({}, {}, "192.168.1.5").host_allowed("localhost:8080", lan));
  EXPECT_TRUE(policy({}, {}, "[::1]").host_allowed("[::1]:8080", LocalAddress{"[::1]", true}));
  EXPECT_TRUE(policy({}, {"gpu.lan"}).host_allowed("GPU.lan:9000", lan));
  EXPECT_FALSE(policy({}, {"gpu.lan"}).host_allowed("evil.example", lan));
  EXPECT_TRUE(policy({}, {"*"}).host_allowed("evil.example", lan));
}

TEST(AccessPolicy, OriginMustBeTheServersOwnOrAllowed) {
  const AccessPolicy p = policy();
  EXPECT_TRUE(p.origin_allowed("http://localhost:8080", "localhost:8080"));
  EXPECT_TRUE(p.origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080"));
  EXPECT_TRUE(p.origin_allowed("http://127.0.0.1", "127.0.0.1:80"));
  for (const char* origin : {"http://evil.example", "null", "http://localhost:8081", "https://localhost:8080",
                             "http://127.0.0.1:8080", "http://localhost:8080/", ""})
    EXPECT_FALSE(p.origin_allowed(origin, "localhost:8080")) << origin;
  EXPECT_FALSE(p.origin_allowed("http://localhost:8080", ""));  // no Host: only --allow-origin
  const AccessPolicy app = policy({"http://app.example:3000"});
  EXPECT_TRUE(app.origin_allowed("http://app.example:3000", "localhost:8080"));
  EXPECT_TRUE(app.origin_allowed("http://APP.example:3000", ""));
  EXPECT_FALSE(app.origin_allowed("http://app.example", "localhost:8080"));
  EXPECT_FALSE(app.origin_allowed(kEvil, "localhost:8080"));
  EXPECT_EQ(app.allow_origin_header("http://app.example:3000"), "http://app.example:3000");
  const AccessPolicy any = policy({"*"});
  EXPECT_TRUE(any.origin_allowed(kEvil, "localhost:8080"));
  EXPECT_EQ(any.allow_origin_header(kEvil), "*");
}

class ServeAccessTest : public ShippedModelServerTest {
 protected:
  void start(ServerOptions o = {}) {
    stream::SessionOptions so = model_->default_options();
    so.max_target_tokens = 64;
    start_server(std::move(o), so);
  }

  // "s:PORT" with the server's port.
  std::string at(const std::string& s) const { return cat(s, ":", std::to_string(port_)); }
  // The Host and Origin of the demo page as a browser loads it from http://127.0.0.1:PORT/.
  Headers own_page() const {
    return {{http::field::host, at("127.0.0.1")}, {http::field::origin, at("http://127.0.0.1")}};
  }

  HttpReply request(http::verb verb, const std::string& target, const Headers& headers,
                    const std::string& body = "",
                    const std::string& content_type = "application/json") const {
    return gpstream::testing::http_request_with(port_, verb, target, headers, body, "", content_type);
  }
  HttpReply translate(const Headers& headers, const std::string& content_type = "application/json") const {
    return request(http::verb::post, "/v1/translate", headers, R"({"text": "The cat sat on the mat."})",
                   content_type);
  }

  // A whole WebSocket stream from a client sending `headers` (throws if the handshake is refused): its words.
  size_t stream_words(const Headers& headers) const {
    WsClient c(port_, 60, headers);
    EXPECT_TRUE(c.send(R"({"type": "start"})"));
    auto ready = c.read_json();
    EXPECT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
    EXPECT_TRUE(c.send(R"({"type": "source", "text": "The cat sat on the mat."})"));
    EXPECT_TRUE(c.send(R"({"type": "end"})"));
    size_t words = 0;
    bool finished = false;
    for (const auto& m : c.read_all()) {
      if (m["type"] == "word") ++words;
      if (m["type"] == "finished") finished = true;
    }
    EXPECT_TRUE(finished);
    EXPECT_EQ(c.close_code(), 1000);
    return words;
  }

  static void expect_refused(const HttpReply& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body;
    ASSERT_EQ(r.content_type, "application/json");
    const json body = json::parse(r.body);
    EXPECT_EQ(body["type"], "error");
    EXPECT_EQ(body["code"], code);
    EXPECT_FALSE(body["message"].get<std::string>().empty());
    EXPECT_EQ(r.headers.count(http::field::access_control_allow_origin), 0u);
  }
};

TEST_F(ServeAccessTest, WebSocketStreamsRefuseForeignOrigins) {
  start();
  // Another service on this machine, a look-alike name, a sandboxed page ("null").
  for (const std::string& origin :
       {kEvil, std::string("null"), cat("http://127.0.0.1:", std::to_string(port_ + 1)),
        cat(at("http://127.0.0.1"), ".evil.example")}) {
    SCOPED_TRACE(origin);
    expect_refused(gpstream::testing::websocket_handshake(port_, {{http::field::origin, origin}}), 403,
                   "forbidden_origin");
  }
  EXPECT_EQ(gpstream::testing::websocket_handshake(port_, own_page()).status, 101);
  EXPECT_EQ(server_->metrics().sessions_total.load(), 0);
  // A program (no Origin) and the server's own page stream as before.
  EXPECT_GT(stream_words({}), 0u);
  EXPECT_GT(stream_words(own_page()), 0u);
  const Headers localhost_page = {{http::field::host, at("localhost")},
                                  {http::field::origin, at("http://localhost")}};
  EXPECT_GT(stream_words(localhost_page), 0u);
}

TEST_F(ServeAccessTest, PostEndpointsRefuseForeignOrigins) {
  start();
  const Headers evil = {{http::field::origin, kEvil}};
  // A cross-site form or fetch needs no preflight with text/plain; it must still not run.
  expect_refused(translate(evil, "text/plain"), 403, "forbidden_origin");
  expect_refused(translate(evil), 403, "forbidden_origin");
  expect_refused(request(http::verb::post, "/reset", evil), 403, "forbidden_origin");
  const std::string segment = R"({"index": 0, "content": "cat", "finished": true, "is_empty": false,
                                  "data_type": "text", "tgt_lang": null})";
  expect_refused(request(http::verb::put, "/input", evil, segment, "text/plain"), 403, "forbidden_origin");
  // Two Origin headers are refused even when one is the server's own.
  const HttpReply two = gpstream::testing::raw_http(
      port_, cat("POST /reset HTTP/1.1\r\nHost: ", at("127.0.0.1"), "\r\nOrigin: ", at("http://127.0.0.1"),
                 "\r\nOrigin: ", kEvil, "\r\nContent-Length: 0\r\n\r\n"));
  expect_refused(two, 403, "forbidden_origin");
  EXPECT_EQ(server_->metrics().sessions_total.load(), 0);
  // No Origin (SimulEval's client, curl) and the demo page's own origin are served.
  EXPECT_EQ(translate({}).status, 200);
  const HttpReply own = translate(own_page());
  EXPECT_EQ(own.status, 200) << own.body;
  EXPECT_TRUE(json::parse(own.body).contains("translation"));
  EXPECT_EQ(request(http::verb::post, "/reset", {}).status, 200);
  EXPECT_EQ(request(http::verb::post, "/reset", own_page()).status, 200);
  EXPECT_EQ(request(http::verb::put, "/input", own_page(), segment).status, 200);
}

TEST_F(ServeAccessTest, AllowOriginOpensTheServerToThoseOriginsOnly) {
  ServerOptions o;
  o.allow_origins = {"http://app.example:3000"};
  start(o);
  const Headers app = {{http::field::origin, "http://app.example:3000"}};
  EXPECT_GT(stream_words(app), 0u);
  const HttpReply ok = translate(app);
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.headers[http::field::access_control_allow_origin], "http://app.example:3000");
  EXPECT_EQ(ok.headers[http::field::vary], "Origin");
  expect_refused(translate({{http::field::origin, kEvil}}), 403, "forbidden_origin");
  expect_refused(translate({{http::field::origin, "http://app.example:3001"}}), 403, "forbidden_origin");
  expect_refused(gpstream::testing::websocket_handshake(port_, {{http::field::origin, kEvil}}), 403,
                 "forbidden_origin");
  // '*': any origin, answered with Access-Control-Allow-Origin: *.
  o.allow_origins = {"*"};
  start(o);
  EXPECT_GT(stream_words({{http::field::origin, kEvil}}), 0u);
  const HttpReply any = translate({{http::field::origin, kEvil}});
  EXPECT_EQ(any.status, 200) << any.body;
  EXPECT_EQ(any.headers[http::field::access_control_allow_origin], "*");
  ServerOptions bad;
  bad.allow_origins = {"http://app.example/"};
  bad.port = 0;
  EXPECT_FALSE(Server::start(*model_, model_->default_options(), bad).ok());
}

TEST_F(ServeAccessTest, HostMustNameTheServer) {
  start();
  // A DNS-rebinding page: evil.example resolves to 127.0.0.1, so its requests are "same-origin" to it.
  const Headers rebound = {{http::field::host, at("evil.example")},
                           {http::field::origin, at("http://evil.example")}};
  const Headers foreign_host = {{http::field::host, at("evil.example")}};
  expect_refused(request(http::verb::get, "/health", foreign_host), 421, "bad_host");
  expect_refused(translate(rebound), 421, "bad_host");
  expect_refused(request(http::verb::post, "/reset", rebound), 421, "bad_host");
  expect_refused(gpstream::testing::websocket_handshake(port_, rebound), 421, "bad_host");
  EXPECT_EQ(server_->metrics().sessions_total.load(), 0);
  for (const std::string& host : {at("localhost"), at("127.0.0.1"), at("[::1]"), std::string("127.0.0.1")})
    EXPECT_EQ(request(http::verb::get, "/health", {{http::field::host, host}}).status, 200) << host;
  // HTTP/1.1 requires one Host (RFC 9112: 400 otherwise); HTTP/1.0 may omit it (no browser does).
  expect_refused(gpstream::testing::raw_http(port_, "GET /health HTTP/1.1\r\n\r\n"), 400, "bad_request");
  expect_refused(gpstream::testing::raw_http(port_,
                                             "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: "
                                             "evil.example\r\n\r\n"),
                 400, "bad_request");
  EXPECT_EQ(gpstream::testing::raw_http(port_, "GET /health HTTP/1.0\r\n\r\n").status, 200);
  // --allow-host adds a name.
  ServerOptions o;
  o.allow_hosts = {"gpu.lan"};
  start(o);
  EXPECT_EQ(request(http::verb::get, "/health", {{http::field::host, at("gpu.lan")}}).status, 200);
  EXPECT_GT(stream_words({{http::field::host, at("gpu.lan")}, {http::field::origin, at("http://gpu.lan")}}),
            0u);
  expect_refused(request(http::verb::get, "/health", foreign_host), 421, "bad_host");
}

TEST_F(ServeAccessTest, CorsPreflightIsAnsweredForAllowedOriginsOnly) {
  ServerOptions o;
  o.allow_origins = {"http://app.example:3000"};
  start(o);
  const auto preflight = [&](const std::string& origin) {
    return request(http::verb::options, "/v1/translate",
                   {{http::field::origin, origin},
                    {http::field::access_control_request_method, "POST"},
                    {http::field::access_control_request_headers, "content-type"}});
  };
  const HttpReply ok = preflight("http://app.example:3000");
  EXPECT_EQ(ok.status, 204);
  EXPECT_EQ(ok.headers[http::field::access_control_allow_origin], "http://app.example:3000");
  EXPECT_NE(ok.headers[http::field::access_control_allow_methods].find("POST"), std::string::npos);
  EXPECT_EQ(ok.headers[http::field::access_control_allow_headers], "Content-Type, Authorization");
  EXPECT_EQ(ok.headers[http::field::vary], "Origin");
  expect_refused(preflight(kEvil), 403, "forbidden_origin");
  expect_refused(preflight("null"), 403, "forbidden_origin");
  // Without --allow-origin '*' no response says Access-Control-Allow-Origin: *.
  const HttpReply health =
      request(http::verb::get, "/health", {{http::field::origin, "http://app.example:3000"}});
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.headers[http::field::access_control_allow_origin], "http://app.example:3000");
  const HttpReply no_origin = request(http::verb::get, "/health", {});
  EXPECT_EQ(no_origin.headers.count(http::field::access_control_allow_origin), 0u);
  // A plain OPTIONS from a program: the methods, no CORS headers.
  const HttpReply plain = request(http::verb::options, "/v1/translate", {});
  EXPECT_EQ(plain.status, 204);
  EXPECT_NE(plain.headers[http::field::allow].find("POST"), std::string::npos);
  EXPECT_EQ(plain.headers.count(http::field::access_control_allow_origin), 0u);
}

}  // namespace
}  // namespace gpstream::serve
