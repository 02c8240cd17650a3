// See api_keys.h.
#include "serve/api_keys.h"

#include <boost/asio/ip/address.hpp>

#include "util/mapped_file.h"

namespace gpstream::serve {
namespace {

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

Result<ApiKeys> ApiKeys::parse(std::string_view text, const std::string& where) {
  if (text.size() > kMaxApiKeyFileBytes)
    return invalid_argument(where + ": over " + std::to_string(kMaxApiKeyFileBytes) + " bytes");
  ApiKeys keys;
  size_t line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const std::string at = where + ":" + std::to_string(line_number) + ": ";
    if (line.size() < kMinApiKeyLength || line.size() > kMaxApiKeyLength)
      return invalid_argument(at + "a key must be " + std::to_string(kMinApiKeyLength) + " to " +
                              std::to_string(kMaxApiKeyLength) + " characters long, this one has " +
                              std::to_string(line.size()));
    for (char c : line)
      if (!is_key_char(c))
        return invalid_argument(at +
                                "a key may hold only the characters A-Z a-z 0-9 - . _ ~ (one key per line)");
    for (size_t i = 0; i < keys.keys_.size(); ++i)
      if (keys.keys_[i] == line) return invalid_argument(at + "this key is already on an earlier line");
    if (keys.keys_.size() == kMaxApiKeys)
      return invalid_argument(at + "more than " + std::to_string(kMaxApiKeys) + " keys");
    keys.keys_.emplace_back(line);
  }
  if (keys.keys_.empty())
    return invalid_argument(where + ": no keys (one key per line; '#' starts a comment)");
  return keys;
}

Result<ApiKeys> ApiKeys::load(const std::string& path) {
  GPS_ASSIGN(std::string text, read_regular_text_file(path, kMaxApiKeyFileBytes));
  return parse(text, path);
}

std::optional<size_t> ApiKeys::match(std::string_view presented) const {
  // Every key is compared over kMaxApiKeyLength bytes, whatever the lengths, and the loop never exits
  // early; a presented value longer than any key can be cannot match and is compared as its prefix.
  const std::string_view p = presented.substr(0, kMaxApiKeyLength);
  const unsigned long too_long = presented.size() > kMaxApiKeyLength ? 1 : 0;
  size_t found = 0;
  unsigned long any = 0;
  for (size_t k = 0; k < keys_.size(); ++k) {
    const std::string& key = keys_[k];
    unsigned long diff = (key.size() ^ p.size()) | too_long;
    for (size_t i = 0; i < kMaxApiKeyLength; ++i) {
      const unsigned char a = i < key.size() ? static_cast<unsigned char>(key[i]) : 0;
      const unsigned char b = i < p.size() ? static_cast<unsigned char>(p[i]) : 0;
      diff |= static_cast<unsigned long>(a ^ b);
    }
    // equal: all ones when diff == 0, else 0 (no branch on the comparison's outcome).
    const unsigned long equal = ((diff | (0 - diff)) >> (sizeof(diff) * 8 - 1)) - 1;
    found |= k & equal;
    any |= equal;
  }
  if (any == 0) return std::nullopt;
  return found;
}

std::optional<std::string> presented_api_key(std::string_view authorization, std::string_view target) {
  if (!authorization.empty()) {
    const std::string_view value = trim(authorization);
    const size_t space = value.find(' ');
    if (space == std::string_view::npos || !iequals(value.substr(0, space), "Bearer")) return std::nullopt;
    return std::string(trim(value.substr(space + 1)));
  }
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.substr(0, 4) == "key=") return std::string(pair.substr(4));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

bool is_loopback_host(std::string_view host) {
  if (iequals(host, "localhost")) return true;
  std::string bare(host);
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(bare, ec);
  if (ec) return false;
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    address = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  return address.is_loopback();
}

}  // namespace gpstream::serve
