// Added (and special) tokens of tokenizer.json ("added_tokens"). They are matched before
// pre-tokenization, leftmost-longest (as Hugging Face's Aho-Corasick set): first the tokens with
// normalized = false on the raw text, then, after normalizing what is left, the tokens with
// normalized = true on the normalized text. lstrip/rstrip absorb whitespace beside a match;
// single_word requires no word character beside it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/normalizer.h"

namespace gpstream::tokenizer {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false, rstrip = false, single_word = false, normalized = false;
};

// A piece of the input after added-token extraction: either an added token (id >= 0) or normalized text.
struct Segment {
  int32_t id = -1;
  std::string text;
  bool at_start = false;
};

class AddedTokenMatcher {
 public:
  void build(const std::vector<const AddedToken*>& tokens, const std::vector<std::string>& patterns);
  bool empty() const { return patterns_ == 0; }
  // Appends the splits of `s` (matches with token ids, the rest with id -1) as [begin, end) spans.
  struct Split {
    size_t begin, end;
    int32_t id;
  };
  void split(std::string_view s, std::vector<Split>& out) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;
    int32_t token = -1;  // index into tokens_
  };
  int32_t child(int32_t node, uint8_t b) const;
  std::vector<Node> nodes_;
  std::vector<const AddedToken*> tokens_;
  bool first_byte_[256] = {};
  size_t patterns_ = 0;
};

class AddedVocabulary {
 public:
  // Move-only: the matchers point into tokens_.
  AddedVocabulary() = default;
  AddedVocabulary(const AddedVocabulary&) = delete;
  AddedVocabulary& operator=(const AddedVocabulary&) = delete;
  AddedVocabulary(AddedVocabulary&&) = default;
  AddedVocabulary& operator=(AddedVocabulary&&) = default;

  // `normalizer` may be null; it is used to normalize the patterns of normalized tokens.
  void set(std::vector<AddedToken> tokens, const Normalizer* normalizer);
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  // Splits `text` into added tokens and normalized text pieces.
  void extract_and_normalize(std::string_view text, const Normalizer* normalizer, bool prefix,
                             std::vector<Segment>& out) const;

 private:
  std::vector<AddedToken> tokens_;
  AddedTokenMatcher raw_, normalized_;
};

}  // namespace gpstream::tokenizer
