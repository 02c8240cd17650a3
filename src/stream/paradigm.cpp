// Paradigm names and φ parsing.
#include "stream/paradigm.h"

#include <charconv>
#include <cmath>

namespace gpstream::stream {
namespace {

struct Entry {
  Paradigm p;
  const char* name;
};
constexpr Entry kParadigms[] = {
    {Paradigm::Offline, "offline"},         {Paradigm::Group, "group"},
    {Paradigm::BatchStream, "batch-stream"}, {Paradigm::ReencodePos, "reencode-pos"},
    {Paradigm::Reencode, "reencode"},       {Paradigm::Interleaved, "interleaved"},
    {Paradigm::InterleavedBlocked, "interleaved-blocked"},
};

}  // namespace

std::optional<Paradigm> parse_paradigm(std::string_view name) {
  for (const Entry& e : kParadigms)
    if (name == e.name) return e.p;
  return std::nullopt;
}

const char* paradigm_name(Paradigm p) {
  for (const Entry& e : kParadigms)
    if (e.p == p) return e.name;
  return "?";
}

std::string paradigm_names() {
  std::string s;
  for (const Entry& e : kParadigms) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

std::optional<Phi> Phi::parse(std::string_view s) {
  if (s == "S" || s == "s") return Phi{0.0f, true};
  float v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return Phi{v, false};
}

std::string Phi::to_string() const {
  if (source_length) return "S";
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  (void)ec;
  return std::string(buf, p);
}

}  // namespace gpstream::stream
