// API keys (gpstream serve --api-key-file): the key file's parser with its bounds, the key a request
// presents (Authorization: Bearer, or ?key= for browsers' WebSocket API, which cannot set headers), and
// its comparison against every configured key in time independent of where or whether they differ.
// Also the listening-address rule: a non-loopback address needs keys or an explicit --insecure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::serve {

// Bounds on a key file: its size, how many keys it holds, and each key's length. A key is made of
// URL-unreserved characters (A-Z a-z 0-9 - . _ ~) so that it travels in ?key= without escaping.
inline constexpr size_t kMaxApiKeyFileBytes = 1 << 20;
inline constexpr size_t kMaxApiKeys = 4096;
inline constexpr size_t kMinApiKeyLength = 16;
inline constexpr size_t kMaxApiKeyLength = 256;

class ApiKeys {
 public:
  // One key per line; blank lines and lines starting with '#' (after spaces) are skipped; spaces around a
  // key are dropped. Errors name `where` and the line. At least one key.
  static Result<ApiKeys> parse(std::string_view text, const std::string& where);
  // Reads `path` (a regular file only: a FIFO or device is refused without blocking) and parses it.
  static Result<ApiKeys> load(const std::string& path);

  size_t size() const { return keys_.size(); }
  // The index of the key equal to `presented`, comparing it with every key over kMaxApiKeyLength bytes
  // each: the time taken depends on neither the keys' contents nor which one (if any) matched.
  std::optional<size_t> match(std::string_view presented) const;

 private:
  std::vector<std::string> keys_;
};

// The key a request presents: the token of an "Authorization: Bearer <key>" header value when there is
// one (`authorization` empty: none), else the value of the target's "key" query parameter; nullopt when
// it presents none (an Authorization header with another scheme presents none either).
std::optional<std::string> presented_api_key(std::string_view authorization, std::string_view target);

// Whether --host names this machine only: 127.0.0.0/8, ::1 (also as [::1] or ::ffff:127.x.y.z) or
// "localhost". Listening anywhere else needs --api-key-file or --insecure.
bool is_loopback_host(std::string_view host);

}  // namespace gpstream::serve
