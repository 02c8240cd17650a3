// Patterns of tokenizer.json ({"String": ...} or {"Regex": ...}): a literal or a PCRE2 regex compiled with
// UTF and Unicode properties (UCP) and JIT, as the Split pre-tokenizer and Replace normalizer/decoder need.
// Input must be valid UTF-8 (the tokenizer sanitizes it first). Thread-safe: matching allocates nothing
// shared.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.h"

namespace gpstream::tokenizer {

using Span = std::pair<size_t, size_t>;  // [begin, end) byte offsets

class Pattern {
 public:
  static Result<Pattern> literal(std::string text);
  static Result<Pattern> regex(const std::string& expression);
  Pattern() = default;

  // Non-overlapping matches, left to right (empty matches are skipped).
  void find_all(std::string_view s, std::vector<Span>& out) const;
  const std::string& source() const { return source_; }

 private:
  struct Code;
  std::string source_;
  std::shared_ptr<const Code> code_;
};

}  // namespace gpstream::tokenizer
