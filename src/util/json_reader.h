// Typed reading of JSON configuration files (config.json, gpstream.json, training configs, ...).
//
// A JsonReader walks one JSON object; a JsonValue is one value in it. Every error names the file and the path
// of the field inside it ("m/config.json: field 'rope_scaling.factor' must be a number, got string").
// Integers must be integral and inside the caller's range (no double-to-int truncation, no int64 overflow);
// numbers must be finite and inside the caller's range. A reader is strict (UnknownKeys::Refuse: finish()
// refuses any key that was never asked for, for gpstream's own files) or tolerant (UnknownKeys::Ignore: other
// keys are skipped, as transformers does with Hugging Face files). A key asked for and absent, or null,
// counts as absent.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "util/error.h"

namespace gpstream {

enum class UnknownKeys { Refuse, Ignore };

// Parses `text` (nested at most `max_depth` levels, see json_text.h) and requires one JSON object; errors
// name `file`.
Result<nlohmann::json> parse_json_object(std::string_view text, const std::string& file, int max_depth);

class JsonReader;

// One value at `path` inside `file` (path "" is the document itself). An empty `file` leaves the "<file>: "
// prefix out of messages, for parsers whose caller adds it. Refers to the json it was given, which must
// outlive it.
class JsonValue {
 public:
  JsonValue(const nlohmann::json& j, std::string file, std::string path)
      : j_(&j), file_(std::move(file)), path_(std::move(path)) {}

  const nlohmann::json& json() const { return *j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  // "<file>: field '<path>' <what>" (a Format error).
  Error error(const std::string& what) const;

  Result<std::string> string() const;
  Result<bool> boolean() const;
  // An integer in [lo, hi]; a JSON number with a fraction part, or out of range, is refused.
  Result<int64_t> int64(int64_t lo, int64_t hi) const;
  Result<uint64_t> uint64(uint64_t lo, uint64_t hi) const;
  // A finite number in [lo, hi].
  Result<double> number(double lo, double hi) const;
  // Missing fields and wrong types are Format errors, values outside their range OutOfRange errors.

  template <std::integral T>
  Result<T> integer(std::type_identity_t<T> lo = std::numeric_limits<T>::min(),
                    std::type_identity_t<T> hi = std::numeric_limits<T>::max()) const {
    if constexpr (std::is_same_v<T, bool>) {
      static_assert(!std::is_same_v<T, bool>, "use boolean()");
    } else if constexpr (std::is_signed_v<T>) {
      GPS_ASSIGN(int64_t v, int64(lo, hi));
      return static_cast<T>(v);
    } else {
      GPS_ASSIGN(uint64_t v, uint64(lo, hi));
      return static_cast<T>(v);
    }
  }
  // [lo, hi] must lie within T's finite range.
  template <std::floating_point T>
  Result<T> real(double lo, double hi) const {
    GPS_ASSIGN(double v, number(lo, hi));
    return static_cast<T>(v);
  }

  // The elements of an array of at most `max_size` entries, each with its path ("<path>[i]").
  Result<std::vector<JsonValue>> elements(size_t max_size) const;
  // This value as an object, read with `mode`.
  Result<JsonReader> object(UnknownKeys mode) const;

 private:
  Error type_error(const char* expected) const;
  Error range_error(const char* what, const std::string& lo, const std::string& hi) const;

  const nlohmann::json* j_;
  std::string file_;
  std::string path_;
};

// Typed access to the keys of one JSON object. Each key asked for (has, find, require, optional, required,
// ...) is consumed; finish() then refuses the keys never asked for when the reader is strict.
class JsonReader {
 public:
  // `j` must be an object; it is the document's root when `path` is empty.
  static Result<JsonReader> open(const nlohmann::json& j, std::string file, std::string path,
                                 UnknownKeys mode);

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  UnknownKeys mode() const { return mode_; }
  const nlohmann::json& json() const { return *j_; }
  // The path of `key` in this object ("rope_scaling.factor").
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  // "<file>: field '<path>.<key>' <what>" (a Format error), for checks the typed getters do not make.
  Error error(const std::string& key, const std::string& what) const;

  // Consumes `key`; true when it is present and not null.
  bool has(const std::string& key);
  // Consumes `key`; its value, or nothing when absent or null.
  std::optional<JsonValue> find(const std::string& key);
  // Consumes `key`; its value, or an error naming it when absent or null.
  Result<JsonValue> require(const std::string& key);

  // Optional fields: `out` keeps its value (the default) when the key is absent or null.
  Status optional(const std::string& key, std::string& out);
  Status optional(const std::string& key, bool& out);
  template <std::integral T>
  Status optional(const std::string& key, T& out, std::type_identity_t<T> lo = std::numeric_limits<T>::min(),
                  std::type_identity_t<T> hi = std::numeric_limits<T>::max()) {
    auto v = find(key);
    if (!v) return {};
    GPS_ASSIGN(out, v->integer<T>(lo, hi));
    return {};
  }
  template <std::floating_point T>
  Status optional(const std::string& key, T& out, double lo, double hi) {
    auto v = find(key);
    if (!v) return {};
    GPS_ASSIGN(out, v->real<T>(lo, hi));
    return {};
  }

  // Required fields: absent or null is an error naming the key.
  Status required(const std::string& key, std::string& out);
  Status required(const std::string& key, bool& out);
  template <std::integral T>
  Status required(const std::string& key, T& out, std::type_identity_t<T> lo = std::numeric_limits<T>::min(),
                  std::type_identity_t<T> hi = std::numeric_limits<T>::max()) {
    GPS_ASSIGN(JsonValue v, require(key));
    GPS_ASSIGN(out, v.integer<T>(lo, hi));
    return {};
  }
  template <std::floating_point T>
  Status required(const std::string& key, T& out, double lo, double hi) {
    GPS_ASSIGN(JsonValue v, require(key));
    GPS_ASSIGN(out, v.real<T>(lo, hi));
    return {};
  }

  // A nested object read with this reader's mode: nothing when absent or null, an error when not an object.
  Result<std::optional<JsonReader>> optional_object(const std::string& key);
  Result<JsonReader> required_object(const std::string& key);

  // In strict mode, the first key never asked for is an error naming its path and the keys asked for.
  Status finish() const;

 private:
  JsonReader(const nlohmann::json& j, std::string file, std::string path, UnknownKeys mode)
      : j_(&j), file_(std::move(file)), path_(std::move(path)), mode_(mode) {}

  const nlohmann::json* j_;
  std::string file_;
  std::string path_;
  UnknownKeys mode_;
  std::set<std::string> consumed_;
};

}  // namespace gpstream
