// WordBuffer: turns source text arriving in arbitrary chunks (whole words, several words, or a word cut
// in the middle, even inside a UTF-8 sequence) into complete words. A word is complete once whitespace
// follows it (the Unicode White_Space set, as tokenizer::split_words); the trailing partial word is held
// back until more text or the end of the source arrives. It decides nothing else: no limits, no model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpstream::serve {

class WordBuffer {
 public:
  // Appends a chunk; returns the words it completed, in order.
  std::vector<std::string> append(std::string_view chunk);
  // The source has ended: returns the held-back word (if any) and empties the buffer.
  std::vector<std::string> finish();
  // Bytes held back (an unfinished word).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  std::string pending_;
};

}  // namespace gpstream::serve
