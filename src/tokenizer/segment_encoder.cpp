#include "tokenizer/segment_encoder.h"

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

SegmentEncoder::SegmentEncoder(const Tokenizer& tokenizer, Template tmpl)
    : tok_(&tokenizer), tmpl_(std::move(tmpl)) {
  prompt_ = encode_text(tmpl_.prompt, true);
  source_end_ = encode_text(tmpl_.source_end, false);
  header_ = encode_text(tmpl_.header, false);
  target_end_ = encode_text(tmpl_.target_end, false);
}

std::vector<int32_t> SegmentEncoder::encode_text(std::string_view text, bool prefix) const {
  std::vector<int32_t> out;
  EncodeOptions o;
  o.add_special = false;
  o.prefix = prefix;
  tok_->encode(text, o, out);
  return out;
}

void SegmentEncoder::append_word(std::string_view word, bool first, std::vector<int32_t>& out) const {
  EncodeOptions o;
  o.add_special = false;
  o.prefix = false;
  if (first) {
    tok_->encode(word, o, out);
    return;
  }
  std::string spaced;
  spaced.reserve(word.size() + 1);
  spaced.push_back(' ');
  spaced.append(word);
  tok_->encode(spaced, o, out);
}

std::vector<int32_t> SegmentEncoder::encode_prompt() const {
  return prompt_;
}
std::vector<int32_t> SegmentEncoder::encode_source_end() const {
  return source_end_;
}
std::vector<int32_t> SegmentEncoder::encode_header() const {
  return header_;
}
std::vector<int32_t> SegmentEncoder::encode_target_end() const {
  return target_end_;
}

std::vector<int32_t> SegmentEncoder::encode_source_word(std::string_view word, bool first) const {
  std::vector<int32_t> out;
  append_word(word, first, out);
  return out;
}

std::vector<int32_t> SegmentEncoder::encode_target_word(std::string_view word, bool first) const {
  return encode_source_word(word, first);
}

std::vector<int32_t> SegmentEncoder::encode_all(const std::vector<std::string>& source_words,
                                                const std::vector<std::string>& target_words) const {
  std::vector<int32_t> out = prompt_;
  for (size_t i = 0; i < source_words.size(); ++i) append_word(source_words[i], i == 0, out);
  out.insert(out.end(), source_end_.begin(), source_end_.end());
  out.insert(out.end(), header_.begin(), header_.end());
  for (size_t i = 0; i < target_words.size(); ++i) append_word(target_words[i], i == 0, out);
  out.insert(out.end(), target_end_.begin(), target_end_.end());
  return out;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  for (size_t i = 0; i < text.size();) {
    size_t b = i;
    bool space = false;
    if (valid_sequence_length(text, i) == 0) {
      ++i;  // an ill-formed byte belongs to the word (the tokenizer repairs it)
    } else {
      space = is_unicode_whitespace(next_code_point(text, i));
    }
    if (space) {
      if (!cur.empty()) words.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.append(text.substr(b, i - b));
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

}  // namespace gpstream::tokenizer
