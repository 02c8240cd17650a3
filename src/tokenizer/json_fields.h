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

// Deepest nesting of the tokenizer.json sections read by recursive parsers (normalizer, pre_tokenizer,
// decoder, post_processor): a section is 1 level, each Sequence around it one more. Real tokenizers use 1-2
// levels; the bound keeps the parsers' stack (and the pipelines they build) small on hostile files.
inline constexpr int kMaxSectionDepth = 32;
// Deepest nesting of JSON arrays and objects accepted in tokenizer.json (json_loader.h), above what
// kMaxSectionDepth sections need (about 2 per level), so nothing later walks a deeper document.
inline constexpr int kMaxJsonDepth = 128;

// The error for a Sequence whose steps would be more than kMaxSectionDepth levels deep: names the section
// (the first component of `path`) and the limit, not the path of every level.
inline Error section_depth_error(const std::string& path) {
  return out_of_range(path.substr(0, path.find_first_of(".[")) + ": Sequences nested more than " +
                      std::to_string(kMaxSectionDepth) + " levels deep");
}

// Appends ".<list>[<i>]" to `path` (the field path of a Sequence's step i; the caller shrinks it back).
inline void append_step(std::string& path, const char* list, size_t i) {
  path.append(".").append(list).append("[").append(std::to_string(i)).append("]");
}

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
