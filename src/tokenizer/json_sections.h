// What the tokenizer.json section parsers (normalizer, pre_tokenizer, decoder, post_processor, model) share:
// nesting limits for Sequences, the field path of a Sequence's step, and the {"String"}/{"Regex"} pattern
// form. Fields are read with util/json_reader.h (tolerant: keys gpstream does not read are skipped, as
// the `tokenizers` library does); a section's errors name its field path ("pre_tokenizer.pretokenizers[1]
// .behavior"), and Tokenizer::from_json_text adds the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tokenizer/regex.h"
#include "util/error.h"
#include "util/json_reader.h"

namespace gpstream::tokenizer {

using Json = nlohmann::json;

// Deepest nesting of the tokenizer.json sections read by recursive parsers (normalizer, pre_tokenizer,
// decoder, post_processor): a section is 1 level, each Sequence around it one more. Real tokenizers use 1-2
// levels; the bound keeps the parsers' stack (and the pipelines they build) small on hostile files.
inline constexpr int kMaxSectionDepth = 32;
// Deepest nesting of JSON arrays and objects accepted in tokenizer.json (json_loader.h), above what
// kMaxSectionDepth sections need (about 2 per level), so nothing later walks a deeper document.
inline constexpr int kMaxJsonDepth = 128;
// Most steps one Sequence may list.
inline constexpr size_t kMaxSequenceSteps = 1024;

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

// A section object read tolerantly, its errors naming `path` (the file is added by the caller).
inline Result<JsonReader> open_section(const Json& j, const std::string& path) {
  return JsonValue(j, "", path).object(UnknownKeys::Ignore);
}

// The pattern at `key` of `section`: {"String": text} (matched literally) or {"Regex": expression}.
inline Result<Pattern> read_pattern(JsonReader& section, const std::string& key) {
  GPS_ASSIGN(JsonValue value, section.require(key));
  const Error form = value.error("must be {\"String\": ...} or {\"Regex\": ...}");
  if (!value.json().is_object()) return form;
  GPS_ASSIGN(JsonReader p, value.object(UnknownKeys::Ignore));
  auto in_context = [&](Result<Pattern> r) -> Result<Pattern> {
    if (!r.ok()) return r.error().with_context(value.path());
    return r;
  };
  if (auto text = p.find("String"); text && text->json().is_string())
    return in_context(Pattern::literal(text->json().get<std::string>()));
  if (auto expr = p.find("Regex"); expr && expr->json().is_string())
    return in_context(Pattern::regex(expr->json().get<std::string>()));
  return form;
}

}  // namespace gpstream::tokenizer
