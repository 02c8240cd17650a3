// Per-segment encoder of gpe.md §2, used by both train/ and stream/ so their token boundaries agree:
// the prompt, each source word, the source end, the header, each target word and the target end are
// encoded separately and concatenated. Words after the first of their side carry their leading space
// (byte-level BPE encodes " devons"); every segment after the prompt is encoded with the prefix rules
// off (Prepend/Metaspace/add_prefix_space), so SentencePiece-style " devons" → "▁devons", not
// "▁▁devons"; no post-processor (BOS/EOS) runs: the template text carries any special tokens.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/prompt_template.h"
#include "tokenizer/tokenizer.h"

namespace gpstream::tokenizer {

class SegmentEncoder {
 public:
  // `tmpl` with languages already substituted (Template::with_languages). Keeps a reference to `tokenizer`.
  SegmentEncoder(const Tokenizer& tokenizer, Template tmpl);

  std::vector<int32_t> encode_prompt() const;
  std::vector<int32_t> encode_source_word(std::string_view word, bool first) const;
  std::vector<int32_t> encode_source_end() const;
  std::vector<int32_t> encode_header() const;
  std::vector<int32_t> encode_target_word(std::string_view word, bool first) const;
  std::vector<int32_t> encode_target_end() const;

  // Appending forms of the above.
  void append_word(std::string_view word, bool first, std::vector<int32_t>& out) const;
  // The whole sequence: prompt, source words, source end, header, target words, target end.
  std::vector<int32_t> encode_all(const std::vector<std::string>& source_words,
                                  const std::vector<std::string>& target_words) const;

  const Template& tmpl() const { return tmpl_; }
  const Tokenizer& tokenizer() const { return *tok_; }

 private:
  std::vector<int32_t> encode_text(std::string_view text, bool prefix) const;

  const Tokenizer* tok_;
  Template tmpl_;
  // Encoded once: template parts do not change.
  std::vector<int32_t> prompt_, source_end_, header_, target_end_;
};

// Splits text into whitespace-separated words (gpe.md §2 units).
std::vector<std::string> split_words(std::string_view text);

}  // namespace gpstream::tokenizer
