// Memory budget checks (see memory_budget.h).
#include "util/memory_budget.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

namespace gpstream {

Result<uint64_t> parse_byte_size(std::string_view text) {
  const std::string shown(text);
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const auto digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
      return invalid_argument("size '" + shown + "' is too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return invalid_argument("size '" + shown + "': expected a number such as 512M or 8G");
  std::string unit(text.substr(i));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB")
    unit.resize(unit.size() - 2);
  else if (unit.size() >= 2 && unit.back() == 'B')
    unit.pop_back();
  int shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K")
    shift = 10;
  else if (unit == "M")
    shift = 20;
  else if (unit == "G")
    shift = 30;
  else if (unit == "T")
    shift = 40;
  else
    return invalid_argument("size '" + shown + "': unknown unit (use K, M, G or T)");
  if (shift && value > (std::numeric_limits<uint64_t>::max() >> shift))
    return invalid_argument("size '" + shown + "' is too large");
  return value << shift;
}

std::string format_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 5) v /= 1024.0, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

namespace {

// MemAvailable from /proc/meminfo in bytes, or 0.
uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

// GPSTREAM_MEMORY_LIMIT, read once per check: unset → nullopt; "off"/"0" → a budget of nullopt (no check); a
// size → that size; anything else → an error.
struct EnvLimit {
  bool set = false;
  std::optional<uint64_t> bytes;
};
Result<EnvLimit> env_limit() {
  const char* env = std::getenv("GPSTREAM_MEMORY_LIMIT");
  if (!env || !*env) return EnvLimit{};
  const std::string_view s(env);
  if (s == "off" || s == "0") return EnvLimit{true, std::nullopt};
  GPS_ASSIGN(uint64_t v, parse_byte_size(s));
  return EnvLimit{true, v};
}

std::optional<uint64_t> machine_budget() {
  if (const uint64_t avail = mem_available()) return avail;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0)
    return saturating_product({static_cast<uint64_t>(pages), static_cast<uint64_t>(page)});
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> memory_budget_bytes() {
  auto env = env_limit();
  if (!env.ok()) return 0;  // a malformed limit is reported where it is used (check_memory_budget)
  return env->set ? env->bytes : machine_budget();
}

Status check_memory_budget(uint64_t bytes, std::string_view what) {
  auto env = env_limit();
  if (!env.ok()) return invalid_argument("GPSTREAM_MEMORY_LIMIT: " + env.error().message());
  const std::optional<uint64_t> budget = env->set ? env->bytes : machine_budget();
  if (!budget || bytes <= *budget) return {};
  return out_of_range(std::string(what) + " needs about " + format_bytes(bytes) + " of memory but " +
                      format_bytes(*budget) +
                      (env->set ? " is allowed (GPSTREAM_MEMORY_LIMIT)" : " is available") +
                      "; use smaller sizes, or set GPSTREAM_MEMORY_LIMIT (e.g. 32G, or off) to override");
}

uint64_t saturating_product(std::initializer_list<uint64_t> factors) {
  uint64_t p = 1;
  for (uint64_t f : factors) {
    if (f == 0) return 0;
    if (p > std::numeric_limits<uint64_t>::max() / f)
      p = std::numeric_limits<uint64_t>::max();
    else
      p *= f;
  }
  return p;
}

uint64_t saturating_sum(std::initializer_list<uint64_t> terms) {
  uint64_t s = 0;
  for (uint64_t t : terms)
    s = t > std::numeric_limits<uint64_t>::max() - s ? std::numeric_limits<uint64_t>::max() : s + t;
  return s;
}

}  // namespace gpstream
