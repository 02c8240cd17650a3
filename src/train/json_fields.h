// Strict, typed reading of JSON configuration objects (train and speech-train configs): every key must be
// consumed, wrong types and out-of-range values are errors naming the key.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <type_traits>

#include "util/error.h"

namespace gpstream::train {

// Typed access to one JSON object; every key must be consumed (unknown keys are errors).
struct Obj {
  using json = nlohmann::json;
  const json& j;
  std::string where;
  std::set<std::string> seen;

  bool has(const std::string& k) {
    seen.insert(k);
    return j.contains(k) && !j[k].is_null();
  }
  Error bad(const std::string& k, const std::string& what) const {
    return format_error(where + ": '" + k + "' must be " + what);
  }
  Status str(const std::string& k, std::string& out) {
    if (!has(k)) return {};
    if (!j[k].is_string()) return bad(k, "a string");
    out = j[k].get<std::string>();
    return {};
  }
  template <typename T>
  Status num(const std::string& k, T& out, double lo, double hi) {
    if (!has(k)) return {};
    if (!j[k].is_number()) return bad(k, "a number");
    const double v = j[k].get<double>();
    if (std::is_integral_v<T> && v != static_cast<double>(static_cast<int64_t>(v)))
      return bad(k, "an integer");
    if (!(v >= lo && v <= hi)) return bad(k, "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out = static_cast<T>(v);
    return {};
  }
  Status boolean(const std::string& k, bool& out) {
    if (!has(k)) return {};
    if (!j[k].is_boolean()) return bad(k, "true or false");
    out = j[k].get<bool>();
    return {};
  }
  Status done() const {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!seen.count(it.key())) return format_error(where + ": unknown key '" + it.key() + "'");
    return {};
  }
};

// Parses a whole config text that must be one JSON object; errors name `where`.
inline Result<nlohmann::json> parse_json_object(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return format_error(where + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) return format_error(where + ": not a JSON object");
  return j;
}

inline Result<const nlohmann::json*> object(const nlohmann::json& j, const std::string& k, const std::string& where) {
  if (!j.contains(k) || j[k].is_null()) return static_cast<const nlohmann::json*>(nullptr);
  if (!j[k].is_object()) return format_error(where + ": '" + k + "' must be an object");
  return &j[k];
}

}  // namespace gpstream::train
