// Who may use the server, decided from a request's headers before any work is done. The Host header must
// name this server: a DNS-rebinding page reaches a loopback port under its own domain name, which then
// appears in Host. An Origin header, which browsers add to cross-origin requests, WebSocket handshakes and
// POSTs, must be the server's own origin (the demo page) or one opened with --allow-origin; programs that
// send no Origin (SimulEval's client, curl) pass. This is not authentication. Pure functions of header
// values, tested without sockets; server.cpp applies them and answers CORS preflights (docs/server.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::serve {

// An --allow-origin value: "*" (any origin), or an origin scheme://host[:port] with nothing after it.
// Returned normalized as browsers send it: lowercase, without the scheme's default port (http 80, https 443).
Result<std::string> parse_allow_origin(std::string_view value);
// An --allow-host value: "*" (any Host), or a host name or address as Host writes it ("[::1]" for IPv6),
// without a port. Returned lowercase.
Result<std::string> parse_allow_host(std::string_view value);

// The address a connection arrived on, as a Host header writes it ("127.0.0.1", "[::1]"), and whether it is
// a loopback address (then "localhost", "127.0.0.1" and "[::1]" name it too).
struct LocalAddress {
  std::string host;
  bool loopback = false;
};

class AccessPolicy {
 public:
  // From --allow-origin and --allow-host values (checked here with the parse_allow_* functions) and the
  // listening address as Host writes it (--host: "127.0.0.1", "0.0.0.0", "[::1]").
  static Result<AccessPolicy> create(const std::vector<std::string>& allow_origins,
                                     const std::vector<std::string>& allow_hosts,
                                     std::string_view listen_host);

  // `host`: a Host header's value. Its name must be the listening address, the address the connection
  // arrived on (they differ for 0.0.0.0 and ::), a loopback name when that address is loopback, or an
  // --allow-host name. Its port (if any) is not compared: port forwarding changes it, and a rebinding page
  // cannot change the name.
  bool host_allowed(std::string_view host, const LocalAddress& local) const;
  // `origin`: an Origin header's value; `host`: the request's (allowed) Host header, "" if it had none. The
  // server's own origin is http://<Host>; any other must have been opened with --allow-origin.
  bool origin_allowed(std::string_view origin, std::string_view host) const;
  // Access-Control-Allow-Origin for an allowed `origin`: "*" when any origin is allowed, else the origin.
  std::string allow_origin_header(std::string_view origin) const;

 private:
  std::vector<std::string> origins_;  // normalized (parse_allow_origin), without "*"
  std::vector<std::string> hosts_;    // lowercase, without "*"; the listening address first
  bool any_origin_ = false;
  bool any_host_ = false;
};

}  // namespace gpstream::serve
