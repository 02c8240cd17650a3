// Paradigm names, position removal names and φ parsing.
#include "stream/paradigm.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "util/json_reader.h"

namespace gpstream::stream {
namespace {

struct Entry {
  Paradigm p;
  const char* name;
};
constexpr Entry kParadigms[] = {
    {Paradigm::Offline, "offline"},
    {Paradigm::Group, "group"},
    {Paradigm::BatchStream, "batch-stream"},
    {Paradigm::ReencodePos, "reencode-pos"},
    {Paradigm::Reencode, "reencode"},
    {Paradigm::Interleaved, "interleaved"},
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

std::optional<PositionsRemoved> parse_positions_removed(std::string_view name) {
  if (name == "none") return PositionsRemoved::None;
  if (name == "source") return PositionsRemoved::Source;
  if (name == "target") return PositionsRemoved::Target;
  if (name == "all") return PositionsRemoved::All;
  return std::nullopt;
}

const char* positions_removed_name(PositionsRemoved r) {
  switch (r) {
    case PositionsRemoved::Source:
      return "source";
    case PositionsRemoved::Target:
      return "target";
    case PositionsRemoved::All:
      return "all";
    case PositionsRemoved::None:
      break;
  }
  return "none";
}

std::optional<Phi> Phi::parse(std::string_view s) {
  if (s == "S" || s == "s") return Phi{0.0f, true};
  float v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return Phi{v, false};
}

Result<Phi> phi_from_json(const JsonValue& v) {
  const char* expected = "must be a non-negative number or \"S\"";
  if (v.json().is_number()) {
    const double d = v.json().get<double>();
    if (!(d >= 0 && d <= static_cast<double>(std::numeric_limits<float>::max())))
      return v.error(std::string(expected) + ", got " + v.json().dump());
    return Phi{static_cast<float>(d), false};
  }
  if (v.json().is_string()) {
    const std::string& text = v.json().get_ref<const std::string&>();
    auto phi = Phi::parse(text);
    if (!phi)
      return v.error(std::string(expected) + ", got " +
                     (text.size() <= 40 ? v.json().dump() : std::string("a long string")));
    return *phi;
  }
  return v.error(std::string(expected) + ", got " + v.json().type_name());
}

std::string Phi::to_string() const {
  if (source_length) return "S";
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  (void)ec;
  return std::string(buf, p);
}

}  // namespace gpstream::stream
