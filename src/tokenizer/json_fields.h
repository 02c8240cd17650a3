// Typed access to tokenizer.json fields: every getter checks presence and type and returns an Error
// naming the field path ("pre_tokenizer.pretokenizers[1].behavior") instead of throwing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "util/error.h"

namespace gpstream::tokenizer {

using Json = nlohmann::json;

inline Error json_type_error(const std::string& where, const char* expected, const Json& got) {
  return format_error(where + ": expected " + expected + ", got " + got.type_name());
}

inline Result<const Json*> json_field(const Json& obj, const std::string& key, const std::string& where) {
  if (!obj.is_object()) return json_type_error(where, "an object", obj);
  auto it = obj.find(key);
  if (it == obj.end()) return format_error(where + ": missing field \"" + key + "\"");
  return &*it;
}

inline Result<std::string> json_string(const Json& obj, const std::string& key, const std::string& where) {
  GPS_ASSIGN(const Json* v, json_field(obj, key, where));
  if (!v->is_string()) return json_type_error(where + "." + key, "a string", *v);
  return v->get<std::string>();
}

// A string field that may be absent or null.
inline Result<std::optional<std::string>> json_opt_string(const Json& obj, const std::string& key,
                                                          const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return json_type_error(where + "." + key, "a string", *it);
  return std::optional<std::string>(it->get<std::string>());
}

inline Result<bool> json_bool(const Json& obj, const std::string& key, const std::string& where,
                              std::optional<bool> fallback = std::nullopt) {
  auto it = obj.find(key);
  if (it == obj.end() || (it->is_null() && fallback)) {
    if (fallback) return *fallback;
    return format_error(where + ": missing field \"" + key + "\"");
  }
  if (!it->is_boolean()) return json_type_error(where + "." + key, "a boolean", *it);
  return it->get<bool>();
}

// A non-negative integer below `limit`.
inline Result<int64_t> json_index(const Json& v, const std::string& where, int64_t limit) {
  if (!v.is_number_integer()) return json_type_error(where, "an integer", v);
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u >= static_cast<uint64_t>(limit))
      return out_of_range(where + ": " + std::to_string(u) + " is too large");
    return static_cast<int64_t>(u);
  }
  auto i = v.get<int64_t>();
  if (i < 0) return out_of_range(where + ": negative value " + std::to_string(i));
  if (i >= limit) return out_of_range(where + ": " + std::to_string(i) + " is too large");
  return i;
}

inline Result<int64_t> json_index_field(const Json& obj, const std::string& key, const std::string& where,
                                        int64_t limit, std::optional<int64_t> fallback = std::nullopt) {
  auto it = obj.is_object() ? obj.find(key) : obj.end();
  if (it == obj.end() || it->is_null()) {
    if (fallback) return *fallback;
    return format_error(where + ": missing field \"" + key + "\"");
  }
  return json_index(*it, where + "." + key, limit);
}

}  // namespace gpstream::tokenizer
