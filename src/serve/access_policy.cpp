// Host and Origin checks. Header values are hostile: every parse is bounded and accepts only the characters
// a host name, an address or a scheme can hold, so whatever passes can be echoed in a response header.
#include "serve/access_policy.h"

#include <algorithm>
#include <optional>

namespace gpstream::serve {
namespace {

constexpr size_t kMaxNameBytes = 253;  // a DNS name
constexpr size_t kMaxSchemeBytes = 32;
constexpr size_t kMaxValueBytes = 320;  // longer than any Host or Origin value that can pass

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// host [":" port] as Host headers and origins write it. The host is a name (letters, digits, '.', '-', '_'),
// an IPv4 address, or an IPv6 address in brackets; the port 1..65535.
struct Authority {
  std::string name;  // lowercase, brackets kept
  std::optional<int> port;
};

std::optional<Authority> parse_authority(std::string_view s) {
  if (s.empty() || s.size() > kMaxValueBytes) return std::nullopt;
  size_t name_end = 0;
  if (s[0] == '[') {
    const size_t close = s.find(']');
    if (close == std::string_view::npos || close < 2) return std::nullopt;
    for (char c : s.substr(1, close - 1))
      if (!is_hex(c) && c != ':' && c != '.') return std::nullopt;
    name_end = close + 1;
  } else {
    name_end = std::min(s.find(':'), s.size());
    if (name_end == 0 || name_end > kMaxNameBytes) return std::nullopt;
    for (char c : s.substr(0, name_end))
      if (!is_alpha(c) && !is_digit(c) && c != '.' && c != '-' && c != '_') return std::nullopt;
  }
  Authority a{lowercase(s.substr(0, name_end)), std::nullopt};
  const std::string_view rest = s.substr(name_end);
  if (rest.empty()) return a;
  if (rest[0] != ':' || rest.size() < 2 || rest.size() > 6) return std::nullopt;
  int port = 0;
  for (char c : rest.substr(1)) {
    if (!is_digit(c)) return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  a.port = port;
  return a;
}

std::optional<int> default_port(const std::string& scheme) {
  if (scheme == "http" || scheme == "ws") return 80;
  if (scheme == "https" || scheme == "wss") return 443;
  return std::nullopt;
}

// scheme://host[:port], lowercase, without the scheme's default port: the form browsers send. std::nullopt
// for anything else ("null", a path, userinfo, a bad port).
std::optional<std::string> normalize_origin(std::string_view s) {
  if (s.size() > kMaxValueBytes) return std::nullopt;
  const size_t sep = s.find("://");
  if (sep == std::string_view::npos || sep == 0 || sep > kMaxSchemeBytes || !is_alpha(s[0]))
    return std::nullopt;
  const std::string scheme = lowercase(s.substr(0, sep));
  for (char c : scheme)
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return std::nullopt;
  const auto a = parse_authority(s.substr(sep + 3));
  if (!a) return std::nullopt;
  std::string out = scheme;
  out.append("://").append(a->name);
  if (a->port && a->port != default_port(scheme)) out.append(":").append(std::to_string(*a->port));
  return out;
}

}  // namespace

Result<std::string> parse_allow_origin(std::string_view value) {
  if (value == "*") return std::string("*");
  auto origin = normalize_origin(value);
  if (!origin) {
    std::string m = "'";
    m.append(value.substr(0, kMaxValueBytes));
    m.append("' is not an origin (scheme://host[:port], no path) nor '*'");
    return invalid_argument(std::move(m));
  }
  return std::move(*origin);
}

Result<std::string> parse_allow_host(std::string_view value) {
  if (value == "*") return std::string("*");
  auto a = parse_authority(value);
  if (!a || a->port) {
    std::string m = "'";
    m.append(value.substr(0, kMaxValueBytes));
    m.append("' is not a host name or address without a port, nor '*'");
    return invalid_argument(std::move(m));
  }
  return std::move(a->name);
}

Result<AccessPolicy> AccessPolicy::create(const std::vector<std::string>& allow_origins,
                                          const std::vector<std::string>& allow_hosts,
                                          std::string_view listen_host) {
  AccessPolicy p;
  p.hosts_.push_back(lowercase(listen_host));
  for (const auto& value : allow_origins) {
    auto origin = parse_allow_origin(value);
    if (!origin) return invalid_argument("--allow-origin: " + origin.error().message());
    if (*origin == "*")
      p.any_origin_ = true;
    else if (!contains(p.origins_, *origin))
      p.origins_.push_back(std::move(*origin));
  }
  for (const auto& value : allow_hosts) {
    auto host = parse_allow_host(value);
    if (!host) return invalid_argument("--allow-host: " + host.error().message());
    if (*host == "*")
      p.any_host_ = true;
    else if (!contains(p.hosts_, *host))
      p.hosts_.push_back(std::move(*host));
  }
  return p;
}

bool AccessPolicy::host_allowed(std::string_view host, const LocalAddress& local) const {
  if (any_host_) return true;
  const auto a = parse_authority(host);
  if (!a) return false;
  if (a->name == local.host) return true;
  if (local.loopback && (a->name == "localhost" || a->name == "127.0.0.1" || a->name == "[::1]")) return true;
  return contains(hosts_, a->name);
}

bool AccessPolicy::origin_allowed(std::string_view origin, std::string_view host) const {
  if (any_origin_) return true;
  const auto o = normalize_origin(origin);
  if (!o) return false;
  if (!host.empty() && host.size() <= kMaxValueBytes) {
    std::string own = "http://";
    own.append(host);
    if (normalize_origin(own) == o) return true;
  }
  return contains(origins_, *o);
}

std::string AccessPolicy::allow_origin_header(std::string_view origin) const {
  return any_origin_ ? std::string("*") : std::string(origin);
}

}  // namespace gpstream::serve
