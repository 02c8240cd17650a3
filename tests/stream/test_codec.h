// A small scripted codec for stream tests: lowercase letters and punctuation, one token per character,
// and a word-start twin ("▁a") of each for the first character of later words — so most words are
// multi-token and word starts are marked as in SentencePiece. Template: prompt <p>, source end </s>,
// header <h1><h2>, target end <eos>.
#pragma once

#include <string>

#include "stream/codec.h"

namespace gpstream::testing {

class CharCodec final : public stream::SegmentCodec {
 public:
  static constexpr int32_t kPrompt = 0, kSourceEnd = 1, kHeader1 = 2, kHeader2 = 3, kEos = 4, kFirstChar = 5;
  static constexpr const char* kChars = "abcdefghijklmnopqrstuvwxyz.,!?'";
  static int32_t n_chars() { return 31; }
  int32_t vocab_size() const override { return kFirstChar + 2 * n_chars(); }

  int32_t char_id(char c, bool word_start) const {
    const std::string chars = kChars;
    size_t i = chars.find(c);
    GPS_ASSERT(i != std::string::npos, "CharCodec: unsupported character");
    return kFirstChar + static_cast<int32_t>(i) + (word_start ? n_chars() : 0);
  }
  Result<std::vector<int32_t>> encode(stream::SegmentKind kind, std::string_view text,
                                      bool first) const override {
    using K = stream::SegmentKind;
    switch (kind) {
      case K::Prompt:
        return std::vector<int32_t>{kPrompt};
      case K::SourceEnd:
        return std::vector<int32_t>{kSourceEnd};
      case K::Header:
        return std::vector<int32_t>{kHeader1, kHeader2};
      case K::TargetEnd:
        return std::vector<int32_t>{kEos};
      default:
        break;
    }
    std::vector<int32_t> ids;
    for (size_t i = 0; i < text.size(); ++i) {
      if (std::string(kChars).find(text[i]) == std::string::npos)
        return invalid_argument("CharCodec: bad char");
      ids.push_back(char_id(text[i], i == 0 && !first));
    }
    return ids;
  }
  std::string decode(std::span<const int32_t> ids) const override {
    std::string s;
    for (int32_t id : ids) {
      if (id < kFirstChar || id >= vocab_size()) continue;
      int32_t c = (id - kFirstChar) % n_chars();
      if (id - kFirstChar >= n_chars()) s += ' ';
      s += kChars[c];
    }
    return s;
  }
  bool starts_word(int32_t id) const override { return id >= kFirstChar + n_chars() && id < vocab_size(); }
  bool is_special(int32_t id) const override { return id < kFirstChar; }
};

}  // namespace gpstream::testing
