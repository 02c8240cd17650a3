// ByteCodec: a tokenizer-free SegmentCodec over UTF-8 bytes (ids 0..255) plus four control tokens for the
// gpstream template (prompt <s>, source end </src>, header <tgt>, target end </s>). Later words of a side
// carry their leading space as byte 32, so a word starts with id 32 (gpe.md §2). Tests and quick
// experiments train with it; real models use stream::TokenizerCodec.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stream/codec.h"

namespace gpstream::train {

class ByteCodec final : public stream::SegmentCodec {
 public:
  static constexpr int32_t kPrompt = 256, kSourceEnd = 257, kHeader = 258, kTargetEnd = 259, kVocab = 260;

  Result<std::vector<int32_t>> encode(stream::SegmentKind kind, std::string_view text,
                                      bool first) const override {
    switch (kind) {
      case stream::SegmentKind::Prompt:
        return std::vector<int32_t>{kPrompt};
      case stream::SegmentKind::SourceEnd:
        return std::vector<int32_t>{kSourceEnd};
      case stream::SegmentKind::Header:
        return std::vector<int32_t>{kHeader};
      case stream::SegmentKind::TargetEnd:
        return std::vector<int32_t>{kTargetEnd};
      default:
        break;
    }
    std::vector<int32_t> ids;
    if (!first) ids.push_back(' ');
    for (unsigned char ch : text) ids.push_back(ch);
    return ids;
  }
  std::string decode(std::span<const int32_t> ids) const override {
    std::string s;
    for (int32_t id : ids)
      if (id >= 0 && id < 256) s.push_back(static_cast<char>(id));
    return s;
  }
  bool starts_word(int32_t id) const override { return id == ' '; }
  bool is_special(int32_t id) const override { return id >= 256; }
  int32_t vocab_size() const override { return kVocab; }
};

}  // namespace gpstream::train
