// Decoders of tokenizer.json ("decoder"): ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace and
// Sequence, with Hugging Face's semantics (each step maps the list of token strings to a new list; the
// result is their concatenation). Invalid UTF-8 from ByteLevel becomes U+FFFD per maximal ill-formed
// subpart (Rust's from_utf8_lossy); ByteFallback turns an invalid byte run into one U+FFFD per byte.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/json_sections.h"
#include "tokenizer/regex.h"
#include "util/error.h"

namespace gpstream::tokenizer {

struct Decoder {
  enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, Sequence };
  Kind kind = Kind::Sequence;
  Pattern pattern;      // Replace
  std::string content;  // Replace: replacement; Strip: the char to strip; Metaspace: the replacement char
  size_t strip_start = 0, strip_stop = 0;
  bool metaspace_prefix = true;  // Metaspace: prepend_scheme != never
  std::vector<Decoder> children;

  // `where` is the field path for errors ("decoder"). Sequences nest at most kMaxSectionDepth levels.
  static Result<Decoder> from_json(const Json& j, const std::string& where);
  // from_json's recursion: `path` grows and shrinks in place (one buffer for the whole walk, not a copy per
  // level); `depth` is the level of `j` (1 for the section itself).
  static Result<Decoder> parse(const Json& j, std::string& path, int depth);

  void decode_chain(std::vector<std::string>& tokens) const;
  std::string decode(std::vector<std::string> tokens) const;

  // Streaming support: appends the bytes one token contributes to the decoded text (`first`: the first
  // token of a stream, where Strip/Metaspace remove a leading space). Returns false if the chain holds a
  // step that cannot be applied token by token (e.g. a Replace after ByteLevel, which sees joined text).
  bool token_bytes(const std::string& token, bool first, std::string& out) const;
};

}  // namespace gpstream::tokenizer
