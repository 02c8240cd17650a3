// Pre-tokenizers of tokenizer.json ("pre_tokenizer"): Split (literal or PCRE2 regex, every `behavior`,
// `invert`), ByteLevel (GPT-2 regex on or off, add_prefix_space; maps bytes to the byte-level alphabet),
// Metaspace (replacement, prepend_scheme always/first/never, split), Whitespace, WhitespaceSplit, Digits
// and Sequence. A pre-tokenizer cuts each piece of text into smaller pieces; the BPE model then encodes
// each piece on its own. `prefix` = false turns the prefix rules off (ByteLevel add_prefix_space,
// Metaspace prepending), for the later segments of a per-segment encoding (gpe.md §2).
#pragma once

#include <string>
#include <vector>

#include "tokenizer/json_sections.h"
#include "tokenizer/regex.h"
#include "util/error.h"

namespace gpstream::tokenizer {

struct Piece {
  std::string text;
  bool at_start = false;  // begins at offset 0 of the original input (Metaspace prepend_scheme "first")
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct PreTokenizer {
  enum class Kind { Split, ByteLevel, Metaspace, Whitespace, WhitespaceSplit, Digits, Sequence };
  enum class Prepend { Always, First, Never };
  Kind kind = Kind::Sequence;
  Pattern pattern;  // Split, ByteLevel (when use_regex), Whitespace
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;
  bool add_prefix_space = false;  // ByteLevel
  bool use_regex = true;          // ByteLevel
  std::string replacement;        // Metaspace (one character, UTF-8)
  Prepend prepend = Prepend::Always;
  bool split = true;               // Metaspace
  bool individual_digits = false;  // Digits
  std::vector<PreTokenizer> children;

  // `where` is the field path for errors ("pre_tokenizer"). Sequences nest at most kMaxSectionDepth levels.
  static Result<PreTokenizer> from_json(const Json& j, const std::string& where);
  // from_json's recursion: `path` grows and shrinks in place (one buffer for the whole walk, not a copy per
  // level); `depth` is the level of `j` (1 for the section itself).
  static Result<PreTokenizer> parse(const Json& j, std::string& path, int depth);

  // Replaces `pieces` by their pre-tokenized sub-pieces (empty pieces are dropped).
  void apply(std::vector<Piece>& pieces, bool prefix) const;
  bool is_byte_level() const;
  bool has_metaspace_prefix() const;
};

// The GPT-2 pre-tokenization regex used by ByteLevel with use_regex = true.
extern const char* const kGpt2Regex;
// The Split regexes in front of ByteLevel (use_regex = false) in Llama 3's and Qwen2's tokenizer.json.
inline constexpr const char* kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr const char* kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace gpstream::tokenizer
