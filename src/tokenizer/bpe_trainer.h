// Byte-level BPE trainer: learns merges from text (words counted after a byte-level pre-tokenizer) and
// writes a Hugging Face tokenizer.json (+ tokenizer_config.json) that the `tokenizers` library loads and
// encodes exactly as gpstream does. Incremental pair counting: each merge only revisits the words that
// contain the merged pair (a lazy max-heap of pair counts), never a full recount.
// Ties between equally frequent pairs go to the smaller (left id, right id), so training is deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_sections.h"
#include "tokenizer/pre_tokenizer.h"
#include "util/error.h"

namespace gpstream::tokenizer {

enum class TrainerPreTokenizer {
  Gpt2,    // ByteLevel with the GPT-2 regex
  Llama3,  // Split with the Llama-3 regex (digits in groups of up to 3), then ByteLevel
  Qwen2,   // Split with the Qwen2 regex (single digits), then ByteLevel
};

Result<TrainerPreTokenizer> parse_trainer_pre_tokenizer(std::string_view name);

struct BpeTrainerOptions {
  size_t vocab_size = 8000;                 // including special tokens and the 256 byte symbols
  uint64_t min_frequency = 2;               // a pair seen fewer times is never merged
  std::vector<std::string> special_tokens;  // ids 0.. in this order
  TrainerPreTokenizer pre_tokenizer = TrainerPreTokenizer::Llama3;
  bool nfc = true;  // NFC normalizer
  // tokenizer_config.json fields (must be among special_tokens, or empty).
  std::string bos_token, eos_token, pad_token;
};

class BpeTrainer {
 public:
  explicit BpeTrainer(BpeTrainerOptions options);

  // Adds one text (a line) to the word counts.
  void add_text(std::string_view text);
  // Adds a file: .tsv files contribute every tab-separated column of every line, others every line.
  Status add_file(const std::string& path);

  struct Stats {
    size_t words = 0, unique_words = 0, merges = 0;
  };
  // Learns the merges; returns tokenizer.json as a JSON document.
  Result<Json> train(Stats* stats = nullptr);
  // tokenizer_config.json for the options.
  Json config_json() const;
  // Writes tokenizer.json and tokenizer_config.json into `dir` (created if missing).
  static Status write(const std::string& dir, const Json& tokenizer, const Json& config);

 private:
  BpeTrainerOptions opt_;
  Json pre_tokenizer_json_;
  PreTokenizer pre_;
  std::unordered_map<std::string, uint64_t> word_counts_;
  size_t words_ = 0;
};

}  // namespace gpstream::tokenizer
