// The BPE model of tokenizer.json ("model": {"type": "BPE", ...}): vocabulary, ranked merges (both the
// "a b" string form and the ["a", "b"] pair form), byte_fallback (<0xXX> tokens), unk_token with fuse_unk,
// ignore_merges, continuing_subword_prefix and end_of_word_suffix. Encodes one pre-token by applying
// merges lowest rank first (leftmost on ties) with a priority queue, like Hugging Face tokenizers; results
// for short pre-tokens are cached. Dropout is not supported (it makes encoding random).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/json_sections.h"
#include "util/error.h"

namespace gpstream::tokenizer {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// Open-addressing map (a, b) -> (rank, merged id).
class MergeMap {
 public:
  struct Value {
    int32_t rank;
    int32_t id;
  };
  void reserve(size_t n);
  void insert(int32_t a, int32_t b, Value v);
  const Value* find(int32_t a, int32_t b) const;
  size_t size() const { return size_; }

 private:
  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
  }
  std::vector<uint64_t> keys_;
  std::vector<Value> values_;
  size_t mask_ = 0, size_ = 0;
};

struct BpeConfig {
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

// The tokenizer.json "model" object of a byte-level BPE as gpstream writes it (no unk_token, dropout, word
// affixes or byte_fallback): `vocab` (token -> id) and `merges`. J is the writer's JSON type: nlohmann::json
// sorts the keys, ordered_json keeps them in this order, so each writer's file keeps its bytes.
template <class J, class Merges>
J byte_level_bpe_model_json(J vocab, const Merges& merges) {
  return J{{"type", "BPE"},
           {"dropout", nullptr},
           {"unk_token", nullptr},
           {"continuing_subword_prefix", nullptr},
           {"end_of_word_suffix", nullptr},
           {"fuse_unk", false},
           {"byte_fallback", false},
           {"ignore_merges", false},
           {"vocab", std::move(vocab)},
           {"merges", merges}};
}

class BpeModel {
 public:
  // Maximum token id accepted in a vocabulary (bounds memory for hostile files).
  static constexpr int64_t kMaxId = int64_t{1} << 24;
  // The id → token table spans every id up to the largest: at most this many of its slots may be ids that
  // no token has (real vocabularies have none), so its size follows the entries in the file, not one id.
  static constexpr int64_t kMaxUnusedIds = int64_t{1} << 16;

  // `vocab` and `merges`, if given, replace model.vocab / model.merges when those are null (the fast
  // loader of json_loader.h parses them apart); they are consumed.
  using Merges = std::vector<std::pair<std::string, std::string>>;
  static Result<BpeModel> from_json(const Json& model, const std::string& where, Vocab* vocab = nullptr,
                                    Merges* merges = nullptr);
  // vocab: token -> id (unique ids); merges: ranked pairs.
  static Result<BpeModel> create(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                                 BpeConfig config);

  BpeModel() = default;
  BpeModel(BpeModel&&) noexcept;
  BpeModel& operator=(BpeModel&&) noexcept;

  // Appends the ids of one pre-token.
  void encode(std::string_view word, std::vector<int32_t>& out) const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  // nullptr for an id with no token.
  const std::string* id_to_token(int32_t id) const;
  // One past the largest id.
  int32_t id_limit() const { return static_cast<int32_t>(tokens_.size()); }
  size_t vocab_entries() const { return vocab_.size(); }
  const BpeConfig& config() const { return config_; }
  const Vocab& vocab() const { return vocab_; }

 private:
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;
  int32_t lookup_char(std::string_view ch, bool first, bool last) const;

  Vocab vocab_;
  std::vector<std::string> tokens_;
  std::vector<uint8_t> has_token_;
  MergeMap merges_;
  BpeConfig config_;
  std::optional<int32_t> unk_id_;
  std::vector<int32_t> byte_ids_;  // <0xXX> tokens when byte_fallback (all 256 present), else empty
  std::vector<int32_t> bmp_ids_;   // code point < 0x10000 -> id of the one-char token, or -1
  bool plain_chars_ = true;        // no prefix/suffix: single chars can use bmp_ids_

  struct Cache {
    std::mutex mu;
    std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> map;
  };
  std::unique_ptr<Cache> cache_ = std::make_unique<Cache>();
};

}  // namespace gpstream::tokenizer
