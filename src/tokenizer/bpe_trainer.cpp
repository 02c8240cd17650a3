#include "tokenizer/bpe_trainer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <queue>

#include "tokenizer/bpe_model.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

namespace {
Json byte_level(bool use_regex) {
  return Json{
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", use_regex}};
}

Json pre_tokenizer_json(TrainerPreTokenizer p) {
  if (p == TrainerPreTokenizer::Gpt2) return byte_level(true);
  Json split = {{"type", "Split"},
                {"pattern", {{"Regex", p == TrainerPreTokenizer::Llama3 ? kLlama3Regex : kQwen2Regex}}},
                {"behavior", "Isolated"},
                {"invert", false}};
  return Json{{"type", "Sequence"}, {"pretokenizers", Json::array({split, byte_level(false)})}};
}

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
}
}  // namespace

Result<TrainerPreTokenizer> parse_trainer_pre_tokenizer(std::string_view name) {
  if (name == "gpt2") return TrainerPreTokenizer::Gpt2;
  if (name == "llama3") return TrainerPreTokenizer::Llama3;
  if (name == "qwen2") return TrainerPreTokenizer::Qwen2;
  return invalid_argument("unknown pre-tokenizer \"" + std::string(name) + "\" (gpt2, llama3, qwen2)");
}

BpeTrainer::BpeTrainer(BpeTrainerOptions options)
    : opt_(std::move(options)), pre_tokenizer_json_(pre_tokenizer_json(opt_.pre_tokenizer)) {
  auto p = PreTokenizer::from_json(pre_tokenizer_json_, "pre_tokenizer");
  GPS_ASSERT(p.ok(), "built-in pre-tokenizer must parse");
  pre_ = std::move(p).value();
}

void BpeTrainer::add_text(std::string_view text) {
  thread_local std::vector<Piece> pieces;
  std::string s = sanitize_utf8(text);
  if (opt_.nfc) s = unicode_nfc(s);
  if (s.empty()) return;
  pieces.clear();
  pieces.push_back({std::move(s), true});
  pre_.apply(pieces, true);
  for (auto& piece : pieces) {
    ++word_counts_[piece.text];
    ++words_;
  }
}

Status BpeTrainer::add_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return io_error("cannot open " + path);
  bool tsv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".tsv") == 0;
  std::string content;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) content.append(buf, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) return io_error("cannot read " + path);
  std::string_view all = content;
  for (size_t start = 0; start < all.size();) {
    size_t nl = all.find('\n', start);
    if (nl == std::string_view::npos) nl = all.size();
    std::string_view line = all.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (tsv) {
      for (size_t b = 0;;) {
        size_t tab = line.find('\t', b);
        add_text(line.substr(b, tab == std::string_view::npos ? std::string_view::npos : tab - b));
        if (tab == std::string_view::npos) break;
        b = tab + 1;
      }
    } else {
      add_text(line);
    }
    start = nl + 1;
  }
  return {};
}

namespace {
struct HeapEntry {
  int64_t count;
  uint64_t key;
  // Max-heap on count; among equal counts the smaller (left, right) pair comes first.
  bool operator<(const HeapEntry& o) const { return count != o.count ? count < o.count : key > o.key; }
};
}  // namespace

Result<Json> BpeTrainer::train(Stats* stats) {
  size_t n_special = opt_.special_tokens.size();
  if (opt_.vocab_size < n_special + 256) {
    return invalid_argument("vocab size " + std::to_string(opt_.vocab_size) + " is below the " +
                            std::to_string(n_special + 256) + " special and byte symbols");
  }
  for (const auto& t : {opt_.bos_token, opt_.eos_token, opt_.pad_token}) {
    if (!t.empty() &&
        std::find(opt_.special_tokens.begin(), opt_.special_tokens.end(), t) == opt_.special_tokens.end()) {
      return invalid_argument("\"" + t + "\" is not among the special tokens");
    }
  }
  std::vector<std::string> symbols;  // id -> token (byte-level alphabet)
  for (const auto& t : opt_.special_tokens) {
    if (t.empty() || !is_valid_utf8(t)) return invalid_argument("special tokens must be non-empty UTF-8");
    if (std::find(symbols.begin(), symbols.end(), t) != symbols.end())
      return invalid_argument("duplicate special token " + t);
    symbols.push_back(t);
  }
  std::vector<int32_t> byte_id(256);
  for (int b = 0; b < 256; ++b) {
    byte_id[b] = static_cast<int32_t>(symbols.size());
    symbols.push_back(byte_char_utf8(static_cast<uint8_t>(b)));
  }

  // Words as symbol sequences, in a deterministic order.
  std::vector<std::pair<std::string, uint64_t>> sorted(word_counts_.begin(), word_counts_.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::vector<int32_t>> words(sorted.size());
  std::vector<int64_t> counts(sorted.size());
  for (size_t w = 0; w < sorted.size(); ++w) {
    const std::string& text = sorted[w].first;
    for (size_t i = 0; i < text.size();) {
      int b = char_to_byte(next_code_point(text, i));
      GPS_ASSERT(b >= 0, "pre-tokenized words are byte-level");
      words[w].push_back(byte_id[b]);
    }
    counts[w] = static_cast<int64_t>(sorted[w].second);
  }
  sorted.clear();

  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<int32_t>> where;
  pair_count.reserve(1 << 20);
  where.reserve(1 << 20);
  for (size_t w = 0; w < words.size(); ++w) {
    const auto& ws = words[w];
    for (size_t i = 0; i + 1 < ws.size(); ++i) {
      uint64_t k = pair_key(ws[i], ws[i + 1]);
      pair_count[k] += counts[w];
      auto& list = where[k];
      if (list.empty() || list.back() != static_cast<int32_t>(w)) list.push_back(static_cast<int32_t>(w));
    }
  }
  std::priority_queue<HeapEntry> heap;
  for (const auto& [k, c] : pair_count) heap.push({c, k});

  Json merges = Json::array();
  std::vector<uint64_t> touched;
  while (symbols.size() < opt_.vocab_size && !heap.empty()) {
    HeapEntry top = heap.top();
    heap.pop();
    auto pc = pair_count.find(top.key);
    int64_t current = pc == pair_count.end() ? 0 : pc->second;
    if (current != top.count) {
      if (current > 0) heap.push({current, top.key});
      continue;
    }
    if (current < static_cast<int64_t>(std::max<uint64_t>(opt_.min_frequency, 1))) break;
    auto a = static_cast<int32_t>(top.key >> 32), b = static_cast<int32_t>(top.key & 0xffffffffu);
    auto c = static_cast<int32_t>(symbols.size());
    symbols.push_back(symbols[a] + symbols[b]);
    merges.push_back(Json::array({symbols[a], symbols[b]}));

    std::vector<int32_t> affected = std::move(where[top.key]);
    where.erase(top.key);
    pair_count.erase(top.key);
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    touched.clear();
    auto change = [&](int32_t x, int32_t y, int64_t delta, int32_t w) {
      uint64_t k = pair_key(x, y);
      if (k == top.key) return;  // the merged pair itself is gone
      int64_t& v = pair_count[k];
      v += delta;
      if (delta > 0) {
        auto& list = where[k];
        if (list.empty() || list.back() != w) list.push_back(w);
        touched.push_back(k);
      }
    };
    for (int32_t w : affected) {
      auto& s = words[w];
      int64_t cnt = counts[w];
      size_t out = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          if (out > 0) {
            change(s[out - 1], a, -cnt, w);
            change(s[out - 1], c, cnt, w);
          }
          if (i + 2 < s.size()) {
            change(b, s[i + 2], -cnt, w);
            change(c, s[i + 2], cnt, w);
          }
          s[out++] = c;
          ++i;
        } else {
          s[out++] = s[i];
        }
      }
      s.resize(out);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (uint64_t k : touched) {
      auto it = pair_count.find(k);
      if (it != pair_count.end() && it->second > 0) heap.push({it->second, k});
    }
  }

  Json vocab = Json::object();
  for (size_t i = 0; i < symbols.size(); ++i) vocab[symbols[i]] = static_cast<int64_t>(i);
  Json added = Json::array();
  for (size_t i = 0; i < n_special; ++i) {
    added.push_back({{"id", static_cast<int64_t>(i)},
                     {"content", opt_.special_tokens[i]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  Json t = Json::object();
  t["version"] = "1.0";
  t["truncation"] = nullptr;
  t["padding"] = nullptr;
  t["added_tokens"] = added;
  t["normalizer"] = opt_.nfc ? Json{{"type", "NFC"}} : Json(nullptr);
  t["pre_tokenizer"] = pre_tokenizer_json_;
  t["post_processor"] = byte_level(false);
  t["decoder"] = byte_level(false);
  t["model"] = byte_level_bpe_model_json(std::move(vocab), merges);
  if (stats) {
    stats->words = words_;
    stats->unique_words = words.size();
    stats->merges = merges.size();
  }
  return t;
}

Json BpeTrainer::config_json() const {
  Json c = Json::object();
  c["tokenizer_class"] = "PreTrainedTokenizerFast";
  c["clean_up_tokenization_spaces"] = false;
  c["bos_token"] = opt_.bos_token.empty() ? Json(nullptr) : Json(opt_.bos_token);
  c["eos_token"] = opt_.eos_token.empty() ? Json(nullptr) : Json(opt_.eos_token);
  c["pad_token"] = opt_.pad_token.empty() ? Json(nullptr) : Json(opt_.pad_token);
  return c;
}

Status BpeTrainer::write(const std::string& dir, const Json& tokenizer, const Json& config) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  for (const auto& [name, doc] : {std::pair<const char*, const Json*>{"tokenizer.json", &tokenizer},
                                  {"tokenizer_config.json", &config}}) {
    std::string path = (fs::path(dir) / name).string(), tmp = path + ".tmp";
    std::string text = doc->dump(-1, ' ', false, Json::error_handler_t::strict) + "\n";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return io_error("cannot write " + tmp);
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok) return io_error("cannot write " + tmp);
    fs::rename(tmp, path, ec);
    if (ec) return io_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
  return {};
}

}  // namespace gpstream::tokenizer
