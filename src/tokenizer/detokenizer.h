// Incremental detokenizer for streaming: fed ids one at a time, it returns only complete UTF-8 text
// (bytes of a character split across tokens are held back until the character is complete) and tells
// whether each token starts a new word (its text begins with whitespace: ' ', '▁', byte-level 'Ġ').
// The concatenation of everything returned plus flush() equals Tokenizer::decode of all the ids for
// valid output; an ill-formed byte run becomes U+FFFD per maximal ill-formed subpart. Decoders that
// cannot work token by token (a Replace after ByteLevel, ...) fall back to re-decoding the whole stream
// on each token (quadratic, rare), holding back trailing U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace gpstream::tokenizer {

class IncrementalDetokenizer {
 public:
  struct Step {
    std::string text;          // complete UTF-8 text released by this token (may be empty)
    bool starts_word = false;  // the token's own text begins with whitespace
  };

  // `skip_special`: special tokens add no text.
  explicit IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special = false);

  Step push(int32_t id);
  // Releases held bytes (an incomplete character at the end becomes U+FFFD) and starts a new stream.
  std::string flush();
  void reset();
  // Bytes held back (an incomplete UTF-8 sequence).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tok_;
  bool skip_special_;
  bool at_start_ = true;  // before the first token: decoders strip a leading space there
  std::string pending_;
  // Fallback (no per-token decoding): every id so far and the text already released.
  std::vector<int32_t> ids_;
  std::string released_;
};

}  // namespace gpstream::tokenizer
