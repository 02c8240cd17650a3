// Chunked text → complete words.
#include "serve/word_buffer.h"

#include "tokenizer/segment_encoder.h"
#include "tokenizer/unicode.h"

namespace gpstream::serve {

std::vector<std::string> WordBuffer::append(std::string_view chunk) {
  pending_.append(chunk);
  // The last complete whitespace code point ends the complete part; what follows stays pending. A
  // UTF-8 sequence cut at the chunk end is incomplete, so it can never be taken for whitespace.
  const std::string_view text(pending_);
  size_t cut = 0;
  for (size_t i = 0; i < text.size();) {
    if (tokenizer::valid_sequence_length(text, i) == 0) {
      ++i;
      continue;
    }
    const bool space = tokenizer::is_unicode_whitespace(tokenizer::next_code_point(text, i));
    if (space) cut = i;
  }
  if (cut == 0) return {};
  std::vector<std::string> words = tokenizer::split_words(text.substr(0, cut));
  pending_.erase(0, cut);
  return words;
}

std::vector<std::string> WordBuffer::finish() {
  std::vector<std::string> words = tokenizer::split_words(pending_);
  pending_.clear();
  return words;
}

}  // namespace gpstream::serve
