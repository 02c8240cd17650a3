#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

namespace {
constexpr uint64_t kEmpty = ~uint64_t{0};
constexpr size_t kCacheMaxKey = 128;          // bytes; longer pre-tokens are not cached
constexpr size_t kCacheMaxEntries = 1 << 17;  // then the cache starts over

uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}
}  // namespace

void MergeMap::reserve(size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  keys_.assign(cap, kEmpty);
  values_.assign(cap, Value{0, 0});
  mask_ = cap - 1;
  size_ = 0;
}

void MergeMap::insert(int32_t a, int32_t b, Value v) {
  if ((size_ + 1) * 2 > keys_.size()) {
    std::vector<uint64_t> old_keys = std::move(keys_);
    std::vector<Value> old_values = std::move(values_);
    reserve(std::max<size_t>(16, size_ * 2 + 2));
    for (size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != kEmpty) {
        insert(static_cast<int32_t>(old_keys[i] >> 32), static_cast<int32_t>(old_keys[i] & 0xffffffffu),
               old_values[i]);
      }
    }
  }
  uint64_t k = key(a, b);
  for (size_t i = mix(k) & mask_;; i = (i + 1) & mask_) {
    if (keys_[i] == kEmpty) {
      keys_[i] = k;
      values_[i] = v;
      ++size_;
      return;
    }
    if (keys_[i] == k) {
      values_[i] = v;  // a repeated merge keeps its last rank, as a hash map insert would
      return;
    }
  }
}

const MergeMap::Value* MergeMap::find(int32_t a, int32_t b) const {
  if (keys_.empty()) return nullptr;
  uint64_t k = key(a, b);
  for (size_t i = mix(k) & mask_;; i = (i + 1) & mask_) {
    if (keys_[i] == k) return &values_[i];
    if (keys_[i] == kEmpty) return nullptr;
  }
}

BpeModel::BpeModel(BpeModel&&) noexcept = default;
BpeModel& BpeModel::operator=(BpeModel&&) noexcept = default;

Result<BpeModel> BpeModel::from_json(const Json& m, const std::string& where, Vocab* pre_vocab,
                                     Merges* pre_merges) {
  // A Hugging Face section: keys gpstream does not read are skipped.
  GPS_ASSIGN(JsonReader r, JsonValue(m, "", where).object(UnknownKeys::Ignore));
  std::string type = "BPE";
  GPS_TRY(r.optional("type", type));
  if (type != "BPE") return unsupported(where + ": unsupported model type \"" + type + "\" (only BPE)");
  if (auto dropout = r.find("dropout")) {
    GPS_ASSIGN(double p, dropout->number(0, 1));
    if (p != 0.0) return unsupported(where + ".dropout: BPE dropout is not supported");
  }
  BpeConfig c;
  if (auto unk = r.find("unk_token")) {
    GPS_ASSIGN(c.unk_token, unk->string());
  }
  GPS_TRY(r.optional("fuse_unk", c.fuse_unk));
  GPS_TRY(r.optional("byte_fallback", c.byte_fallback));
  GPS_TRY(r.optional("ignore_merges", c.ignore_merges));
  GPS_TRY(r.optional("continuing_subword_prefix", c.continuing_subword_prefix));
  GPS_TRY(r.optional("end_of_word_suffix", c.end_of_word_suffix));

  // vocab and merges may have been read by the SAX pass already (json_loader.h), which leaves null here.
  auto vj = r.find("vocab");
  Vocab vocab;
  if (!vj && pre_vocab) {
    vocab = std::move(*pre_vocab);
  } else {
    if (!vj) return format_error("missing field '" + r.key_path("vocab") + "'");
    if (!vj->json().is_object())
      return vj->error(std::string("must be an object, got ") + vj->json().type_name());
    vocab.reserve(vj->json().size());
    for (auto it = vj->json().begin(); it != vj->json().end(); ++it) {
      const JsonValue entry(it.value(), "", where + ".vocab[\"" + it.key() + "\"]");
      GPS_ASSIGN(int32_t id, entry.integer<int32_t>(0, kMaxId - 1));
      vocab.emplace(it.key(), id);
    }
  }

  auto merges_value = r.find("merges");
  if (!merges_value && !pre_merges) return format_error("missing field '" + r.key_path("merges") + "'");
  const Json empty_list = Json::array();
  const Json* mj = merges_value ? &merges_value->json() : &empty_list;
  Merges merges;
  if (!merges_value) {
    merges = std::move(*pre_merges);
  } else if (!mj->is_array()) {
    return merges_value->error(std::string("must be a list, got ") + mj->type_name());
  }
  for (size_t i = 0; mj->is_array() && i < mj->size(); ++i) {
    const Json& e = (*mj)[i];
    std::string at = where + ".merges[" + std::to_string(i) + "]";
    if (e.is_string()) {
      const std::string& s = e.get_ref<const std::string&>();
      size_t sp = s.find(' ');
      if (sp == std::string::npos || sp == 0 || sp + 1 == s.size()) {
        return format_error(at + ": expected \"left right\", got \"" + s + "\"");
      }
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    } else {
      return format_error(at + ": expected \"left right\" or [\"left\", \"right\"], got " +
                          e.dump().substr(0, 80));
    }
  }
  auto model = create(std::move(vocab), merges, std::move(c));
  if (!model.ok()) return model.error().with_context(where);
  return model;
}

Result<BpeModel> BpeModel::create(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                                  BpeConfig config) {
  BpeModel b;
  b.config_ = std::move(config);
  int64_t max_id = -1;
  const std::string* max_tok = nullptr;
  for (const auto& [tok, id] : vocab) {
    if (id < 0 || id >= kMaxId)
      return out_of_range("vocab: id " + std::to_string(id) + " of \"" + tok + "\" out of range");
    if (id > max_id) {
      max_id = id;
      max_tok = &tok;
    }
  }
  // The table below spans ids 0..max_id: bound it by the entries, not by the largest id alone.
  const int64_t unused = max_id + 1 - static_cast<int64_t>(vocab.size());
  if (unused > kMaxUnusedIds)
    return out_of_range("vocab: id " + std::to_string(max_id) + " of \"" + *max_tok + "\" leaves " +
                        std::to_string(unused) + " of the ids below it without a token (at most " +
                        std::to_string(kMaxUnusedIds) + " may be; " + std::to_string(vocab.size()) +
                        " entries)");
  b.tokens_.assign(static_cast<size_t>(max_id + 1), std::string());
  b.has_token_.assign(static_cast<size_t>(max_id + 1), 0);
  for (const auto& [tok, id] : vocab) {
    if (b.has_token_[id]) {
      return format_error("vocab: id " + std::to_string(id) + " is given to both \"" + b.tokens_[id] +
                          "\" and \"" + tok + "\"");
    }
    b.tokens_[id] = tok;
    b.has_token_[id] = 1;
  }
  b.vocab_ = std::move(vocab);

  b.merges_.reserve(merges.size());
  size_t prefix_len = b.config_.continuing_subword_prefix.size();
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [l, r] = merges[rank];
    std::string at = "merges[" + std::to_string(rank) + "]";
    auto li = b.vocab_.find(l);
    if (li == b.vocab_.end()) return format_error(at + ": token \"" + l + "\" is not in the vocabulary");
    auto ri = b.vocab_.find(r);
    if (ri == b.vocab_.end()) return format_error(at + ": token \"" + r + "\" is not in the vocabulary");
    std::string merged = l;
    if (prefix_len && r.compare(0, prefix_len, b.config_.continuing_subword_prefix) == 0) {
      merged.append(r, prefix_len, std::string::npos);
    } else {
      merged += r;
    }
    auto mi = b.vocab_.find(merged);
    if (mi == b.vocab_.end())
      return format_error(at + ": merged token \"" + merged + "\" is not in the vocabulary");
    b.merges_.insert(li->second, ri->second, {static_cast<int32_t>(rank), mi->second});
  }

  if (b.config_.unk_token) {
    auto u = b.vocab_.find(*b.config_.unk_token);
    if (u == b.vocab_.end())
      return format_error("unk_token \"" + *b.config_.unk_token + "\" is not in the vocabulary");
    b.unk_id_ = u->second;
  }
  if (b.config_.byte_fallback) {
    std::vector<int32_t> ids(256, -1);
    for (int v = 0; v < 256; ++v) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", v);
      auto it = b.vocab_.find(std::string_view(name));
      if (it != b.vocab_.end()) ids[v] = it->second;
    }
    // Byte fallback of a char needs all of its bytes; missing entries stay -1.
    b.byte_ids_ = std::move(ids);
  }
  b.plain_chars_ = b.config_.continuing_subword_prefix.empty() && b.config_.end_of_word_suffix.empty();
  b.bmp_ids_.assign(0x10000, -1);
  for (const auto& [tok, id] : b.vocab_) {
    if (tok.empty() || tok.size() > 3) continue;
    if (valid_sequence_length(tok, 0) != tok.size()) continue;
    size_t i = 0;
    char32_t cp = next_code_point(tok, i);
    if (cp < 0x10000) b.bmp_ids_[cp] = id;
  }
  return b;
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || id >= static_cast<int32_t>(tokens_.size()) || !has_token_[id]) return nullptr;
  return &tokens_[id];
}

int32_t BpeModel::lookup_char(std::string_view ch, bool first, bool last) const {
  if (plain_chars_) {
    if (ch.size() <= 3) {
      size_t i = 0;
      char32_t cp = next_code_point(ch, i);
      if (cp < 0x10000) return bmp_ids_[cp];
    }
    auto it = vocab_.find(ch);
    return it == vocab_.end() ? -1 : it->second;
  }
  std::string s;
  if (!first) s += config_.continuing_subword_prefix;
  s += ch;
  if (last) s += config_.end_of_word_suffix;
  auto it = vocab_.find(s);
  return it == vocab_.end() ? -1 : it->second;
}

namespace {
struct Symbol {
  int32_t id;
  int32_t prev, next;
  bool alive;
};
struct Candidate {
  int32_t rank;
  int32_t pos;
  int32_t id;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};
}  // namespace

void BpeModel::merge_word(std::string_view w, std::vector<int32_t>& out) const {
  thread_local std::vector<Symbol> syms;
  thread_local std::vector<Candidate> heap_storage;
  syms.clear();
  auto add = [&](int32_t id) {
    int32_t n = static_cast<int32_t>(syms.size());
    syms.push_back({id, n - 1, -1, true});
    if (n > 0) syms[n - 1].next = n;
  };
  int32_t pending_unk = -1;  // an unk token not yet added (fuse_unk grows it)
  for (size_t i = 0; i < w.size();) {
    size_t b = i;
    next_code_point(w, i);
    std::string_view ch = w.substr(b, i - b);
    int32_t id = lookup_char(ch, b == 0, i >= w.size());
    if (id >= 0) {
      if (pending_unk >= 0) {
        add(pending_unk);
        pending_unk = -1;
      }
      add(id);
      continue;
    }
    if (config_.byte_fallback && !byte_ids_.empty()) {
      // Byte fallback covers the char as it would be looked up (with prefix/suffix if any).
      std::string full;
      if (!plain_chars_) {
        if (b != 0) full += config_.continuing_subword_prefix;
        full += ch;
        if (i >= w.size()) full += config_.end_of_word_suffix;
      } else {
        full = ch;
      }
      bool all = true;
      for (char c : full) all = all && byte_ids_[static_cast<uint8_t>(c)] >= 0;
      if (all) {
        // As in tokenizers, a pending unk is not flushed here, only by a vocabulary hit.
        for (char c : full) add(byte_ids_[static_cast<uint8_t>(c)]);
        continue;
      }
    }
    if (unk_id_) {
      if (pending_unk >= 0 && config_.fuse_unk) continue;
      if (pending_unk >= 0) add(pending_unk);
      pending_unk = *unk_id_;
    }
    // No unk token: the char is dropped, as Hugging Face tokenizers does.
  }
  if (pending_unk >= 0) add(pending_unk);

  if (syms.size() > 1) {
    heap_storage.clear();
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(std::greater<>{},
                                                                                std::move(heap_storage));
    for (size_t k = 0; k + 1 < syms.size(); ++k) {
      if (const auto* m = merges_.find(syms[k].id, syms[k + 1].id)) {
        heap.push({m->rank, static_cast<int32_t>(k), m->id});
      }
    }
    while (!heap.empty()) {
      Candidate top = heap.top();
      heap.pop();
      Symbol& s = syms[top.pos];
      if (!s.alive || s.next < 0) continue;
      Symbol& r = syms[s.next];
      const auto* m = merges_.find(s.id, r.id);
      if (!m || m->id != top.id) continue;
      s.id = top.id;
      r.alive = false;
      s.next = r.next;
      if (s.next >= 0) syms[s.next].prev = top.pos;
      if (s.prev >= 0) {
        if (const auto* pm = merges_.find(syms[s.prev].id, s.id)) heap.push({pm->rank, s.prev, pm->id});
      }
      if (s.next >= 0) {
        if (const auto* nm = merges_.find(s.id, syms[s.next].id)) heap.push({nm->rank, top.pos, nm->id});
      }
    }
  }
  for (int32_t k = syms.empty() ? -1 : 0; k >= 0; k = syms[k].next) out.push_back(syms[k].id);
}

void BpeModel::encode(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (config_.ignore_merges) {
    auto it = vocab_.find(word);
    if (it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  bool cacheable = word.size() <= kCacheMaxKey;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mu);
    auto it = cache_->map.find(word);
    if (it != cache_->map.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  size_t start = out.size();
  merge_word(word, out);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mu);
    if (cache_->map.size() >= kCacheMaxEntries) cache_->map.clear();
    cache_->map.emplace(std::string(word),
                        std::vector<int32_t>(out.begin() + static_cast<ptrdiff_t>(start), out.end()));
  }
}

}  // namespace gpstream::tokenizer
