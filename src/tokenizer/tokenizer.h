// Tokenizer: a Hugging Face tokenizer.json (BPE model; byte-level or SentencePiece-style) loaded into
// gpstream, encoding and decoding exactly as the `tokenizers` library does (tested to the id against it).
// Pipeline: repair invalid UTF-8 (U+FFFD per maximal ill-formed subpart, as a WHATWG decoder does) →
// added/special tokens → normalizer → pre-tokenizer → BPE → post-processor (only with add_special).
// Thread-safe for concurrent encode/decode. Per-segment encoding (gpe.md §2) is segment_encoder.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"
#include "util/error.h"

namespace gpstream::tokenizer {

enum class TokenizerStyle {
  ByteLevel,      // GPT-2 byte alphabet: a word's leading space is part of its first token ('Ġ')
  SentencePiece,  // '▁' for spaces (Prepend/Replace normalizers or a Metaspace pre-tokenizer)
  Other,
};

struct EncodeOptions {
  bool add_special = false;  // run the post-processor (BOS/EOS)
  bool prefix = true;        // apply prefix rules (Prepend, Metaspace prepend, ByteLevel add_prefix_space)
};

class Tokenizer {
 public:
  // `path`: a tokenizer.json file, a directory holding one (and optionally tokenizer_config.json), or a
  // .gguf file (gguf_vocab.h).
  static Result<Tokenizer> load(const std::string& path);
  // Parses tokenizer.json text; `config_json` (tokenizer_config.json text) may be empty.
  static Result<Tokenizer> from_json_text(std::string_view json, std::string_view config_json = {},
                                          const std::string& where = "tokenizer.json");

  Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int32_t> encode(std::string_view text, bool add_special = false) const;
  // Appends the ids of `text` to `out`.
  void encode(std::string_view text, const EncodeOptions& options, std::vector<int32_t>& out) const;
  // Unknown ids are skipped (as Hugging Face does); skip_special drops special tokens.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // One past the largest id of the model and the added tokens.
  int32_t vocab_size() const { return vocab_size_; }
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int32_t id) const;
  bool is_special(int32_t id) const;
  bool is_added(int32_t id) const;
  std::optional<int32_t> bos_id() const { return bos_id_; }
  std::optional<int32_t> eos_id() const { return eos_id_; }
  TokenizerStyle style() const { return style_; }
  const std::vector<int32_t>& special_prefix() const { return post_.prefix; }
  const std::vector<int32_t>& special_suffix() const { return post_.suffix; }

  // Streaming: the bytes token `id` adds to the decoded text (`first`: at the start of a stream, where
  // decoders strip a leading space). False if the id is unknown or the decoder cannot work token by token.
  bool token_bytes(int32_t id, bool first, std::string& out) const;
  // False if the decoder cannot decode token by token (see Decoder::token_bytes).
  bool incremental_decoding() const { return incremental_decoding_; }
  // True if the token's text begins with whitespace (' ', '▁', byte-level 'Ġ'/'Ċ'/'ĉ', <0x20>...).
  bool starts_word(int32_t id) const;

  const BpeModel& model() const { return model_; }

 private:
  Status load_config(std::string_view config_json);

  BpeModel model_;
  AddedVocabulary added_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Decoder> decoder_;
  PostProcessor post_;
  std::vector<int32_t> added_index_;  // id -> index into added_.tokens(), or -1 (size vocab_size_)
  Vocab added_by_content_;
  int32_t vocab_size_ = 0;
  std::optional<int32_t> bos_id_, eos_id_;
  TokenizerStyle style_ = TokenizerStyle::Other;
  bool incremental_decoding_ = true;
};

}  // namespace gpstream::tokenizer
