// Normalizers of tokenizer.json ("normalizer"): NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip,
// StripAccents and Sequence, applied to each piece of text between added tokens (as Hugging Face
// tokenizers does). Offsets are not tracked: gpstream needs ids, not alignments.
// `prefix` = false turns Prepend off, for the later segments of a per-segment encoding (gpe.md §2).
#pragma once

#include <string>
#include <vector>

#include "tokenizer/json_sections.h"
#include "tokenizer/regex.h"
#include "util/error.h"

namespace gpstream::tokenizer {

struct Normalizer {
  enum class Kind { Nfc, Nfd, Nfkc, Nfkd, Lowercase, Prepend, Replace, Strip, StripAccents, Sequence };
  Kind kind = Kind::Sequence;
  std::string text;                              // Prepend: the prefix; Replace: the replacement
  Pattern pattern;                               // Replace
  bool strip_left = false, strip_right = false;  // Strip
  std::vector<Normalizer> children;              // Sequence

  // Parses one normalizer object; `where` names it in errors.
  // `where` is the field path for errors ("normalizer"). Sequences nest at most kMaxSectionDepth levels.
  static Result<Normalizer> from_json(const Json& j, const std::string& where);
  // from_json's recursion: `path` grows and shrinks in place (one buffer for the whole walk, not a copy per
  // level); `depth` is the level of `j` (1 for the section itself).
  static Result<Normalizer> parse(const Json& j, std::string& path, int depth);

  void apply(std::string& s, bool prefix) const;
  // True if any Prepend is present (SentencePiece-style prefix rule).
  bool has_prepend() const;
};

// Unicode normalization helpers (utf8proc); `s` must be valid UTF-8.
std::string unicode_nfc(const std::string& s);
std::string unicode_normalize(const std::string& s, bool compose, bool compat);

}  // namespace gpstream::tokenizer
