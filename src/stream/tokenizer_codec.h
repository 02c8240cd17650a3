// TokenizerCodec: the SegmentCodec of a real tokenizer and prompt template — tokenizer::SegmentEncoder
// (gpe.md §2 per-segment encoding, shared with train/) plus word decoding and word-start detection.
#pragma once

#include <memory>

#include "stream/codec.h"
#include "tokenizer/segment_encoder.h"

namespace gpstream::stream {

class TokenizerCodec final : public SegmentCodec {
 public:
  // `tmpl` with languages already substituted.
  TokenizerCodec(std::shared_ptr<const tokenizer::Tokenizer> tok, tokenizer::Template tmpl)
      : tok_(std::move(tok)), enc_(*tok_, std::move(tmpl)) {}

  Result<std::vector<int32_t>> encode(SegmentKind kind, std::string_view text, bool first) const override;
  std::string decode(std::span<const int32_t> ids) const override { return tok_->decode(ids, true); }
  bool starts_word(int32_t id) const override { return tok_->starts_word(id); }
  bool is_special(int32_t id) const override { return tok_->is_special(id); }
  int32_t vocab_size() const override { return tok_->vocab_size(); }
  const tokenizer::Tokenizer& tokenizer() const { return *tok_; }
  const tokenizer::SegmentEncoder& segment_encoder() const { return enc_; }

 private:
  std::shared_ptr<const tokenizer::Tokenizer> tok_;
  tokenizer::SegmentEncoder enc_;
};

}  // namespace gpstream::stream
