// Blocking test clients for the server: a WebSocket client (text and binary frames, the close code
// the server sent), a bare WebSocket handshake, and one-shot HTTP requests (with extra headers, or as raw
// bytes), over Boost.Beast on loopback. Every socket read times out (SO_RCVTIMEO) so a server that never
// answers fails the test instead of hanging it.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpstream::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// Concatenation by append (GCC 12 -O3 warns, a false -Wrestrict positive, on "literal" + std::string
// temporaries).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (s.append(parts), ...);
  return s;
}

inline void set_read_timeout(tcp::socket& s, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

// Extra request headers (Origin, ...); a Host here replaces the client's "127.0.0.1".
using Headers = std::vector<std::pair<http::field, std::string>>;

class WsClient {
 public:
  // Throws when the server refuses the handshake (websocket_handshake() below shows the refusal). `target`
  // may carry a query (?key=...).
  explicit WsClient(int port, int timeout_s = 60, const Headers& headers = {},
                    const std::string& target = "/v1/stream")
      : ws_(ioc_) {
    tcp::resolver resolver(ioc_);
    net::connect(ws_.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
    set_read_timeout(ws_.next_layer(), timeout_s);
    ws_.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
      for (const auto& [field, value] : headers) req.set(field, value);
    }));
    ws_.handshake("127.0.0.1", target);
  }
  bool send(const std::string& text) {
    beast::error_code ec;
    ws_.text(true);
    ws_.write(net::buffer(text), ec);
    return !ec;
  }
  bool send_binary(const std::string& bytes) {
    beast::error_code ec;
    ws_.binary(true);
    ws_.write(net::buffer(bytes), ec);
    return !ec;
  }
  // The next message, or nullopt once the connection is closed (close_code() then says how).
  std::optional<std::string> read() {
    beast::flat_buffer buf;
    beast::error_code ec;
    ws_.read(buf, ec);
    if (ec) {
      closed_ = true;
      return std::nullopt;
    }
    return beast::buffers_to_string(buf.data());
  }
  std::optional<nlohmann::json> read_json() {
    auto m = read();
    if (!m) return std::nullopt;
    return nlohmann::json::parse(*m);
  }
  // Reads until the server closes; returns every message.
  std::vector<nlohmann::json> read_all() {
    std::vector<nlohmann::json> out;
    while (auto m = read_json()) out.push_back(*m);
    return out;
  }
  int close_code() const { return static_cast<int>(ws_.reason().code); }
  bool closed() const { return closed_; }
  // Drops the TCP connection without a close handshake.
  void abort() {
    beast::error_code ec;
    ws_.next_layer().close(ec);
  }

 private:
  net::io_context ioc_;
  websocket::stream<tcp::socket> ws_;
  bool closed_ = false;
};

struct HttpReply {
  int status = 0;  // 0: no response
  std::string body;
  std::string content_type;
  http::fields headers;
};

inline HttpReply reply_of(const http::response<http::string_body>& res) {
  HttpReply r;
  r.status = res.result_int();
  r.body = res.body();
  r.content_type = std::string(res[http::field::content_type]);
  r.headers = res.base();
  return r;
}

inline tcp::socket connect_loopback(net::io_context& ioc, int port) {
  tcp::socket socket(ioc);
  tcp::resolver resolver(ioc);
  net::connect(socket, resolver.resolve("127.0.0.1", std::to_string(port)));
  set_read_timeout(socket, 120);
  return socket;
}

inline HttpReply read_reply(tcp::socket& socket) {
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  beast::error_code ec;
  http::read(socket, buf, parser, ec);
  if (ec) return {};
  return reply_of(parser.release());
}

inline HttpReply http_request_with(int port, http::verb verb, const std::string& target,
                                   const Headers& headers, const std::string& body = "",
                                   const std::string& accept = "",
                                   const std::string& content_type = "application/json") {
  net::io_context ioc;
  tcp::socket socket = connect_loopback(ioc, port);
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!accept.empty()) req.set(http::field::accept, accept);
  if (!body.empty() || verb == http::verb::post || verb == http::verb::put) {
    req.set(http::field::content_type, content_type);
    req.body() = body;
    req.prepare_payload();
  }
  for (const auto& [field, value] : headers) req.set(field, value);
  http::write(socket, req);
  return read_reply(socket);
}

inline HttpReply http_request(int port, http::verb verb, const std::string& target,
                              const std::string& body = "", const std::string& accept = "",
                              const std::string& content_type = "application/json") {
  return http_request_with(port, verb, target, {}, body, accept, content_type);
}

// Sends `bytes` as they are (requests Beast would not write: no Host, two Hosts) and reads one response.
inline HttpReply raw_http(int port, const std::string& bytes) {
  net::io_context ioc;
  tcp::socket socket = connect_loopback(ioc, port);
  net::write(socket, net::buffer(bytes));
  return read_reply(socket);
}

// A WebSocket upgrade request to /v1/stream, written by hand because Beast's handshake drops the response
// of a refusal: status 101 when the server upgrades, else its response.
inline HttpReply websocket_handshake(int port, const Headers& headers,
                                     const std::string& target = "/v1/stream") {
  net::io_context ioc;
  tcp::socket socket = connect_loopback(ioc, port);
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");  // RFC 6455's example key
  req.set(http::field::sec_websocket_version, "13");
  for (const auto& [field, value] : headers) req.set(field, value);
  http::write(socket, req);
  return read_reply(socket);
}

}  // namespace gpstream::testing
