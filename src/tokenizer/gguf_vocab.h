// Tokenizers in GGUF files. Reading: the Hugging Face tokenizer.json stored under
// tokenizer.huggingface.json when present (gpstream writes it), else one rebuilt from llama.cpp's
// tokenizer.ggml.* keys for byte-level BPE vocabularies (model "gpt2": tokens, token_type, merges, and the
// pre-tokenizer named by tokenizer.ggml.pre: qwen2, llama-bpe / llama3, gpt-2 / default). SentencePiece
// vocabularies (model "llama") are refused with a clear error. Writing: the tokenizer.ggml.* keys llama.cpp
// needs for a byte-level BPE tokenizer.json, plus the tokenizer.json itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace gpstream::tokenizer {

// Metadata key holding tokenizer_config.json's text (gpstream's own; llama.cpp ignores it).
inline constexpr const char* kGgufTokenizerConfigKey = "gpstream.tokenizer_config_json";

// tokenizer.json text for the GGUF's tokenizer (NotFound when the file has none).
Result<std::string> tokenizer_json_from_gguf(const io::GgufMetadata& m);
Result<Tokenizer> tokenizer_from_gguf(const io::GgufMetadata& m, const std::string& where);
// Reads the metadata of a .gguf file and builds its tokenizer.
Result<Tokenizer> load_gguf_tokenizer(const std::string& path);

// Adds tokenizer.ggml.* (n_vocab tokens, ids past the tokenizer's padded with "[PAD<id>]" as llama.cpp's
// converter does), tokenizer.huggingface.json and, if given, tokenizer_config.json's text. bos / eos: the
// model's ids, or nullopt.
Status add_tokenizer_to_gguf(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                             int n_vocab, std::optional<int> bos, std::optional<int> eos,
                             io::GgufMetadata& m);

}  // namespace gpstream::tokenizer
