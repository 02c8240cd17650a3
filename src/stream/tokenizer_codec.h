// TokenizerCodec: the SegmentCodec of a real tokenizer and prompt template (gpe.md §2). The prompt is
// encoded with the tokenizer's prefix rules; every later segment with them off; words after the first
// of their side carry their leading space (" devons"), which byte-level BPE keeps in the first token
// and SentencePiece-style BPE turns into "▁devons". No post-processor (BOS/EOS) runs on a segment.
#pragma once

#include <memory>

#include "stream/codec.h"
#include "stream/model_meta.h"
#include "tokenizer/tokenizer.h"

namespace gpstream::stream {

class TokenizerCodec final : public SegmentCodec {
 public:
  TokenizerCodec(std::shared_ptr<const tokenizer::Tokenizer> tok, PromptTemplate tmpl)
      : tok_(std::move(tok)), tmpl_(std::move(tmpl)) {}

  Result<std::vector<int32_t>> encode(SegmentKind kind, std::string_view text, bool first) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  bool starts_word(int32_t id) const override { return tok_->starts_word(id); }
  bool is_special(int32_t id) const override { return tok_->is_special(id); }
  int32_t vocab_size() const override { return tok_->vocab_size(); }
  const tokenizer::Tokenizer& tokenizer() const { return *tok_; }
  const PromptTemplate& prompt_template() const { return tmpl_; }

 private:
  std::shared_ptr<const tokenizer::Tokenizer> tok_;
  PromptTemplate tmpl_;
};

}  // namespace gpstream::stream
