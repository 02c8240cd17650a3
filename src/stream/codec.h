// SegmentCodec: what a streaming Session needs from a tokenizer and a prompt template — per-segment
// encoding (gpe.md §2: prompt, each source word, source end, header, each target word, target end,
// encoded separately and concatenated) and decoding of generated ids into words. The tokenizer layer
// provides the real implementation (tokenizer_codec.h); tests provide small scripted ones.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::stream {

enum class SegmentKind { Prompt, SourceWord, SourceEnd, Header, TargetWord, TargetEnd };

class SegmentCodec {
 public:
  virtual ~SegmentCodec() = default;
  // Encodes one segment. `first`: the first word of its side (no leading space).
  virtual Result<std::vector<int32_t>> encode(SegmentKind kind, std::string_view text, bool first) const = 0;
  // Text of a run of generated ids (one target word's tokens), without special tokens.
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
  // True when the token's text begins with whitespace (' ', '▁', byte-level 'Ġ'): it starts a new word.
  virtual bool starts_word(int32_t id) const = 0;
  // True for special/control tokens, which never appear in a hypothesis.
  virtual bool is_special(int32_t id) const = 0;
  virtual int32_t vocab_size() const = 0;
};

// The most tokens one template segment (prompt, header, end markers) may encode to. A prompt is prefilled
// before the first word, at a cost that grows with the square of its length (a 4,000-word prompt took a
// minute), and every source and target row attends to it: templates are instructions, not documents.
constexpr size_t kMaxTemplateTokens = 1024;

// Every id of an encoded template segment lies in the model's vocabulary (a tokenizer and a model that do
// not belong together are refused before anything is forwarded), and the segment is at most
// kMaxTemplateTokens long.
inline Status check_template_ids(std::span<const int32_t> ids, int32_t n_vocab) {
  if (ids.size() > kMaxTemplateTokens)
    return out_of_range(
        "a template segment of " + std::to_string(ids.size()) + " tokens: at most " +
        std::to_string(kMaxTemplateTokens) +
        " (the prompt is prefilled before the first word, at a cost quadratic in its length)");
  for (int32_t id : ids)
    if (id < 0 || id >= n_vocab)
      return out_of_range("template token id " + std::to_string(id) + " is outside the model's vocabulary");
  return {};
}

}  // namespace gpstream::stream
