#include "tokenizer/detokenizer.h"

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special)
    : tok_(&tokenizer), skip_special_(skip_special) {}

IncrementalDetokenizer::Step IncrementalDetokenizer::push(int32_t id) {
  Step step;
  if (skip_special_ && tok_->is_special(id)) return step;
  step.starts_word = tok_->starts_word(id);
  if (!tok_->token_bytes(id, at_start_, pending_)) return step;  // unknown id: no text, as decode() skips it
  at_start_ = false;  // decoders strip at most the start of the first token's text
  size_t n = complete_utf8_prefix(pending_);
  if (n == 0) return step;
  step.text = sanitize_utf8(std::string_view(pending_).substr(0, n));
  pending_.erase(0, n);
  return step;
}

std::string IncrementalDetokenizer::flush() {
  std::string out = sanitize_utf8(pending_);
  reset();
  return out;
}

void IncrementalDetokenizer::reset() {
  pending_.clear();
  at_start_ = true;
}

}  // namespace gpstream::tokenizer
