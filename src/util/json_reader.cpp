// See json_reader.h.
#include "util/json_reader.h"

#include <charconv>
#include <cmath>

#include "util/json_text.h"

namespace gpstream {
namespace {

using json = nlohmann::json;

// Shortest text that reads back as `v` ("0.1", "1e+20").
std::string number_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "?";
  return std::string(buf, end);
}

// The JSON value as written, shortened for an error message.
std::string shown(const json& v) {
  if (v.is_number_float()) return number_text(v.get<double>());
  if (v.is_number() || v.is_boolean() || v.is_null()) return v.dump();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return s.size() <= 40 ? json(s).dump() : json(s.substr(0, 40)).dump() + "...";
  }
  return v.type_name();
}

// "<file>: ", or nothing for a value whose file the caller names (JsonValue with an empty file).
std::string file_prefix(const std::string& file) {
  return file.empty() ? std::string() : file + ": ";
}

// 2^63 and 2^64 as doubles: the first values no int64 / uint64 holds.
constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

}  // namespace

Result<json> parse_json_object(std::string_view text, const std::string& file, int max_depth) {
  GPS_ASSIGN(json j, parse_json_bounded(text, file, max_depth));
  if (!j.is_object()) return format_error(file + ": not a JSON object (got " + j.type_name() + ")");
  return j;
}

Error JsonValue::error(const std::string& what) const {
  return format_error(file_prefix(file_) + "field '" + path_ + "' " + what);
}

Error JsonValue::type_error(const char* expected) const {
  return error(std::string("must be ") + expected + ", got " + j_->type_name());
}

Error JsonValue::range_error(const char* what, const std::string& lo, const std::string& hi) const {
  return Error(ErrorCode::OutOfRange, file_prefix(file_) + "field '" + path_ + "' must be " + what + " in [" +
                                          lo + ", " + hi + "], got " + shown(*j_));
}

Result<std::string> JsonValue::string() const {
  if (!j_->is_string()) return type_error("a string");
  return j_->get<std::string>();
}

Result<bool> JsonValue::boolean() const {
  if (!j_->is_boolean()) return type_error("true or false");
  return j_->get<bool>();
}

Result<int64_t> JsonValue::int64(int64_t lo, int64_t hi) const {
  auto out = [&] { return range_error("an integer", std::to_string(lo), std::to_string(hi)); };
  int64_t v = 0;
  if (j_->is_number_unsigned()) {
    // Before the signed test: 2^63 and up would read as negative.
    const uint64_t u = j_->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return out();
    v = static_cast<int64_t>(u);
  } else if (j_->is_number_integer()) {
    v = j_->get<int64_t>();
  } else if (j_->is_number_float()) {
    const double d = j_->get<double>();
    if (!std::isfinite(d) || d != std::trunc(d)) return type_error("an integer");
    if (!(d >= -kTwo63 && d < kTwo63)) return out();
    v = static_cast<int64_t>(d);
  } else {
    return type_error("an integer");
  }
  if (v < lo || v > hi) return out();
  return v;
}

Result<uint64_t> JsonValue::uint64(uint64_t lo, uint64_t hi) const {
  auto out = [&] { return range_error("an integer", std::to_string(lo), std::to_string(hi)); };
  uint64_t v = 0;
  if (j_->is_number_unsigned()) {
    v = j_->get<uint64_t>();
  } else if (j_->is_number_integer()) {
    return out();  // nlohmann keeps non-negative integers unsigned: this one is negative
  } else if (j_->is_number_float()) {
    const double d = j_->get<double>();
    if (!std::isfinite(d) || d != std::trunc(d)) return type_error("an integer");
    if (!(d >= 0 && d < kTwo64)) return out();
    v = static_cast<uint64_t>(d);
  } else {
    return type_error("an integer");
  }
  if (v < lo || v > hi) return out();
  return v;
}

Result<double> JsonValue::number(double lo, double hi) const {
  if (!j_->is_number()) return type_error("a number");
  const double v = j_->get<double>();
  if (!(v >= lo && v <= hi)) return range_error("a number", number_text(lo), number_text(hi));
  return v;
}

Result<std::vector<JsonValue>> JsonValue::elements(size_t max_size) const {
  if (!j_->is_array()) return type_error("a list");
  if (j_->size() > max_size)
    return Error(ErrorCode::OutOfRange, file_prefix(file_) + "field '" + path_ + "' has " +
                                            std::to_string(j_->size()) + " entries, more than " +
                                            std::to_string(max_size));
  std::vector<JsonValue> out;
  out.reserve(j_->size());
  for (size_t i = 0; i < j_->size(); ++i)
    out.emplace_back((*j_)[i], file_, path_ + "[" + std::to_string(i) + "]");
  return out;
}

Result<JsonReader> JsonValue::object(UnknownKeys mode) const {
  if (!j_->is_object()) return type_error("an object");
  return JsonReader::open(*j_, file_, path_, mode);
}

Result<JsonReader> JsonReader::open(const nlohmann::json& j, std::string file, std::string path,
                                    UnknownKeys mode) {
  if (!j.is_object()) {
    if (path.empty())
      return format_error(file_prefix(file) + "not a JSON object (got " + j.type_name() + ")");
    return JsonValue(j, std::move(file), std::move(path))
        .error(std::string("must be an object, got ") + j.type_name());
  }
  return JsonReader(j, std::move(file), std::move(path), mode);
}

Error JsonReader::error(const std::string& key, const std::string& what) const {
  return format_error(file_prefix(file_) + "field '" + key_path(key) + "' " + what);
}

bool JsonReader::has(const std::string& key) {
  return find(key).has_value();
}

std::optional<JsonValue> JsonReader::find(const std::string& key) {
  consumed_.insert(key);
  auto it = j_->find(key);
  if (it == j_->end() || it->is_null()) return std::nullopt;
  return JsonValue(*it, file_, key_path(key));
}

Result<JsonValue> JsonReader::require(const std::string& key) {
  auto v = find(key);
  if (!v) return format_error(file_prefix(file_) + "missing field '" + key_path(key) + "'");
  return *v;
}

Status JsonReader::optional(const std::string& key, std::string& out) {
  auto v = find(key);
  if (!v) return {};
  GPS_ASSIGN(out, v->string());
  return {};
}

Status JsonReader::optional(const std::string& key, bool& out) {
  auto v = find(key);
  if (!v) return {};
  GPS_ASSIGN(out, v->boolean());
  return {};
}

Status JsonReader::required(const std::string& key, std::string& out) {
  GPS_ASSIGN(JsonValue v, require(key));
  GPS_ASSIGN(out, v.string());
  return {};
}

Status JsonReader::required(const std::string& key, bool& out) {
  GPS_ASSIGN(JsonValue v, require(key));
  GPS_ASSIGN(out, v.boolean());
  return {};
}

Result<std::optional<JsonReader>> JsonReader::optional_object(const std::string& key) {
  auto v = find(key);
  if (!v) return std::optional<JsonReader>();
  GPS_ASSIGN(JsonReader r, v->object(mode_));
  return std::optional<JsonReader>(std::move(r));
}

Result<JsonReader> JsonReader::required_object(const std::string& key) {
  GPS_ASSIGN(JsonValue v, require(key));
  return v.object(mode_);
}

Status JsonReader::finish() const {
  if (mode_ == UnknownKeys::Ignore) return {};
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    if (consumed_.count(it.key())) continue;
    std::string known;
    for (const std::string& k : consumed_) known += (known.empty() ? "" : " ") + k;
    return format_error(file_prefix(file_) + "unknown key '" + key_path(it.key()) + "'" +
                        (known.empty() ? std::string() : " (known: " + known + ")"));
  }
  return {};
}

}  // namespace gpstream
