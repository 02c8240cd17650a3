// Shared command-line helpers.
#include "cli/cli_util.h"

#include <charconv>
#include <cmath>

namespace gpstream::cli {
namespace {

template <typename T>
Result<std::vector<T>> parse_list(const std::string& s, const std::string& what) {
  std::vector<T> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    T v{};
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size())
      return invalid_argument(what + ": '" + item + "' is not a valid number");
    out.push_back(v);
    i = j + 1;
  }
  return out;
}

}  // namespace

Result<std::vector<int32_t>> parse_int_list(const std::string& s, const std::string& what) {
  return parse_list<int32_t>(s, what);
}

Result<std::vector<float>> parse_float_list(const std::string& s, const std::string& what) {
  GPS_ASSIGN(auto v, parse_list<float>(s, what));
  for (float x : v)
    if (!std::isfinite(x)) return invalid_argument(what + ": positions must be finite");
  return v;
}

std::string format_float(float x) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  (void)ec;
  return std::string(buf, p);
}

}  // namespace gpstream::cli
