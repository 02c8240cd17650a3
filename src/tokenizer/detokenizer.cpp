#include "tokenizer/detokenizer.h"

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special)
    : tok_(&tokenizer), skip_special_(skip_special) {}

IncrementalDetokenizer::Step IncrementalDetokenizer::push(int32_t id) {
  Step step;
  if (skip_special_ && tok_->is_special(id)) return step;
  step.starts_word = tok_->starts_word(id);
  if (!tok_->incremental_decoding()) {
    ids_.push_back(id);
    std::string full = tok_->decode(ids_, skip_special_);
    size_t end = full.size();
    while (end >= 3 && full.compare(end - 3, 3, "\xEF\xBF\xBD") == 0) end -= 3;  // maybe an unfinished char
    if (end > released_.size() && full.compare(0, released_.size(), released_) == 0) {
      step.text = full.substr(released_.size(), end - released_.size());
      released_ += step.text;
    }
    return step;
  }
  if (!tok_->token_bytes(id, at_start_, pending_)) return step;  // unknown id: no text, as decode() skips it
  at_start_ = false;  // decoders strip at most the start of the first token's text
  size_t n = complete_utf8_prefix(pending_);
  if (n == 0) return step;
  step.text = sanitize_utf8(std::string_view(pending_).substr(0, n));
  pending_.erase(0, n);
  return step;
}

std::string IncrementalDetokenizer::flush() {
  if (!tok_->incremental_decoding()) {
    std::string full = tok_->decode(ids_, skip_special_);
    std::string out =
        full.compare(0, released_.size(), released_) == 0 ? full.substr(released_.size()) : std::string();
    reset();
    return out;
  }
  std::string out = sanitize_utf8(pending_);
  reset();
  return out;
}

void IncrementalDetokenizer::reset() {
  pending_.clear();
  at_start_ = true;
  ids_.clear();
  released_.clear();
}

}  // namespace gpstream::tokenizer
