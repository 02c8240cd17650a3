// Prompt templates for streaming translation (gpe.md §2, §9): four strings around the source and target
// words — prompt, source end, header, target end — with {src}/{tgt} standing for language names.
// Built in: the reference templates of gpe.md §9 (qwen, llama3, gemma2, byte for byte), "phi3" (Phi-3's
// chat format: <|user|>\n … <|end|>\n<|assistant|>\n … <|end|>\n; the reference has none) and "gpstream",
// the template of gpstream's own models, whose special tokens the BPE trainer adds (kGpstreamSpecialTokens).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::tokenizer {

struct Template {
  std::string name;
  std::string prompt, source_end, header, target_end;

  // Built-in template by name: "qwen", "llama3", "gemma2", "phi3", "gpstream".
  static Result<Template> builtin(std::string_view name);
  static std::vector<std::string> builtin_names();

  // A copy with {src} and {tgt} replaced by the language names in all four parts.
  Template with_languages(std::string_view src, std::string_view tgt) const;
  // The special tokens the template writes: every "<...>" in its four parts whose inside is not empty and
  // holds no space, '<', '{' or '}' ("<|im_start|>", "<bos>", "</src>"), each once, in order of appearance.
  std::vector<std::string> special_tokens() const;
  // prompt + source words joined by ' ' + source end + header + target words joined by ' ' + target end.
  std::string joined(const std::vector<std::string>& source_words,
                     const std::vector<std::string>& target_words) const;
};

// English name of an ISO 639-1 code ("fr" -> "French"); names and unknown codes are returned unchanged.
std::string language_name(std::string_view code);

// Special tokens of the gpstream template, in id order from 0 (the trainer's default special tokens).
inline const std::vector<std::string> kGpstreamSpecialTokens = {"<pad>", "<s>", "</s>", "</src>"};

}  // namespace gpstream::tokenizer
